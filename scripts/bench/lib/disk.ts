// Scratch folders for the benches that create many files (ingest, search), away from the inodes that
// earlier runs freed, and a probe of what a file creation costs there.
//
// On this project's machine the disk is ext4 without a journal. Its inode allocator puts a new
// file in the first block group of its parent folder's flex group that has a free inode, and
// steps over every inode of that group freed in the last minute (six while the freed inodes'
// table blocks wait to be written back): `recently_deleted` in the kernel, a buffer lookup for
// each. Every folder under one parent shares that group, so after a test run or another bench
// deleted tens of thousands of files under $TMPDIR, each creation there cost 0.6–1 ms instead
// of ~50 µs for minutes, more than a whole ingest, and at random for one side of a comparison
// more than the other (whichever wrote more files in the slow seconds). Once a flex group has
// no free inode left, a folder's files go on in another group the allocator picks, which can
// be one a recent run emptied: so a bench keeps each scratch folder's files under one group's
// worth (131,072 inodes here; `ingest` gives each import round a folder of its own).
//
// ext4 places a folder whose parent is marked as a top of a hierarchy (`chattr +T`) in a flex
// group of its own choosing, spread like the root's folders: a lightly used one, so a bench's
// scratch folder starts in groups nobody deleted from. Elsewhere (another filesystem, no
// chattr) the mark is skipped and the probe says what creation costs.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Above this a small file's creation is the disk's state, not the code (quiet here: 30–70 µs). */
export const SLOW_DISK_MICROS = 90;

/**
 * A new scratch folder `<TMPDIR>/brain-bench/<prefix>XXXXXX`, in a spread flex group where ext4
 * allows it, and what a small file's creation costs in it (`fileCreationMicros`). The group is
 * chosen by a hash of the folder's name, so it can still be one that a recent run freed inodes
 * in (seen here: 117 µs a file there, 32–33 in the next two): then up to `tries` folders are
 * made, the slow ones removed, and the fastest kept.
 */
export function benchScratch(prefix: string, tries = 4): { dir: string; micros: number } {
  const parent = join(tmpdir(), "brain-bench");
  mkdirSync(parent, { recursive: true });
  // Best effort: not ext4, no chattr, or not allowed — the folder is made all the same.
  Bun.spawnSync({ cmd: ["chattr", "+T", parent], stdout: "ignore", stderr: "ignore" });
  let best: { dir: string; micros: number } | undefined;
  for (let i = 0; i < tries; i++) {
    const dir = mkdtempSync(join(parent, prefix));
    const micros = fileCreationMicros(dir);
    if (!best || micros < best.micros) {
      if (best) rmSync(best.dir, { recursive: true, force: true });
      best = { dir, micros };
    } else rmSync(dir, { recursive: true, force: true });
    if (best.micros <= SLOW_DISK_MICROS) break;
  }
  return best!;
}

/**
 * Microseconds a small file's creation costs in a new folder under `dir` (write a temp file,
 * rename it into place: what an ingest's note costs the disk), the median of `files`. The
 * files stay until the caller removes `dir`: removing them would free inodes the next
 * creations step over.
 */
export function fileCreationMicros(dir: string, files = 200): number {
  const probe = mkdtempSync(join(dir, "disk-probe-"));
  const times: number[] = [];
  const body = "x".repeat(600);
  for (let i = 0; i < files; i++) {
    const path = join(probe, `${i}.md`);
    const t0 = performance.now();
    writeFileSync(`${path}.tmp`, body);
    renameSync(`${path}.tmp`, path);
    times.push((performance.now() - t0) * 1000);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}
