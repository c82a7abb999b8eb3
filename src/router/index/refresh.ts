// Incremental refresh of one vault folder (raw/ by default) into the index — spec: a tick
// "refreshes the index over the raw/ directory". Cheap when nothing changed: a file whose
// mtime matches the index is not even read; a changed mtime costs a read and a hash, and
// only a changed hash costs a re-index. Files gone from the folder leave the index.
import { fullGC } from "bun:jsc";
import { type Dirent, readdirSync, statSync } from "node:fs";
import { join, sep } from "node:path";
import { linkStaysInVaultSync } from "../vault/contained.ts";
import { comparePaths, inPathOrder } from "../vault/walk.ts";
import { documentFromFile } from "./document.ts";
import type { Fingerprint, IndexDoc, IndexStore, Producer } from "./types.ts";

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
   * Changed files read and upserted together, as one batch; default BATCH_FILES. SQLite commits
   * a batch as one transaction (its group commit), Postgres overlaps it on its pool; small
   * values make a full SQLite build much slower (a commit per few notes).
   */
  concurrency?: number;
  /**
   * Called with each file's text as it is read (changed files only), so a caller that also
   * needs the text (the tick's inline-marker harvest) need not read the file a second time.
   */
  onRead?: (file: { path: string; mtimeMs: number; size: number }, content: string) => void;
  /**
   * The folder's files, in place of refresh's own walk (the tick walks the vault once for its
   * harvest and hands raw/'s files on); a file may carry its text when the caller read it.
   */
  files?: AsyncIterable<FileEntry>;
  /** Index rows read at a time beside the walk (IndexedRows); default ROWS_PAGE. */
  rowsPage?: number;
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
/**
 * Batches written at once: the next batch is read while one is written (Postgres writes each in
 * its own transaction on its own connection; SQLite's group commit queues it behind the other).
 */
const WRITES_IN_FLIGHT = 2;
/** Every this many batches the build waits for a full garbage collection (a few ms). */
const FULL_GC_BATCHES = 8;
/** Files a batch holds: two batches in flight, each with its texts (and on Postgres its lexed literals). */
const BATCH_FILES = 128;
/** A batch holds about this much text at most. */
const BATCH_BYTES = 32 * 1024 * 1024;

export interface FileEntry {
  path: string;
  abs: string;
  mtimeMs: number;
  size: number;
  /** The file's text, when the caller already read it. */
  content?: string;
}

