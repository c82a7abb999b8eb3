// FTS5's bm25() in JS, from the numbers FTS5 itself stores, so that a score FTS5 computed
// under one index state can be carried to another without asking FTS5 again
// (champion-lists.ts keeps its lists across this connection's writes this way).
//
// FTS5's bm25 of one phrase (fts5_aux.c, fts5Bm25Function), with k1 = 1.2 and b = 0.75:
//   idf · (f · (k1 + 1)) / (f + k1 · (1 − b + b · D / avgdl))
// where f is the phrase's weighted count in the row (Σ over its instances of the column's
// weight), D the row's length in tokens over every column, avgdl the table's total tokens over
// its row count, and idf = log((N − n + 0.5) / (n + 0.5)) over the row count N and the rows
// n the phrase matches (1e-6 when that is not above 0). The expressions below keep FTS5's
// order of operations, so a score computed here is the double FTS5 computes.
import type { Database } from "bun:sqlite";

const K1 = 1.2;
const B = 0.75;

export function idf(rows: number, hits: number): number {
  const v = Math.log((rows - hits + 0.5) / (hits + 0.5));
  return v <= 0 ? 1e-6 : v;
}

/** One phrase's bm25 contribution (higher is better: −bm25() of a one-phrase query). */
export function phraseScore(idfValue: number, f: number, length: number, avgdl: number): number {
  return idfValue * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + (B * length) / avgdl)));
}

/**
 * The weighted count f behind a phrase's score (the inverse of phraseScore). With integer
 * column weights f is an integer, and rounding removes the division's error.
 */
export function phraseCount(score: number, idfValue: number, length: number, avgdl: number): number {
  const g = score / idfValue;
  const norm = K1 * (1 - B + (B * length) / avgdl);
  const f = (g * norm) / (K1 + 1.0 - g);
  const whole = Math.round(f);
  return Math.abs(f - whole) < 1e-6 * Math.max(1, whole) ? whole : f;
}

/**
 * How much more any row may score on a phrase after the table's statistics move from
 * (idf0, avgdl0) to (idf1, avgdl1), its own f and D unchanged: idf1/idf0 times the largest
 * ratio of the length terms, which is avgdl1/avgdl0 when the average grew (as f → 0 and
 * D → ∞) and 1 when it shrank.
 */
export function growthBound(idf0: number, avgdl0: number, idf1: number, avgdl1: number): number {
  return (idf1 / idf0) * Math.max(1, avgdl1 / avgdl0);
}

/** A SQLite varint (as FTS5 writes them) at `at`: its value and the offset after it. */
function varint(bytes: Uint8Array, at: number): [number, number] {
  let v = 0;
  for (let i = 0; i < 8; i++) {
    const byte = bytes[at + i]!;
    v = v * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return [v, at + i + 1];
  }
  return [v * 256 + bytes[at + 8]!, at + 9];
}

/** The sum of the varints in `bytes` (a docsize row: each column's length). */
function varintSum(bytes: Uint8Array): number {
  let sum = 0;
  for (let at = 0; at < bytes.length; ) {
    const [v, next] = varint(bytes, at);
    sum += v;
    at = next;
  }
  return sum;
}

export interface TableTotals {
  /** Rows. */
  rows: number;
  /** Tokens over every column and row. */
  tokens: number;
}

/** An FTS5 table's row count and total tokens, from its averages record (`<table>_data`, id 1). */
export function tableTotals(db: Database, table: string): TableTotals {
  const row = db.query(`SELECT block FROM ${table}_data WHERE id = 1`).values() as [Uint8Array][];
  const block = row[0]?.[0];
  if (!block) return { rows: 0, tokens: 0 };
  const [rows, at] = varint(block, 0);
  return { rows, tokens: varintSum(block.subarray(at)) };
}

/** Each row's length in tokens over every column (`<table>_docsize`), by rowid. */
export function rowLengths(db: Database, table: string, ids: ArrayLike<number>): Map<number, number> {
  const out = new Map<number, number>();
  if (ids.length === 0) return out;
  const rows = db.query(`SELECT id, sz FROM ${table}_docsize WHERE id IN (SELECT value FROM json_each(?))`).values(JSON.stringify(Array.from(ids))) as [
    number,
    Uint8Array,
  ][];
  for (const [id, sz] of rows) out.set(id, varintSum(sz));
  return out;
}

/**
 * Every row's length in tokens (`<table>_docsize`), indexed by rowid: one pass over the table,
 * then a lookup is an array read. Undefined when the rowids run past
 * `maxRowid` (the array would be too big for what it holds).
 */
export function allRowLengths(db: Database, table: string, maxRowid = 8_000_000): Int32Array | undefined {
  const top = (db.query(`SELECT max(id) FROM ${table}_docsize`).values() as [number | null][])[0]?.[0] ?? 0;
  if (top > maxRowid) return undefined;
  const out = new Int32Array(top + 1);
  for (const [id, sz] of db.query(`SELECT id, sz FROM ${table}_docsize`).values() as [number, Uint8Array][]) out[id] = varintSum(sz);
  return out;
}
