// Incremental refresh of one vault folder (raw/ by default) into the index — spec: a tick
// "refreshes the index over the raw/ directory". Cheap when nothing changed: a file whose
// mtime matches the index is not even read; a changed mtime costs a read and a hash, and
// only a changed hash costs a re-index. Files gone from the folder leave the index.
import { type Dirent, readdirSync, statSync } from "node:fs";
import { join, sep } from "node:path";
import { linkStaysInVaultSync } from "../vault/contained.ts";
import { documentFromFile } from "./document.ts";
import type { IndexDoc, IndexStore, Producer } from "./types.ts";

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
/** Batches a store with upsertMany writes at once (each its own transaction, on its own connection). */
const WRITES_IN_FLIGHT = 2;
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
  const size = opts.concurrency ?? 256;
  const counts: RefreshCounts = { added: 0, updated: 0, removed: 0, unchanged: 0, skipped: 0 };
  // What the index holds; each path is taken out as its file is seen, so what is left at the
  // end is gone from the folder. The walk streams: no list of the vault's files is ever held.
  const known = await store.fingerprints(producer);
  const firstBuild = known.size === 0;
  const changed = (function* () {
    for (const file of walk(opts.vault, folder, counts)) {
      const fp = known.get(file.path);
      if (fp) known.delete(file.path);
      if (fp && fp.mtimeMs === file.mtimeMs) counts.unchanged++;
      else yield { ...file, known: fp !== undefined };
    }
  })();

  const index = async (batch: (FileEntry & { known: boolean })[], contents: (string | null)[]) => {
    const docs: IndexDoc[] = [];
    const files: typeof batch = [];
    for (const [i, file] of batch.entries()) {
      const content = contents[i];
      if (content === null || content === undefined) continue; // deleted since the walk: gone (if indexed) or never there
      opts.onRead?.(file, content);
      docs.push(documentFromFile({ path: file.path, producer, content, mtimeMs: file.mtimeMs }));
      files.push(file);
    }
    const embed = opts.embed ? { embed: opts.embed } : {};
    const wrote = store.upsertMany ? await store.upsertMany(docs, embed) : await Promise.all(docs.map((doc) => store.upsert(doc, embed)));
    for (const [i, file] of files.entries()) {
      if (!wrote[i])
        counts.unchanged++; // touched, same content: upsert recorded the new mtime
      else if (file.known) counts.updated++;
      else counts.added++;
    }
  };
  const upsertChanged = async (files: Iterable<FileEntry & { known: boolean }>) => {
    // A batch's files are read, then upserted together: SQLite commits them as one transaction
    // (its group commit); Postgres writes each as one (upsertMany), WRITES_IN_FLIGHT at a time
    // on its pool while the next batch is read.
    const writing = new Set<Promise<void>>();
    for (const batch of batches(files, size, BATCH_BYTES)) {
      // The last batch's texts (read, parsed, sent) are garbage now: ask for a collection, so
      // the heap of a long build stays near one batch's size instead of growing until the
      // collector's own schedule catches up (asynchronous: the build does not wait for it).
      Bun.gc(false);
      const contents = await Promise.all(batch.map((f) => readText(f.abs)));
      for (const [i, file] of batch.entries()) if (contents[i] === null && file.known) known.set(file.path, { hash: "", mtimeMs: -1 });
      if (!store.upsertMany) {
        await index(batch, contents);
        continue;
      }
      while (writing.size >= WRITES_IN_FLIGHT) await Promise.race(writing);
      const write: Promise<void> = index(batch, contents).finally(() => writing.delete(write));
      write.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
      writing.add(write);
    }
    await Promise.all(writing);
  };
  // A first build of many files: the store may defer work to its end (bulkLoad). Up to
  // BULK_LOAD_FILES changed files are looked at first to tell.
  const head: (FileEntry & { known: boolean })[] = [];
  let next = changed.next();
  while (!next.done && head.length < BULK_LOAD_FILES) {
    head.push(next.value);
    next = changed.next();
  }
  const rest = (function* () {
    yield* head;
    while (!next.done) {
      yield next.value;
      next = changed.next();
    }
  })();
  await (firstBuild && head.length >= BULK_LOAD_FILES ? store.bulkLoad(() => upsertChanged(rest)) : upsertChanged(rest));

  const gone = [...known.keys()];
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
    // In name order, folders after a folder's files: a new document's row then lands beside
    // the last one in every index keyed by its path, so a batch's commit rewrites a few pages
    // of them, not one page per document scattered over the whole index (readdir's order is
    // the directory's hash order).
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const folders: string[] = [];
    for (const entry of entries) {
      if (entry.name.startsWith(".")) continue;
      const relPath = rel ? `${rel}${sep}${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        folders.push(relPath);
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
    stack.push(...folders.reverse());
  }
}

/** Consecutive slices of at most `size` files and about `maxBytes` bytes. */
function* batches<T extends FileEntry>(files: Iterable<T>, size: number, maxBytes: number): Generator<T[]> {
  let batch: T[] = [];
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
