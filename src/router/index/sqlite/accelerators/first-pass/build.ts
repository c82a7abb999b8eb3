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
