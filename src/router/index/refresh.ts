// Incremental refresh of one vault folder (raw/ by default) into the index — spec: a tick
// "refreshes the index over the raw/ directory". Cheap when nothing changed: a file whose
// mtime matches the index is not even read; a changed mtime costs a read and a hash, and
// only a changed hash costs a re-index. Files gone from the folder leave the index.
import { type Dirent, readdirSync, statSync } from "node:fs";
import { join, sep } from "node:path";
import { linkStaysInVaultSync } from "../vault/contained.ts";
import { documentFromFile } from "./document.ts";
import type { IndexStore, Producer } from "./types.ts";

export interface RefreshOptions {
  /** The vault's root directory. */
  vault: string;
  /** Vault-relative folder to walk; default "raw". */
  folder?: string;
  /** Producer recorded for the folder's documents; default "raw". */
  producer?: Producer;
  /** Computes embeddings for changed documents (when the index has vectors). */
  embed?: (texts: string[]) => Promise<number[][]>;
  /**
   * Changed files read and upserted together, as one batch; default 256. SQLite commits a
   * batch as one transaction (its group commit), Postgres overlaps it on its pool; small
   * values make a full SQLite build much slower (a commit per few notes).
   */
  concurrency?: number;
  /**
   * Called with each file's text as it is read (changed files only), so a caller that also
   * needs the text (the tick's inline-marker harvest) need not read the file a second time.
   */
  onRead?: (file: { path: string; mtimeMs: number; size: number }, content: string) => void;
}

export interface RefreshCounts {
  added: number;
  updated: number;
  removed: number;
  unchanged: number;
  /** Files not indexed: larger than MAX_INDEXED_FILE_BYTES. */
  skipped: number;
}

/** What refresh indexes: markdown and plain text. */
const INDEXED = /\.(md|markdown|txt)$/i;
/** A first build of at least this many files runs as the store's bulk load. */
const BULK_LOAD_FILES = 1000;
/** Larger files are skipped: an index row is for reading, not for dumps. */
export const MAX_INDEXED_FILE_BYTES = 4 * 1024 * 1024;
/** A batch holds about this much text at most. */
const BATCH_BYTES = 32 * 1024 * 1024;

interface FileEntry {
  path: string;
  abs: string;
  mtimeMs: number;
  size: number;
}

export async function refreshFolder(store: IndexStore, opts: RefreshOptions): Promise<RefreshCounts> {
  const folder = opts.folder ?? "raw";
  const producer = opts.producer ?? "raw";
  const counts: RefreshCounts = { added: 0, updated: 0, removed: 0, unchanged: 0, skipped: 0 };
  const known = await store.fingerprints(producer);
  const changed: FileEntry[] = [];
  const seen = new Set<string>();

  for (const file of walk(opts.vault, folder, counts)) {
    seen.add(file.path);
    const fp = known.get(file.path);
    if (fp && fp.mtimeMs === file.mtimeMs) counts.unchanged++;
    else changed.push(file);
  }

  // In path order: a new document's row then lands beside the last one in every index keyed
  // by its path (the path's own, the fingerprints'), so a batch's commit rewrites a few pages
  // of them, not one page per document scattered over the whole index (readdir's order is the
  // directory's hash order).
  changed.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const upsertChanged = async () => {
    // Batches: read a batch's files, then issue its upserts together, so SQLite commits them
    // as one transaction (its group commit) and Postgres overlaps them on its pool.
    for (const batch of batches(changed, opts.concurrency ?? 256, BATCH_BYTES)) {
      const contents = await Promise.all(batch.map((f) => readText(f.abs)));
      await Promise.all(
        batch.map(async (file, i) => {
          const content = contents[i];
          if (content === null || content === undefined) return void seen.delete(file.path); // deleted since the walk
          opts.onRead?.(file, content);
          const doc = documentFromFile({ path: file.path, producer, content, mtimeMs: file.mtimeMs });
          const wrote = await store.upsert(doc, opts.embed ? { embed: opts.embed } : {});
          if (!wrote)
            counts.unchanged++; // touched, same content: upsert recorded the new mtime
          else if (known.has(file.path)) counts.updated++;
          else counts.added++;
        }),
      );
    }
  };
  // A first build of many files: the store may defer work to its end (SQLite's bulkLoad).
  const firstBuild = known.size === 0 && changed.length >= BULK_LOAD_FILES;
  await (firstBuild && store.bulkLoad ? store.bulkLoad(upsertChanged) : upsertChanged());

  const gone = [...known.keys()].filter((path) => !seen.has(path));
  const size = opts.concurrency ?? 256;
  for (let i = 0; i < gone.length; i += size) {
    const removed = await Promise.all(gone.slice(i, i + size).map((path) => store.remove(path)));
    counts.removed += removed.filter(Boolean).length;
  }
  return counts;
}

/**
 * Regular files under vault/folder; dot-files and dot-folders are skipped, a symlink is taken
 * only when it is a file inside the vault (vault/contained.ts): no folder behind a link (no
 * loop), nothing outside. One readdir per folder, iteratively.
 */
function* walk(vault: string, folder: string, counts: RefreshCounts): Generator<FileEntry> {
  const root = join(vault, folder);
  const prefix = folder.split(sep).join("/").replace(/\/+$/, "");
  const stack: string[] = [""];
  let first = true;
  while (stack.length > 0) {
    const rel = stack.pop()!;
    const dir = rel ? `${root}${sep}${rel}` : root;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (first && code !== "ENOENT" && code !== "ENOTDIR") throw err;
      first = false;
      continue; // no folder (or gone meanwhile): nothing indexed from it
    }
    first = false;
    for (const entry of entries) {
      if (entry.name.startsWith(".")) continue;
      const relPath = rel ? `${rel}${sep}${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        stack.push(relPath);
        continue;
      }
      const abs = `${dir}${sep}${entry.name}`;
      if (entry.isSymbolicLink()) {
        if (!INDEXED.test(entry.name) || !linkStaysInVaultSync(vault, abs)) {
          counts.skipped++;
          continue;
        }
      } else if (!entry.isFile() || !INDEXED.test(entry.name)) continue;
      const path = `${prefix}/${relPath.split(sep).join("/")}`;
      let size: number;
      let mtimeMs: number;
      try {
        ({ size, mtimeMs } = statSync(abs));
      } catch {
        continue; // deleted while we walked
      }
      if (size > MAX_INDEXED_FILE_BYTES) {
        counts.skipped++;
        continue;
      }
      yield { path, abs, mtimeMs, size };
    }
  }
}

/** Consecutive slices of at most `size` files and about `maxBytes` bytes. */
function* batches(files: FileEntry[], size: number, maxBytes: number): Generator<FileEntry[]> {
  let batch: FileEntry[] = [];
  let bytes = 0;
  for (const f of files) {
    if (batch.length > 0 && (batch.length >= size || bytes + f.size > maxBytes)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(f);
    bytes += f.size;
  }
  if (batch.length) yield batch;
}

async function readText(abs: string): Promise<string | null> {
  try {
    return await Bun.file(abs).text();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}
