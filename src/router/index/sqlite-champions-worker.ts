// The champion lists' build thread (sqlite-champions.ts, `workerFile`): its own read-only
// connection to the index file, running a clause's build query — FTS5's bm25 of every match,
// the best `depth` kept — off the event loop. The table's totals are read in the same read
// transaction, so the caller can tell which state of the index the scores belong to.
import { Database } from "bun:sqlite";
import { tableTotals } from "./sqlite-bm25.ts";

declare const self: Worker;

export interface BuildRequest {
  /** The index file (opened once, read-only). */
  file: string;
  /** The rank expression, bm25(docs_fts, weights…). */
  rank: string;
  /** The clause: an FTS5 expression of one word or phrase. */
  clause: string;
  depth: number;
  /** Echoed back. */
  ticket: number;
}

export type BuildReply =
  | { ticket: number; ids: Int32Array | Float64Array; scores: Float64Array; rows: number; tokens: number }
  | { ticket: number; failed: string };

let db: Database | undefined;
let query: ReturnType<Database["query"]> | undefined;

self.addEventListener("message", (event: MessageEvent<BuildRequest>) => {
  const msg = event.data;
  try {
    if (!db) {
      db = new Database(msg.file, { readonly: true });
      db.run("PRAGMA busy_timeout = 5000");
      query = db.query(`SELECT rowid, ${msg.rank} AS r FROM docs_fts WHERE docs_fts MATCH ? ORDER BY r LIMIT ?`);
    }
    db.run("BEGIN");
    let rows: [number, number][];
    let totals: { rows: number; tokens: number };
    try {
      totals = tableTotals(db, "docs_fts");
      rows = query!.values(msg.clause, msg.depth) as [number, number][];
    } finally {
      db.run("COMMIT");
    }
    const n = rows.length;
    let top = 0;
    for (const row of rows) top = Math.max(top, row[0]);
    const ids = top < 2 ** 31 ? new Int32Array(n) : new Float64Array(n);
    const scores = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      ids[i] = rows[i]![0];
      scores[i] = -rows[i]![1];
    }
    const reply: BuildReply = { ticket: msg.ticket, ids, scores, rows: totals.rows, tokens: totals.tokens };
    self.postMessage(reply, [ids.buffer, scores.buffer]);
  } catch (err) {
    self.postMessage({ ticket: msg.ticket, failed: (err as Error).message } satisfies BuildReply);
  }
});
