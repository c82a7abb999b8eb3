// What a champion list's build does with its clause, in the store's thread or in the worker
// (champion-lists.ts, worker.ts): the depth it is built to, and the build
// query's rows as the list's arrays.

/**
 * Counted first (a tenth of a build: no scoring), a clause with fewer matches than
 * min(4 × depth, maxDepth), and at most `maxWhole`, is built whole at once, for about the cost
 * of its first `depth`.
 */
export function buildDepth(matches: number, depth: number, maxDepth: number, maxWhole: number): number {
  return matches >= depth && matches < Math.min(4 * depth, maxDepth) && matches <= maxWhole ? matches + 1 : depth;
}

/** Positions below this fit beside an id below 2^31 in one exactly held double (2^31 × 2^21 = 2^52). */
const POSITION_SPAN = 2 ** 21;

/**
 * Positions into `ids` in ascending id order (a list's byId, for merging lists). Each id and its
 * position packed in one number and the numbers sorted natively: a comparator called per
 * comparison cost more than the rest of a list's install, on the thread that answers requests.
 */
export function idOrder(ids: Int32Array | Float64Array): Int32Array {
  const n = ids.length;
  const byId = new Int32Array(n);
  if (ids instanceof Float64Array || n >= POSITION_SPAN) return bySorting(ids, byId);
  const packed = new Float64Array(n);
  let lowest = 0;
  for (let i = 0; i < n; i++) {
    packed[i] = ids[i]! * POSITION_SPAN + i;
    lowest = Math.min(lowest, ids[i]!);
  }
  if (lowest < 0) return bySorting(ids, byId);
  packed.sort();
  for (let i = 0; i < n; i++) byId[i] = packed[i]! % POSITION_SPAN;
  return byId;
}

function bySorting(ids: Int32Array | Float64Array, byId: Int32Array): Int32Array {
  for (let i = 0; i < byId.length; i++) byId[i] = i;
  return byId.sort((a, b) => ids[a]! - ids[b]!);
}

/** The build's [rowid, bm25] rows, best first, as ids and scores (−bm25: higher is better). */
export function rankedArrays(rows: [number, number][]): { ids: Int32Array | Float64Array; scores: Float64Array } {
  const n = rows.length;
  let top = 0;
  for (const row of rows) top = Math.max(top, row[0]);
  const ids = top < 2 ** 31 ? new Int32Array(n) : new Float64Array(n);
  const scores = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    ids[i] = rows[i]![0];
    scores[i] = -rows[i]![1];
  }
  return { ids, scores };
}
