// A Postgres first load's new documents as rows of COPY's binary format (index_docs,
// index_chunks), their tsvectors joined here (pg-lexicon.ts), and the COPY that sends them.
// The store (postgres.ts) decides which documents go this way.
import type { PendingQuery, Row, TransactionSql } from "postgres";
import { noteName } from "./links.ts";
import { BinaryWriter, type Lexed, tsvectorBinary } from "./pg-lexicon.ts";
import type { IndexDoc } from "./types.ts";

/** A changed document's title and chunks lexed in the router, and its salient lexemes when they can be told; undefined where Postgres parses it. */
export type LexedDoc = { title: Lexed; chunks: Lexed[]; salient: string[] | undefined } | undefined;

/** What a document's rows are made of: the document, its chunks, and each chunk's text as stored. */
export interface CopyDoc {
  p: { doc: IndexDoc; title: string; tags: string[]; mtimeMs: number };
  chunks: { seq: number }[];
  bodies: string[];
}

/** COPY's binary format's header: its signature, flags (none) and header extension length (0). */
const COPY_HEADER = Buffer.from("PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0", "latin1");
/** Milliseconds from the Unix epoch to Postgres' (2000-01-01), a timestamptz's zero. */
const PG_EPOCH_MS = 946_684_800_000;

/**
 * Writers kept for the next batches: a batch's rows fill the buffers the last one grew instead
 * of growing new ones (its two writers, two batches in flight), up to a size.
 */
const writers: BinaryWriter[] = [];
const MAX_WRITERS = 4;
const MAX_WRITER_BYTES = 8 * 1024 * 1024;

/** Documents and their chunks as rows of COPY's binary format, for index_docs and index_chunks. */
export class CopyRows {
  static readonly DOC_COLUMNS = "id, path, producer, title, tags, tag_keys, updated_at, hash, mtime_ms, name, tsv, salient";
  static readonly CHUNK_COLUMNS = "doc_id, seq, body, tsv";
  /** Each written document's id, by path. */
  readonly ids = new Map<string, string>();
  private readonly doc = writers.pop() ?? new BinaryWriter();
  private readonly chunk = writers.pop() ?? new BinaryWriter();
  docs: Buffer = Buffer.alloc(0);
  chunks: Buffer = Buffer.alloc(0);

  constructor() {
    for (const w of [this.doc, this.chunk]) w.bytes(COPY_HEADER);
  }

  /** Adds a document's rows; false, and nothing added, when its tsvectors must be joined by Postgres. */
  add(id: string, c: CopyDoc, lexed: NonNullable<LexedDoc>): boolean {
    const { doc, chunk } = this;
    const docAt = doc.at;
    const chunkAt = chunk.at;
    const idValue = BigInt(id);
    // A chunk's vector is its title's and its own words'; the document's, its title's and every chunk's.
    let single: Buffer | undefined;
    for (const [j, k] of c.chunks.entries()) {
      chunk.int16(4);
      chunk.int32(8);
      chunk.int64(idValue);
      chunk.int32(4);
      chunk.int32(k.seq);
      chunk.text(c.bodies[j]!);
      const at = chunk.at;
      if (!tsvectorBinary([lexed.title, lexed.chunks[j]!], chunk)) {
        chunk.at = chunkAt;
        return false;
      }
      if (c.chunks.length === 1) single = chunk.buf.subarray(at, chunk.at);
    }
    const p = c.p;
    doc.int16(12);
    doc.int32(8);
    doc.int64(idValue);
    doc.text(p.doc.path);
    doc.text(p.doc.producer);
    doc.text(p.title);
    doc.textArray(p.tags);
    doc.textArray(p.tags.map((t) => t.toLowerCase()));
    doc.int32(8);
    doc.int64(BigInt(p.doc.updatedAt.getTime() - PG_EPOCH_MS) * 1000n);
    doc.text(p.doc.hash);
    doc.int32(8);
    doc.float64(p.mtimeMs);
    doc.text(noteName(p.doc.path));
    if (single) doc.bytes(single);
    else if (!tsvectorBinary([lexed.title, ...lexed.chunks], doc)) {
      doc.at = docAt;
      chunk.at = chunkAt;
      return false;
    }
    doc.textArray(lexed.salient!);
    this.ids.set(p.doc.path, id);
    return true;
  }

  finish(): this {
    for (const w of [this.doc, this.chunk]) w.int16(-1);
    this.docs = this.doc.written();
    this.chunks = this.chunk.written();
    return this;
  }

  /** Gives the writers back (docs and chunks are theirs: sent by now). */
  release(): void {
    for (const w of [this.doc, this.chunk]) {
      w.reset();
      if (writers.length < MAX_WRITERS && w.buf.length <= MAX_WRITER_BYTES) writers.push(w);
    }
  }
}

/** COPY data written to the socket at a time. */
const COPY_PIECE_BYTES = 64 * 1024;

/**
 * Sends `data` to a COPY … FROM STDIN in `tx`. postgres.js tells a COPY's failure only to the
 * transaction's next statement (which then fails), and once a COPY succeeds its stream sends
 * the server a stray CopyFail (ignored outside a COPY, fatal to the next one): so a statement
 * follows (`then`, else a SELECT 1), then the stream's end is awaited.
 */
export async function copyIn(tx: TransactionSql, statement: string, data: Buffer, then?: PendingQuery<Row[]>): Promise<void> {
  const stream = await tx.unsafe(statement).writable();
  stream.on("error", () => {}); // the next statement fails with the transaction
  const closed = new Promise((resolve) => stream.once("close", resolve));
  // In pieces: the stream hands the socket one piece once the last is on it, where a batch's
  // megabytes written at once would sit in the socket's own buffer (copied there, and grown)
  // while Postgres reads them. Once the data is on the socket, end() ends the COPY at once
  // (postgres.js sends CopyDone and frees the connection for the next statement), where it
  // would wait for the write otherwise.
  let at = 0;
  for (; at + COPY_PIECE_BYTES < data.length; at += COPY_PIECE_BYTES) stream.write(data.subarray(at, at + COPY_PIECE_BYTES));
  await new Promise<void>((resolve) => stream.write(data.subarray(at), () => resolve()));
  stream.end();
  await (then ?? tx`SELECT 1`);
  await closed;
}
