// A first pass for the SQLite index's searches that skips FTS5's scoring of every match
// (issue 21): champion lists (Manning, Raghavan & Schütze, §7.1.3) with a threshold check
// (Fagin's threshold algorithm), answering only where the answer is provably the exact bm25
// top-k, and falling back to the full FTS5 query everywhere else.
//
// FTS5's bm25 of a query is a sum over its phrases of idf(phrase) · g(weighted count, row
// length), with the table's row count and average length shared by all: so a query's score
// of a document is the sum of the scores each clause (word or phrase) would get alone, and a
// filter phrase (weighted 0) adds nothing. A clause's list is the best DEPTH documents of that
// clause alone, by FTS5's own bm25, and the score of its last one (θ): no document outside the
// list scores more than θ on that clause. A query's candidates are the union of its clauses'
// lists; a candidate found in every list has its exact score, any other document at most the
// sum of what it is known to score and the θ of each list it is missing from. When the k-th
// best exact score (among those passing the tag and producer filters) beats every such bound,
// those k are the full query's top k, in the full query's order. A list holding every match
// of its clause (fewer than DEPTH) is complete: a document missing from it does not hold the
// clause (an AND query leaves it out; an OR query adds 0).
//
// The lists are built on first use of a clause, by one FTS5 query of that clause alone, and
// kept in memory while the index does not change: any write (this connection's, counted by
// total_changes(), or another's, by PRAGMA data_version) changes every clause's idf and the
// average length, so it drops them all. They are only built while the index is still: the
// first search after a write uses the full query and builds nothing, so a vault being written
// to as fast as it is searched pays one cheap check per search, not a list build.
import type { Database, Statement } from "bun:sqlite";

/** A clause's list: its best documents by the clause's bm25 alone (higher is better). */
interface ChampionList {
  /** Document ids, best first. */
  ids: Int32Array | Float64Array;
  /** Each one's score (−bm25), in the same order. */
  scores: Float64Array;
  /** Positions into ids/scores in ascending id order (for merging lists). */
  byId: Int32Array;
  /** No document outside the list scores more on this clause (0 when complete). */
  theta: number;
  /** The list holds every document that matches the clause. */
  complete: boolean;
  /** How many it was asked for. */
  depth: number;
}

export interface RankedId {
  id: number;
  /** −bm25: higher is better. */
  score: number;
}

/** Candidates checked against the filters before the full query is left to intersect them. */
const MAX_FILTER_CHECKS = 2048;

/** Ranked documents, read one at a time (a list's own arrays, or a merge's results). */
interface Ranked {
  length: number;
  at: (i: number) => RankedId;
}

export interface ChampionOptions {
  /** Documents kept per clause at first (default 4,096); 0 turns the first pass off. */
  depth?: number;
  /** A list too shallow to prove a query's top k is built again 4× deeper, up to this (default 131,072). */
  maxDepth?: number;
  /** Entries kept over all clauses before the least recently used lists go (default 1,572,864: ~24 MB). */
  maxEntries?: number;
}

export class ChampionLists {
  readonly depth: number;
  private readonly maxDepth: number;
  /** Clauses whose next list is to be this deep (a query could not be answered from theirs). */
  private readonly deeper = new Map<string, number>();
  /** Queries (op, k, clauses) the lists could not prove with every list at its deepest. */
  private readonly unprovable = new Set<string>();
  private readonly maxEntries: number;
  private readonly lists = new Map<string, ChampionList>();
  private entries = 0;
  /** total_changes() and the data version at the previous search. */
  private changes = -1;
  private version = -1;
  private stateQuery: Statement<{ c: number; v: number }, []> | undefined;
  private clauseQuery: Statement<[number, number], [string, number]> | undefined;
  /** Searches answered by the lists, and those that fell back to the full query. */
  readonly counts = { answered: 0, fellBack: 0 };

  constructor(
    private readonly db: Database,
    private readonly rank: string,
    opts: ChampionOptions = {},
  ) {
    this.depth = opts.depth ?? 4096;
    this.maxDepth = Math.max(this.depth, opts.maxDepth ?? 131_072);
    this.maxEntries = opts.maxEntries ?? 1_572_864;
  }

