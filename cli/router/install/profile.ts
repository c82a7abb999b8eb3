// The packaged profile (spec: install step "link the packaged profile"): CLAUDE.md and a
// settings.json for Claude Code, written under ~/.router/profiles/<profile>/ and linked as
// ~/.claude/profiles/<name>. Uninstall removes the link only.
import { lstat, mkdir, readlink, rm, symlink } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../../src/common/atomic-write";
import claudeMd from "../profile/CLAUDE.md" with { type: "text" };
import settings from "../profile/settings.json" with { type: "json" };

export const PROFILES = ["default"] as const;
export const TARGETS = ["claude"] as const;

export const profileDir = (home: string, profile: string) => join(home, ".router", "profiles", profile);
export const linkPath = (home: string, name: string) => join(home, ".claude", "profiles", name);

export async function writeProfile(home: string, profile: string): Promise<boolean> {
  const dir = profileDir(home, profile);
  const files: Record<string, string> = { "CLAUDE.md": claudeMd, "settings.json": `${JSON.stringify(settings, null, 2)}\n` };
  let changed = false;
  await mkdir(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    const current = await Bun.file(join(dir, name))
      .text()
      .catch(() => null);
    if (current === null) {
      await writeFileAtomic(join(dir, name), text);
      changed = true;
    }
  }
  return changed;
}

/** Links the profile; returns false when the link already points there. */
export async function linkProfile(home: string, profile: string, name: string): Promise<boolean> {
  const link = linkPath(home, name);
  const target = profileDir(home, profile);
  const current = await readlink(link).catch(() => null);
  if (current === target) return false;
  const exists = await lstat(link).then(
    () => true,
    () => false,
  );
  if (exists && current === null) throw new Error(`${link} exists and is not a link; move it away to link the profile`);
  await mkdir(join(home, ".claude", "profiles"), { recursive: true });
  if (exists) await rm(link);
  await symlink(target, link);
  return true;
}

export async function unlinkProfile(home: string, name: string): Promise<boolean> {
  const link = linkPath(home, name);
  const isLink = await lstat(link).then(
    (s) => s.isSymbolicLink(),
    () => false,
  );
  if (isLink) await rm(link);
  return isLink;
}
