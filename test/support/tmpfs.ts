// A small tmpfs of the test's own (needs root: `mount -t tmpfs`), for tests that fill a disk:
// fill() writes a filler file until the device refuses (ENOSPC), free() removes it.
import { closeSync, mkdirSync, openSync, rmSync, statfsSync, writeSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./main-process";

export interface Tmpfs {
  dir: string;
  /** Fills the device to the last byte a write can take. */
  fill(): void;
  /** Removes the filler: the space is back. */
  free(): void;
  freeBytes(): number;
  unmount(): Promise<void>;
}

/** True when this process may mount a tmpfs (root, and mount works here). */
export const canMountTmpfs: boolean = (() => {
  if (process.getuid?.() !== 0) return false;
  const dir = tempDir("tmpfs-probe");
  const ok = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir]).exitCode === 0;
  if (ok) Bun.spawnSync(["umount", dir]);
  rmSync(dir, { recursive: true, force: true });
  return ok;
})();

export function mountTmpfs(sizeMb: number): Tmpfs {
  const dir = tempDir("tmpfs");
  const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${sizeMb}m`, "tmpfs", dir]);
  if (mounted.exitCode !== 0) throw new Error(`mount -t tmpfs failed: ${mounted.stderr.toString()}`);
  const filler = join(dir, "filler");
  let fillers = 0;
  return {
    dir,
    fill() {
      // Each fill a file of its own: the first may already hold what an earlier fill wrote.
      const fd = openSync(`${filler}.${fillers++}`, "w");
      try {
        for (const size of [1 << 20, 1 << 16, 1 << 12, 512, 1]) {
          const chunk = Buffer.alloc(size, 120);
          for (;;) {
            try {
              writeSync(fd, chunk);
            } catch (err) {
              if ((err as NodeJS.ErrnoException).code === "ENOSPC") break;
              throw err;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    free() {
      for (let i = 0; i < fillers; i++) rmSync(`${filler}.${i}`, { force: true });
      fillers = 0;
    },
    freeBytes() {
      const s = statfsSync(dir);
      return Number(s.bavail) * Number(s.bsize);
    },
    async unmount() {
      // Lazy: a process that had files open there may still be exiting.
      Bun.spawnSync(["umount", "-l", dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A directory on the tmpfs. */
export function under(fs: Tmpfs, name: string): string {
  const d = join(fs.dir, name);
  mkdirSync(d, { recursive: true });
  return d;
}
