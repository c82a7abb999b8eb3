// Whole-or-nothing file writes: readers see the old content or the new, never a torn file
// (DESIGN: "Nothing is half-written").
import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { rename, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** Temp files start with "." and end with ".tmp" so directory scans can skip them. */
export const isTempFileName = (name: string): boolean => name.startsWith(".") && name.endsWith(".tmp");

/**
 * Writes `data` to a temp file beside `path`, then renames it over `path`. The temp file must
 * share the directory: rename is only atomic within one filesystem. No fsync: we guard against
 * torn files from crashes of this process, not against power loss. The file work runs on the
 * thread pool, so many writes at once (a batch of ingests) overlap this thread's other work.
 * With `mkdir`, a missing parent directory is created (then the write retried once).
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, opts: { mkdir?: boolean } = {}): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    try {
      await writeFile(temp, data);
    } catch (err) {
      if (!opts.mkdir || (err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      mkdirSync(dirname(path), { recursive: true });
      await writeFile(temp, data);
    }
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => {});
    throw err;
  }
}

let seq = 0;

/**
 * writeFileAtomic for the hot path of small files (an ingested note, a ledger entry): the same
 * temp-then-rename, done with synchronous calls — for a few KB, Bun's synchronous write and
 * rename cost a fraction of the thread-pool round trips of the promise API. The temp name
 * carries a per-process counter instead of random bytes (the pid keeps processes apart).
 * With `mkdir`, a missing parent directory is created (then the write retried once), so
 * callers need not stat or create directories they have written to before.
 */
export function writeFileAtomicSync(path: string, data: string | Uint8Array, opts: { mkdir?: boolean } = {}): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${(++seq).toString(16).padStart(12, "0")}.tmp`);
  try {
    try {
      writeNewFile(temp, data);
    } catch (err) {
      if (!opts.mkdir || (err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      mkdirSync(dirname(path), { recursive: true });
      writeNewFile(temp, data);
    }
    renameSync(temp, path);
  } catch (err) {
    try {
      unlinkSync(temp);
    } catch {}
    throw err;
  }
}

/**
 * The temp file's bytes: open, write, close. writeFileSync also truncates the file after
 * writing it (an ftruncate call, through ext4's inode lock), needless for a file just made.
 */
function writeNewFile(temp: string, data: string | Uint8Array): void {
  const bytes = typeof data === "string" ? Buffer.from(data) : data;
  const fd = openSync(temp, "w");
  try {
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off, off);
  } finally {
    closeSync(fd);
  }
}
