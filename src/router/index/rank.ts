// How a "match any" search orders the notes that hold some of the query's words (issue 35):
// each store's text score (SQLite bm25, Postgres ts_rank) times the share of the query the note
// holds (coverage), times a bonus for holding the words close together. Pure functions over
// what a store found, so both stores rank by one rule.
//
// Not "every word held first": measured on the relevance sets (scripts/bench/relevance.ts),
// putting the notes that hold every word above all others lost to the bare OR-bm25 floor on the
// npm-docs questions (a note holding every common word of "how do I set the timeout in x?" is
// not the answer more often than a strong match of two), while scaling by coverage kept the
// gain elsewhere. A note holding half the words needs twice the text score to rank level.

/** The most closeness adds: words side by side score 1 + PROXIMITY_WEIGHT times the same words far apart. */
export const PROXIMITY_WEIGHT = 0.5;

/** One place a clause (a word, or a phrase's first word) stands in a note. */
export interface Occurrence {
  /** The field (title, body): positions in different fields are never near. */
  field: number;
  /** Its position in the field, in words. */
  at: number;
  /** Its index in clauses(). */
  clause: number;
  /** Its length in words (a phrase's words). */
  len: number;
}

/**
 * 0–1: how close together a note holds the clauses it holds. In the field holding the most
 * distinct clauses, the shortest window of words holding each of them once: 1 when they stand
 * side by side, falling as the window grows (their own length over the window's). 0 when a
 * note holds fewer than two clauses in one field.
 */
export function closeness(occurrences: Occurrence[]): number {
  const fields = new Map<number, Occurrence[]>();
  for (const o of occurrences) {
    const list = fields.get(o.field);
    if (list) list.push(o);
    else fields.set(o.field, [o]);
  }
  let best = 0;
  let bestDistinct = 1;
  for (const list of fields.values()) {
    list.sort((a, b) => a.at - b.at);
    const lens = new Map<number, number>();
    for (const o of list) lens.set(o.clause, o.len);
    const distinct = lens.size;
    if (distinct < 2 || distinct < bestDistinct) continue;
    let need = 0;
    for (const len of lens.values()) need += len;
    const span = shortestWindow(list, distinct);
    const value = Math.min(1, need / Math.max(need, span));
    if (distinct > bestDistinct || value > best) [best, bestDistinct] = [value, distinct];
  }
  return best;
}

/** The fewest words spanning an occurrence of each of `distinct` clauses (list sorted by position). */
function shortestWindow(list: Occurrence[], distinct: number): number {
  const count = new Map<number, number>();
  let have = 0;
  let best = Infinity;
  let lo = 0;
  for (let hi = 0; hi < list.length; hi++) {
    const h = list[hi]!;
    const c = (count.get(h.clause) ?? 0) + 1;
    count.set(h.clause, c);
    if (c === 1) have++;
    while (have === distinct) {
      const l = list[lo]!;
      best = Math.min(best, h.at + h.len - l.at);
      const left = count.get(l.clause)! - 1;
      count.set(l.clause, left);
      if (left === 0) have--;
      lo++;
    }
  }
  return best;
}

/** A "match any" hit's score: the store's text score, scaled by coverage (0–1) and closeness (0–1). */
export function anyScore(text: number, coverage: number, near: number): number {
  return text * coverage * (1 + PROXIMITY_WEIGHT * near);
}