  /**
   * The exact top `k` of the query whose clauses are `clauses` (each an FTS5 expression of one
   * word or phrase) joined by `op`, keeping only documents `passes` accepts (the filters) —
   * or undefined when the lists cannot prove it (the caller runs the full query).
   */
  topK(clauses: string[], op: "AND" | "OR", k: number, passes?: (ids: number[]) => Set<number>): RankedId[] | undefined {
    if (this.depth === 0 || clauses.length === 0 || clauses.length > 32) return undefined;
    if (!this.still()) return this.fellBack();
    // A query the lists could not prove at their deepest goes to the full query at once.
    const memo = passes ? undefined : `${op}\u0001${k}\u0001${clauses.join("\u0001")}`;
    if (memo !== undefined && this.unprovable.has(memo)) return this.fellBack();
    const lists = clauses.map((c) => this.list(c));
    // The documents whose score is known, best first, and the most any other can score.
    let exact: Ranked;
    let bound: number;
    if (lists.length === 1) {
      const l = lists[0]!;
      exact = { length: l.ids.length, at: (i) => ({ id: l.ids[i]!, score: l.scores[i]! }) };
      bound = l.theta;
    } else {
      // Without filters only the best k + 1 are needed: kept in order as the merge finds them.
      const known: RankedId[] = [];
      const keep = k + 1;
      bound = this.merge(lists, op, (id, score) => {
        if (passes) known.push({ id, score });
        else if (known.length < keep || score > known[keep - 1]!.score) {
          let at = known.length;
          while (at > 0 && known[at - 1]!.score < score) at--;
          known.splice(at, 0, { id, score });
          if (known.length > keep) known.pop();
        }
      });
      if (passes) known.sort((a, b) => b.score - a.score);
      exact = { length: known.length, at: (i) => known[i]! };
    }
    // One more than asked: a tie at the k-th place is the full query's to break (by path).
    const top = this.passing(exact, k + 1, passes);
    if (top.length < k) {
      // Fewer than k: exact only when the lists hold every match.
      if (!lists.every((l) => l.complete)) return this.fellBack(passes ? [] : clauses, lists, memo);
      this.counts.answered++;
      return top;
    }
    const kth = top[k - 1]!.score;
    // Strictly above the bound and the next (with room for the sums' rounding).
    if (kth <= bound * (1 + 1e-9) + 1e-12) return this.fellBack(passes ? [] : clauses, lists, memo);
    if (top.length > k && top[k]!.score >= kth * (1 - 1e-9)) return this.fellBack(clauses, lists, memo);
    this.counts.answered++;
    return top.slice(0, k);
  }

  /** Drops every list (tests, and a caller that knows the index changed). */
  clear(): void {
    this.lists.clear();
    this.deeper.clear();
    this.unprovable.clear();
    this.entries = 0;
  }

  /**
   * Falls back to the full query; the partial lists that could not prove the answer are built
   * again 4× deeper on their next use (the best documents of a clause that is common in a
   * vault are then known further down, where a query's other clauses find theirs) — while the
   * lists fill at most half the budget, so deeper lists never push out the lists in use.
   */
  private fellBack(clauses: string[] = [], lists: ChampionList[] = [], memo?: string): undefined {
    this.counts.fellBack++;
    if (memo !== undefined && lists.every((l) => l.complete || l.depth >= this.maxDepth) && this.unprovable.size < 4096) this.unprovable.add(memo);
    lists.forEach((l, i) => {
      if (l.complete || l.depth >= this.maxDepth) return;
      const depth = Math.min(this.maxDepth, l.depth * 4);
      if (this.entries + depth - l.ids.length > this.maxEntries / 2) return;
      const key = clauses[i];
      if (key === undefined) return;
      if (this.lists.get(key) !== l) return;
      this.lists.delete(key);
      this.entries -= l.ids.length;
      this.deeper.set(key, depth);
    });
    return undefined;
  }

  /** True when the index is as it was at the previous search; otherwise forgets every list. */
  private still(): boolean {
    this.stateQuery ??= this.db.query("SELECT total_changes() AS c, (SELECT data_version FROM pragma_data_version()) AS v");
    const { c, v } = this.stateQuery.get()!;
    if (c === this.changes && v === this.version) return true;
    [this.changes, this.version] = [c, v];
    this.clear();
    return false;
  }

