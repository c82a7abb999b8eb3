// The profile's words where Claude Code reads them: a marked block in ~/.claude/CLAUDE.md (the
// user's memory file, loaded by every session) importing the packaged profile's CLAUDE.md.
// Install appends the block once; uninstall removes exactly that block, so the rest of the
// file stays byte for byte (and a file install created goes away again).
import { mkdir, readFile, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../../../src/common/atomic-write";

const OPEN = "<!-- brain-stack: added by router-cli install; router-cli uninstall removes it -->";
const CLOSE = "<!-- /brain-stack -->";

export const memoryPath = (home: string) => join(home, ".claude", "CLAUDE.md");
const block = (profileFile: string) => `\n${OPEN}\n@${profileFile}\n${CLOSE}\n`;

/** True when the block was added now. */
export async function installMemoryImport(home: string, profileFile: string): Promise<boolean> {
  const path = memoryPath(home);
  const text = await readFile(path, "utf8").catch(() => null);
  if (text?.includes(OPEN)) return false;
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, (text ?? "") + block(profileFile));
  return true;
}

/** True when a block was removed. */
export async function uninstallMemoryImport(home: string): Promise<boolean> {
  const path = memoryPath(home);
  const text = await readFile(path, "utf8").catch(() => null);
  if (text === null) return false;
  const start = text.indexOf(`\n${OPEN}\n`);
  if (start < 0) return false;
  const end = text.indexOf(`${CLOSE}\n`, start);
  if (end < 0) return false;
  const rest = text.slice(0, start) + text.slice(end + CLOSE.length + 1);
  if (rest === "") await rm(path, { force: true });
  else await writeFileAtomic(path, rest);
  return true;
}
