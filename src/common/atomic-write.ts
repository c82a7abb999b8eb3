// Whole-or-nothing file writes: readers see the old content or the new, never a torn file
// (DESIGN: "Nothing is half-written").
import { randomBytes } from "node:crypto";
import { rename, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** Temp files start with "." and end with ".tmp" so directory scans can skip them. */
export const isTempFileName = (name: string): boolean => name.startsWith(".") && name.endsWith(".tmp");

/**
 * Writes `data` to a temp file beside `path`, then renames it over `path`. The temp file must
 * share the directory: rename is only atomic within one filesystem. No fsync: we guard against
 * torn files from crashes of this process, not against power loss.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(temp, data);
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => {});
    throw err;
  }
}
