// `router-cli import DIR`'s work, on the client side: find the markdown notes under a folder,
// send them to POST /ingest/batch in bounded batches (two in flight, so reading the next batch
// overlaps the router's work on this one), and say how each file fared. Every guarantee is the
// router's: each note is ingested as POST /ingest would (whole or absent, indexed before the
// answer, recognised when imported again), so an interrupted import is simply run again.
import { readFile, stat } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import { ApiError, type IngestBatchResult, type IngestInput, type RouterClient } from "../client";

export interface ImportOptions {
  /** Tags every imported note carries (besides its frontmatter's). */
  tags?: string[];
  /** The `source` recorded in each note (default "import"). */
  source?: string;
  /** Most notes per request (default 500; the router takes at most 1000). */
  batchSize?: number;
  /** Most bytes of content per request (default 4 MiB, under the router's MAX_BODY_BYTES). */
  batchBytes?: number;
  /** Called after every batch with the running counts. */
  onProgress?: (p: ImportCounts) => void;
}

export interface ImportCounts {
  total: number;
  done: number;
  created: number;
  duplicates: number;
  failed: number;
}

export interface ImportFailure {
  /** Path relative to the imported folder. */
  file: string;
  status: number;
  code: string;
  message: string;
}

export interface ImportReport extends ImportCounts {
  failures: ImportFailure[];
  seconds: number;
}

/** Files read at once while a batch is put together. */
const READ_AHEAD = 64;
/** Requests in flight: while the router works on some, the next batch is read and sent. */
const IN_FLIGHT = 2;

const NOTE_FILES = new Bun.Glob("**/*.{md,markdown}");

/** Markdown files under `dir` (dot-files and dot-folders skipped, symlinks not followed), sorted. */
export async function noteFiles(dir: string): Promise<string[]> {
  const st = await stat(dir).catch(() => null);
  if (!st?.isDirectory()) throw new Error(`${dir} is not a folder`);
  const files: string[] = [];
  for await (const f of NOTE_FILES.scan({ cwd: dir, onlyFiles: true, dot: false, followSymlinks: false })) {
    if (!f.split("/").includes("node_modules")) files.push(f);
  }
  return files.sort();
}

/** The request for one file: its text, and its file name as the title when the note names none. */
export function importItem(file: string, content: string, opts: ImportOptions): IngestInput {
  const named = /^#\s+\S/m.test(content) || /^---\r?\n[\s\S]*?^title:\s*\S/m.test(content);
  const item: IngestInput = { content, tags: opts.tags ?? [], source: opts.source ?? "import" };
  if (!named) item.title = basename(file, extname(file)).slice(0, 300);
  return item;
}

export async function importFolder(client: RouterClient, dir: string, opts: ImportOptions = {}): Promise<ImportReport> {
  const t0 = performance.now();
  const files = await noteFiles(dir);
  const batchSize = Math.max(1, Math.min(opts.batchSize ?? 500, 1000));
  const batchBytes = opts.batchBytes ?? 4 * 1024 * 1024;
  const counts: ImportCounts = { total: files.length, done: 0, created: 0, duplicates: 0, failed: 0 };
  const failures: ImportFailure[] = [];
  const fail = (file: string, status: number, code: string, message: string) => {
    counts.failed++;
    failures.push({ file, status, code, message });
  };

  /**
   * The next batch, read from disk: files and their requests, bounded by count and bytes. A
   * batch's files are read concurrently (READ_AHEAD at a time: one by one, the reads were most
   * of the client's time); a file read but over the byte bound waits for the next batch.
   */
  let next = 0;
  const ahead: Array<{ file: string; content: string | Error }> = [];
  const readBatch = async (): Promise<{ files: string[]; items: IngestInput[] } | undefined> => {
    const batch = { files: [] as string[], items: [] as IngestInput[] };
    let bytes = 0;
    while (batch.items.length < batchSize) {
      if (ahead.length === 0) {
        if (next >= files.length) break;
        const names = files.slice(next, next + Math.min(READ_AHEAD, batchSize - batch.items.length));
        next += names.length;
        const read = await Promise.all(names.map((f) => readFile(join(dir, f), "utf8").catch((err: Error) => err)));
        for (const [i, file] of names.entries()) ahead.push({ file, content: read[i]! });
      }
      const { file, content } = ahead[0]!;
      if (content instanceof Error) {
        ahead.shift();
        counts.done++;
        fail(file, 0, "unreadable", content.message);
        continue;
      }
      if (batch.items.length > 0 && bytes + content.length > batchBytes) break;
      ahead.shift();
      bytes += content.length;
      batch.files.push(file);
      batch.items.push(importItem(file, content, opts));
    }
    return batch.items.length > 0 ? batch : undefined;
  };

  const send = async (batch: { files: string[]; items: IngestInput[] }): Promise<void> => {
    let answer: IngestBatchResult;
    try {
      answer = await client.ingestBatch(batch.items);
    } catch (err) {
      // The request as a whole was refused (e.g. one file over MAX_BODY_BYTES): its files failed.
      if (!(err instanceof ApiError) || err.status === 401 || err.status === 503) throw err;
      for (const f of batch.files) fail(f, err.status, err.code, err.message);
      counts.done += batch.files.length;
      opts.onProgress?.({ ...counts });
      return;
    }
    for (const r of answer.results) {
      const file = batch.files[r.index] ?? `#${r.index}`;
      if ("error" in r) fail(file, r.status, r.error.code, r.error.message);
      else if (r.status === 201) counts.created++;
      else counts.duplicates++;
    }
    counts.done += batch.files.length;
    opts.onProgress?.({ ...counts });
  };

  const inFlight = new Set<Promise<void>>();
  try {
    let batch = await readBatch();
    while (batch) {
      const p = send(batch).finally(() => inFlight.delete(p));
      inFlight.add(p);
      // The next batch is read while the router works on those in flight, so a request that
      // ends is followed at once by the next, not after the next batch's reads.
      const reading = readBatch();
      if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
      batch = await reading;
    }
    await Promise.all(inFlight);
  } catch (err) {
    await Promise.allSettled(inFlight);
    throw err;
  }
  return { ...counts, failures, seconds: (performance.now() - t0) / 1000 };
}
