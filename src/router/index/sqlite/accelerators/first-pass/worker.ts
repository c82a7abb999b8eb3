// The champion lists' build thread (champion-lists.ts, `workerFile`): its own read-only
// connection to the index file, running a clause's build query — FTS5's bm25 of every match,
// the best `depth` kept — off the event loop. The table's totals and the clause's match count
// are read in the same read transaction: the list is then exactly a list built in that state.
import { Database } from "bun:sqlite";
import { setPriority } from "node:os";
import { tableTotals } from "./bm25.ts";
import { buildDepth, idOrder, rankedArrays } from "./build.ts";

declare const self: Worker;

export interface BuildRequest {
  /** The index file (opened once, read-only). */
  file: string;
  /** The rank expression, bm25(docs_fts, weights…). */
  rank: string;
  /** The clause: an FTS5 expression of one word or phrase. */
  clause: string;
  depth: number;
  /** A clause with fewer matches than min(4 × depth, maxDepth) and at most this many is built whole. */
  maxWhole: number;
  maxDepth: number;
  /** Echoed back. */
  ticket: number;
}

export type BuildReply =
  | {
      ticket: number;
      ids: Int32Array | Float64Array;
      scores: Float64Array;
      /** Positions into ids in ascending id order, sorted here: off the thread that answers requests. */
      byId: Int32Array;
      depth: number;
      matches: number;
      rows: number;
      tokens: number;
    }
  | { ticket: number; failed: string };

/**
 * This thread gives way to the searches: a build scores every match of its clause, as much
 * work as the full query the search runs meanwhile, and a fresh router's first searches each
 * send a build per new word while the next search is already running — on a machine of few
 * cores the builds would take the searches' time. A list that comes later only means the full
 * query answers meanwhile. Not the lowest priority: on a machine kept busy by other work, the
 * builds (and the read transaction each holds, which a checkpoint cannot pass) would wait
 * for as long as it lasts. Linux keeps a nice value per thread, so os.setPriority(0) here
 * touches this thread alone; elsewhere it would lower the whole process, so it is left.
 */
const LIST_BUILD_NICE = 10;

function lowerPriority(): void {
  if (process.platform !== "linux") return;
  try {
    setPriority(0, LIST_BUILD_NICE);
  } catch {
    // Not permitted or not supported: builds at the same priority.
  }
}

let db: Database | undefined;
let query: ReturnType<Database["query"]> | undefined;
let count: ReturnType<Database["query"]> | undefined;

self.addEventListener("message", (event: MessageEvent<BuildRequest>) => {
  const msg = event.data;
  try {
    if (!db) {
      lowerPriority();
      db = new Database(msg.file, { readonly: true });
      db.run("PRAGMA busy_timeout = 5000");
      query = db.query(`SELECT rowid, ${msg.rank} AS r FROM docs_fts WHERE docs_fts MATCH ? ORDER BY r LIMIT ?`);
      count = db.query("SELECT count(*) AS n FROM docs_fts WHERE docs_fts MATCH ?");
    }
    // One read transaction: the totals, the count and the scores of one state of the index.
    db.run("BEGIN");
    let rows: [number, number][];
    let totals: { rows: number; tokens: number };
    let depth = msg.depth;
    let matches: number;
    try {
      totals = tableTotals(db, "docs_fts");
      matches = (count!.get(msg.clause) as { n: number }).n;
      depth = buildDepth(matches, depth, msg.maxDepth, msg.maxWhole);
      rows = query!.values(msg.clause, depth) as [number, number][];
    } finally {
      db.run("COMMIT");
    }
    const { ids, scores } = rankedArrays(rows);
    const byId = idOrder(ids);
    const reply: BuildReply = { ticket: msg.ticket, ids, scores, byId, depth, matches, rows: totals.rows, tokens: totals.tokens };
    self.postMessage(reply, [ids.buffer as ArrayBuffer, scores.buffer as ArrayBuffer, byId.buffer as ArrayBuffer]);
  } catch (err) {
    self.postMessage({ ticket: msg.ticket, failed: (err as Error).message } satisfies BuildReply);
  }
});
