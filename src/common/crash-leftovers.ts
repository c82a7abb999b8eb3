// Start-up cleanup of what a crashed process of this host left behind under a root: temp files
// of atomic writes (`.<name>.<pid>.<hex>.tmp`, atomic-write.ts) and lock directories
// (`<path>.lock` with its `.owner`, file-lock.ts) and claims (`<path>.claim`, claim.ts) whose
// owning process is gone. Files of live processes (another service on the same vault) are left
// alone. Symlinks are not followed.
import { readdir, rm, unlink } from "node:fs/promises";
import { join } from "node:path";
import { isTempFileName } from "./atomic-write";
import { isClaimFileName, removeDeadClaim } from "./claim";
import { processAlive, removeDeadLock } from "./file-lock";
import { log } from "./logger";

const logger = log("cleanup");
const TEMP_PID = /\.(\d+)\.[0-9a-f]{12}\.tmp$/;

export interface Leftovers {
  tempFiles: number;
  locks: number;
}

export async function cleanCrashLeftovers(root: string, opts: { maxEntries?: number } = {}): Promise<Leftovers> {
  const out: Leftovers = { tempFiles: 0, locks: 0 };
  const budget = { left: opts.maxEntries ?? 200_000 };
  const stack = [root];
  while (stack.length > 0 && budget.left > 0) {
    const dir = stack.pop()!;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    budget.left -= entries.length;
    for (const e of entries) {
      const abs = join(dir, e.name);
      if (e.isSymbolicLink()) continue;
      if (e.isDirectory()) {
        if (e.name.endsWith(".lock")) {
          if (await removeDeadLock(abs)) out.locks++;
          continue;
        }
        if (e.name !== "node_modules" && e.name !== ".git") stack.push(abs);
        continue;
      }
      if (e.isFile() && isTempFileName(e.name)) {
        const pid = Number(TEMP_PID.exec(e.name)?.[1]);
        if (pid && pid !== process.pid && !processAlive(pid)) {
          await unlink(abs).catch(() => {});
          out.tempFiles++;
        }
      } else if (e.isFile() && isClaimFileName(e.name)) {
        if (removeDeadClaim(abs)) out.locks++;
      } else if (e.isFile() && e.name.endsWith(".lock.owner") && !entries.some((x) => x.name === e.name.slice(0, -".owner".length))) {
        await rm(abs, { force: true }).catch(() => {});
      }
    }
  }
  if (out.tempFiles + out.locks > 0) logger.info(`removed what a crashed process left under ${root}: ${out.tempFiles} temp file(s), ${out.locks} lock(s)`);
  return out;
}