  /**
   * After a search wrote to this connection's temporary tables (which total_changes() counts
   * too): those changes are not the index's. Another connection's writes still count: the
   * data version seen at the search's start is kept.
   */
  settle(): void {
    if (this.stateQuery) this.changes = this.stateQuery.get()!.c;
  }

  private list(clause: string): ChampionList {
    const cached = this.lists.get(clause);
    if (cached) {
      // Most recently used last.
      this.lists.delete(clause);
      this.lists.set(clause, cached);
      return cached;
    }
    // Prepared on first use: docs_fts exists once the store has migrated.
    this.clauseQuery ??= this.db.query(`SELECT rowid, ${this.rank} AS r FROM docs_fts WHERE docs_fts MATCH ? ORDER BY r LIMIT ?`);
    const depth = this.deeper.get(clause) ?? this.depth;
    this.deeper.delete(clause);
    const rows = this.clauseQuery.values(clause, depth) as [number, number][];
    const n = rows.length;
    let top = 0;
    for (const row of rows) top = Math.max(top, row[0]);
    const ids = top < 2 ** 31 ? new Int32Array(n) : new Float64Array(n);
    const scores = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      ids[i] = rows[i]![0];
      scores[i] = -rows[i]![1];
    }
    const byId = new Int32Array(n);
    for (let i = 0; i < n; i++) byId[i] = i;
    byId.sort((a, b) => ids[a]! - ids[b]!);
    const complete = n < depth;
    const list: ChampionList = { ids, scores, byId, theta: complete ? 0 : scores[n - 1]!, complete, depth };
    this.lists.set(clause, list);
    this.entries += n;
    for (const [key, old] of this.lists) {
      if (this.entries <= this.maxEntries || old === list) break;
      this.lists.delete(key);
      this.entries -= old.ids.length;
    }
    return list;
  }

  /**
   * Walks the lists in id order at once: each candidate found where it must be is given to
   * `exact` with its score; returns the most any other document can score.
   */
  private merge(lists: ChampionList[], op: "AND" | "OR", exact: (id: number, score: number) => void): number {
    const m = lists.length;
    const at = new Int32Array(m);
    // A document in no list scores at most the sum of the θs (an AND match must hold every
    // clause, so none if some list is complete).
    let unseen = 0;
    for (const l of lists) {
      if (op === "AND" && l.complete) {
        unseen = 0;
        break;
      }
      unseen += l.theta;
    }
    let bound = unseen;
    for (;;) {
      let id = Infinity;
      for (let i = 0; i < m; i++) {
        const l = lists[i]!;
        if (at[i]! < l.byId.length) id = Math.min(id, l.ids[l.byId[at[i]!]!]!);
      }
      if (id === Infinity) return bound;
      let known = 0;
      let unknown = 0;
      let out = false;
      for (let i = 0; i < m; i++) {
        const l = lists[i]!;
        const p = at[i]! < l.byId.length ? l.byId[at[i]!]! : -1;
        if (p !== -1 && l.ids[p] === id) {
          known += l.scores[p]!;
          at[i] = at[i]! + 1;
        } else if (!l.complete) unknown += l.theta;
        else if (op === "AND") out = true; // it lacks this clause
      }
      if (out) continue;
      if (unknown === 0) exact(id, known);
      else if (known + unknown > bound) bound = known + unknown;
    }
  }

  /** The first `k` of `ranked` (best first) that pass the filters, checked 64, 128, 256… at a time. */
  private passing(ranked: Ranked, k: number, passes?: (ids: number[]) => Set<number>): RankedId[] {
    const out: RankedId[] = [];
    if (!passes) {
      for (let i = 0; i < ranked.length && i < k; i++) out.push(ranked.at(i));
      return out;
    }
    // A filter that few of a clause's best documents pass is the full query's to intersect.
    for (let i = 0, size = 64; i < ranked.length && i < MAX_FILTER_CHECKS && out.length < k; i += size, size *= 2) {
      const batch: RankedId[] = [];
      for (let j = i; j < ranked.length && j < i + size; j++) batch.push(ranked.at(j));
      const ok = passes(batch.map((r) => r.id));
      for (const r of batch) if (ok.has(r.id) && out.length < k) out.push(r);
    }
    return out;
  }
}