export async function refreshFolder(store: IndexStore, opts: RefreshOptions): Promise<RefreshCounts> {
  const folder = opts.folder ?? "raw";
  const producer = opts.producer ?? "raw";
  const size = opts.concurrency ?? BATCH_FILES;
  const counts: RefreshCounts = { added: 0, updated: 0, removed: 0, unchanged: 0, skipped: 0 };
  // What the index holds, read a page at a time beside the walk (both in path order): a row
  // the walk passes without its file is gone from the folder. Neither the vault's files nor
  // the index's rows are ever held whole.
  const known = await IndexedRows.open(store, producer, opts.rowsPage);
  const firstBuild = known.empty;
  /** Indexed files deleted between the walk and their read: removed at the end. */
  const vanished: string[] = [];
  const source = opts.files ?? walk(opts.vault, folder, counts);
  const changed = (async function* () {
    for await (const file of source) {
      if (opts.files && file.size > MAX_INDEXED_FILE_BYTES) {
        counts.skipped++;
        continue;
      }
      const { fp, gone } = await known.seek(file.path);
      if (gone.length > 0) counts.removed += await removeAll(store, gone);
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
    const wrote = await store.upsertMany(docs, embed);
    for (const [i, file] of files.entries()) {
      if (!wrote[i])
        counts.unchanged++; // touched, same content: upsert recorded the new mtime
      else if (file.known) counts.updated++;
      else counts.added++;
    }
  };
  const upsertChanged = async (files: AsyncIterable<FileEntry & { known: boolean }>) => {
    // A batch's files are read, then upserted together (upsertMany), WRITES_IN_FLIGHT at a
    // time: the next batch is read while the last is written.
    const writing = new Set<Promise<void>>();
    let batchNo = 0;
    for await (const batch of batches(files, size, BATCH_BYTES)) {
      // The last batch's texts (read, parsed, sent) are garbage now: ask for a collection, so
      // the heap of a long build stays near a few batches' size instead of growing until the
      // collector's own schedule catches up. Asynchronous, but every FULL_GC_BATCHES a full
      // one the build waits for: the asynchronous ones alone let garbage pile up between them.
      // The full one is JSC's own (bun:jsc fullGC): Bun.gc(true) does more around the same
      // collection (the build's process then spends several times the CPU on it, for the same
      // peak memory).
      if (++batchNo % FULL_GC_BATCHES === 0) fullGC();
      else Bun.gc(false);
      const contents = await Promise.all(batch.map((f) => f.content ?? readText(f.abs)));
      for (const f of batch) f.content = undefined;
      for (const [i, file] of batch.entries()) if (contents[i] === null && file.known) vanished.push(file.path);
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
  let next = await changed.next();
  while (!next.done && head.length < BULK_LOAD_FILES) {
    head.push(next.value);
    next = await changed.next();
  }
  const rest = (async function* () {
    yield* head;
    head.length = 0;
    while (!next.done) {
      yield next.value;
      next = await changed.next();
    }
  })();
  await (firstBuild && head.length >= BULK_LOAD_FILES ? store.bulkLoad(() => upsertChanged(rest)) : upsertChanged(rest));

  for await (const gone of known.rest()) counts.removed += await removeAll(store, gone);
  counts.removed += await removeAll(store, vanished);
  return counts;
}

async function removeAll(store: IndexStore, paths: string[]): Promise<number> {
  return (await Promise.all(paths.map((path) => store.remove(path)))).filter(Boolean).length;
}

/** Rows of the index read a page at a time (IndexStore.fingerprintsAfter). */
const ROWS_PAGE = 2000;

/**
 * A producer's indexed rows, compared with a walk in comparePaths order as both stream. A page
 * is read before the walk passes its last row, so a row the refresh writes meanwhile (always at
 * a path the walk has reached) is never mistaken for one of the next page's.
 */
export class IndexedRows {
  private page: Array<Fingerprint & { path: string }> = [];
  private at = 0;
  private last = "";
  private done = false;

  private constructor(
    private readonly store: IndexStore,
    private readonly producer: Producer,
    private readonly pageSize: number,
  ) {}

  static async open(store: IndexStore, producer: Producer, pageSize = ROWS_PAGE): Promise<IndexedRows> {
    const rows = new IndexedRows(store, producer, pageSize);
    await rows.fill();
    return rows;
  }

  /** The index held no row of the producer when opened. */
  get empty(): boolean {
    return this.done && this.page.length === 0 && this.last === "";
  }

  /**
   * `path`'s row, and the rows passed on the way to it (their files are not in the walk).
   * Paths must come in ascending comparePaths order.
   */
  async seek(path: string): Promise<{ fp: Fingerprint | undefined; gone: string[] }> {
    const gone: string[] = [];
    for (;;) {
      while (this.at < this.page.length) {
        const row = this.page[this.at]!;
        const order = comparePaths(row.path, path);
        if (order > 0) return { fp: undefined, gone };
        this.at++;
        if (order === 0) return { fp: row, gone };
        gone.push(row.path);
      }
      if (this.done) return { fp: undefined, gone };
      await this.fill();
    }
  }

  /** The rows after the walk's last file: all gone, a page at a time. */
  async *rest(): AsyncGenerator<string[]> {
    for (;;) {
      const gone = this.page.slice(this.at).map((r) => r.path);
      this.at = this.page.length;
      if (gone.length > 0) yield gone;
      if (this.done) return;
      await this.fill();
    }
  }

  private async fill(): Promise<void> {
    this.page = await this.store.fingerprintsAfter(this.producer, this.last, this.pageSize);
    this.at = 0;
    if (this.page.length < this.pageSize) this.done = true;
    if (this.page.length > 0) this.last = this.page[this.page.length - 1]!.path;
  }
}

/**
 * Regular files under vault/folder, in comparePaths order of their paths (the order the index
 * pages its rows in; a folder's files sit where "name/" sorts among its siblings); dot-files
 * and dot-folders are skipped, a symlink is taken only when it is a file inside the vault
 * (vault/contained.ts): no folder behind a link (no loop), nothing outside. One readdir per folder.
 */
function* walk(vault: string, folder: string, counts: RefreshCounts): Generator<FileEntry> {
  const root = join(vault, folder);
  const prefix = folder.split(sep).join("/").replace(/\/+$/, "");
  let entries: Dirent[];
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
    return; // no folder: nothing indexed from it
  }
  yield* walkEntries(vault, root, prefix, "", entries, counts);
}

function* walkEntries(vault: string, root: string, prefix: string, rel: string, entries: Dirent[], counts: RefreshCounts): Generator<FileEntry> {
  const dir = rel ? `${root}${sep}${rel}` : root;
  // In path order: a new document's row then lands beside the last one in every index keyed
  // by its path, so a batch's commit rewrites a few pages of them, not one page per document
  // scattered over the whole index (readdir's order is the directory's hash order).
  for (const entry of inPathOrder(entries)) {
    const relPath = rel ? `${rel}${sep}${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      let inner: Dirent[];
      try {
        inner = readdirSync(`${dir}${sep}${entry.name}`, { withFileTypes: true });
      } catch {
        continue; // gone meanwhile
      }
      yield* walkEntries(vault, root, prefix, relPath, inner, counts);
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

/** Consecutive slices of at most `size` files and about `maxBytes` bytes. */
async function* batches<T extends FileEntry>(files: AsyncIterable<T>, size: number, maxBytes: number): AsyncGenerator<T[]> {
  let batch: T[] = [];
  let bytes = 0;
  for await (const f of files) {
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
