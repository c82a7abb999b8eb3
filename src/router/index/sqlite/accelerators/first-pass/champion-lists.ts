// A first pass for the SQLite index's searches: champion lists (Manning, Raghavan & Schütze,
// §7.1.3) with Fagin's threshold check. Each query clause keeps its best documents by FTS5's own
// bm25; FTS5's bm25 of a query is the sum of its clauses', so a query answers from the lists
// only when the check proves them the exact top k, and runs the full FTS5 query otherwise: the
// answer never differs from the full query's.
// Lists are built on first use (in a worker thread when `workerFile` is set) and kept across
// this connection's writes: entries are rescored with FTS5's formula (bm25.ts), written
// documents are scored apart (champ_delta) and each clause's match count is carried (deleted
// text kept in champ_gone). Another connection's write, a rollback, or more than maxWritten
// documents written since drop them.
import type { Database, Statement } from "bun:sqlite";
import { allRowLengths, growthBound, idf, phraseCount, phraseScore, rowLengths, type TableTotals, tableTotals } from "./bm25.ts";
import { buildDepth, idOrder, rankedArrays } from "./build.ts";
import type { FirstPass, RankedId } from "./first-pass.ts";
import type { BuildReply, BuildRequest } from "./worker.ts";

/** A clause's list: its best documents by the clause's bm25 alone (higher is better). */
interface ChampionList {
  /** Document ids, best first. */
  ids: Int32Array | Float64Array;
  /** Each one's score (−bm25) when the list was built, in the same order. */
  scores: Float64Array;
  /** Positions into ids/scores in ascending id order (for merging lists). */
  byId: Int32Array;
  /** No document outside the list scored more on this clause when it was built (0 when complete). */
  theta: number;
  /** The list holds every document that matches the clause. */
  complete: boolean;
  /** How many it was asked for. */
  depth: number;
  /** The clause's idf and the table's average length when the list was built. */
  idf: number;
  avgdl: number;
  /** The list carried to the index's state `seq` (view()), and the most any entry's score grew by (now ÷ then). */
  view?: MergeList & { seq: number; grew: number };
}

/** A list as merge() reads it. */
interface MergeList {
  ids: Int32Array | Float64Array;
  scores: Float64Array;
  byId: Int32Array;
  theta: number;
  complete: boolean;
}

/** Characters of deleted rows kept (champ_gone) beyond which the lists start afresh. */
const MAX_GONE_CHARS = 32 * 1024 * 1024;

/** Ranked documents, read one at a time (a list's own arrays, or a merge's results). */
interface Ranked {
  length: number;
  at: (i: number) => RankedId;
}

export interface ChampionOptions {
  /** Documents kept per clause at first (default 4,096); 0 turns the first pass off. */
  depth?: number;
  /** A list too shallow to prove a query's top k is built again whole or 4× deeper, up to this (default 131,072). */
  maxDepth?: number;
  /** Entries kept over all clauses before the least recently used lists go (default 1,572,864). */
  maxEntries?: number;
  /** Documents written since the lists were built beyond which they are dropped and built again on use (default 4,096). */
  maxWritten?: number;
  /**
   * Where a query has filters, the candidates checked against them start from batches of 64,
   * doubling, while fewer than this were checked (default 2,048: at most 4,032 in all);
   * beyond, the full query intersects them.
   */
  maxFilterChecks?: number;
  /**
   * The index file: lists are built in a worker thread on a read-only connection of their own
   * (worker.ts), so a first use does not hold the event loop for a build of a
   * common word's list; a search that needs a list still being
   * built runs the full query. Unset: built in the calling thread, at first use.
   */
  workerFile?: string;
}

/** A build sent to the worker (its list is installed unless clear() ran since). */
interface PendingBuild {
  clause: string;
  gen: number;
  /** The log's length when it was sent (the index's state then). */
  seq: number;
}

export class ChampionLists implements FirstPass {
  readonly depth: number;
  private readonly maxDepth: number;
  /** Clauses whose next list is to be this deep (a query could not be answered from theirs). */
  private readonly deeper = new Map<string, number>();
  /** Queries (op, k, clauses) the lists could not prove with every list at its deepest. */
  private readonly unprovable = new Set<string>();
  private readonly maxEntries: number;
  private readonly maxWritten: number;
  private readonly maxFilterChecks: number;
  private readonly workerFile: string | undefined;
  /** The most candidates passing() checks (the batches' sum). */
  private readonly filterReach: number;
  private readonly lists = new Map<string, ChampionList>();
  private entries = 0;
  /** Entries of the lists' rescored scores (view()). */
  private viewEntries = 0;
  /** The data version at the previous search. */
  private version = -1;
  private stateQuery: Statement<{ v: number }, []> | undefined;
  private clauseQuery: Statement<[number, number], [string, number]> | undefined;
  private countQuery: Statement<{ n: number }, [string]> | undefined;
  /** The rank expression for docs_fts and for the written documents' table. */
  private readonly rank: string;
  private readonly deltaRank: string;
  /** Documents whose text this connection wrote since the lists were built (ids, in order: the index's state is their count). */
  private log: number[] = [];
  private readonly writtenIds = new Set<number>();
  /** The log entries champ_delta holds; whether it holds rows from before the last clear(). */
  private synced = 0;
  private deltaStale = false;
  private tables: Record<"clear" | "clearGone" | "forget" | "copy" | "keep" | "match" | "matchGone", Statement> | undefined;
  /** Log positions that were deletes, and the characters of the deleted rows' bodies kept in champ_gone. */
  private readonly drops = new Set<number>();
  private goneChars = 0;
  /** Per state: the table's totals, each clause's match count and the written documents' scores for it. */
  private totals: (TableTotals & { seq: number }) | undefined;
  /** Each document's length by id, as docs_fts_docsize held it when first needed (null: ids too large to hold so). */
  private lengths: Int32Array | null | undefined;
  private readonly hits = new Map<string, { seq: number; n: number }>();
  private readonly goneHits = new Map<string, { seq: number; positions: Set<number> }>();
  private readonly deltaMatches = new Map<string, { seq: number; rows: Map<number, { f: number; length: number }> }>();
  /** Searches answered by the lists, those that fell back to the full query, and lists built. */
  readonly counts = { answered: 0, fellBack: 0, built: 0 };
  /** Background builds (workerFile): the worker, the builds in flight by ticket and by clause. */
  private worker: Worker | undefined;
  private workerFailed = false;
  private ticket = 0;
  private readonly tickets = new Map<number, PendingBuild>();
  private readonly pending = new Map<string, PendingBuild>();
  /** Bumped by clear(): a build sent before is not installed. */
  private gen = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly db: Database,
    /** bm25()'s column weights for docs_fts (title, body, filters). */
    weights: number[],
    /** docs_fts's tokenizer (the written documents are tokenized alike). */
    private readonly tokenizer: string,
    opts: ChampionOptions = {},
  ) {
    const w = weights.map((x) => x.toFixed(1)).join(", ");
    this.rank = `bm25(docs_fts, ${w})`;
    this.deltaRank = `bm25(champ_delta, ${w})`;
    this.depth = opts.depth ?? 4096;
    this.maxDepth = Math.max(this.depth, opts.maxDepth ?? 131_072);
    this.maxEntries = opts.maxEntries ?? 1_572_864;
    this.maxWritten = opts.maxWritten ?? 4096;
    this.maxFilterChecks = opts.maxFilterChecks ?? 2048;
    this.workerFile = opts.workerFile;
    let reach = 0;
    for (let size = 64; reach < this.maxFilterChecks; size *= 2) reach += size;
    this.filterReach = reach;
  }

  /**
   * The store wrote or deleted document `id`'s text in docs_fts (inside its write, before
   * the commit: a write rolled back leaves an id here that did not change, which costs only
   * its rescoring). Every write to docs_fts on this connection must be told here.
   */
  written(id: number, dropped: boolean): void {
    // A list being built in the worker counts as a list: it may be of a state before this write.
    if (this.lists.size === 0 && this.pending.size === 0) {
      // No list to carry: what was read of the index before this write is stale.
      if (this.log.length > 0 || this.totals || this.lengths !== undefined || this.hits.size > 0) this.resetState();
      return;
    }
    if (dropped) {
      // The row's text before it goes: a clause's match count is carried across the delete.
      const kept = this.temp().keep.values(this.log.length, id) as [number][];
      this.goneChars += kept[0]?.[0] ?? 0;
      this.drops.add(this.log.length);
    }
    this.log.push(id);
    this.writtenIds.add(id);
    if (this.writtenIds.size > this.maxWritten || this.goneChars > MAX_GONE_CHARS) this.clear();
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
    const maybe = clauses.map((c) => this.list(c));
    // A list still being built in the worker: the full query answers this one.
    if (maybe.some((l) => l === undefined)) return this.fellBack();
    const lists = maybe as ChampionList[];
    const live = this.log.length > 0;
    if (live && this.current().rows === 0) return this.fellBack();
    // The documents whose score is known, best first, and the most any other can score.
    let exact: Ranked;
    let bound: number;
    /** Known documents were left out of `exact` (below the ones the filters can be checked on). */
    let cut = false;
    if (lists.length === 1 && !live) {
      const l = lists[0]!;
      exact = { length: l.ids.length, at: (i) => ({ id: l.ids[i]!, score: l.scores[i]! }) };
      bound = l.theta;
    } else if (lists.length === 1) {
      // One list after writes: its entries in the order it was built, which its scores now
      // keep but for the small moves of idf and length: past the first `want`, an entry whose
      // score then times the most any entry's grew is below the least of those first ones is
      // below them all now (the rest are never rescored into objects).
      const l = lists[0]!;
      const v = this.view(clauses[0]!, l);
      const want = passes ? this.filterReach : k + 1;
      const known: RankedId[] = [];
      let least = Infinity;
      let i = 0;
      for (; i < l.ids.length && known.length < want; i++) {
        const score = v.scores[i]!;
        if (Number.isNaN(score)) continue;
        known.push({ id: l.ids[i]!, score });
        least = Math.min(least, score);
      }
      for (; i < l.ids.length && l.scores[i]! * v.grew * (1 + 1e-12) >= least; i++) {
        const score = v.scores[i]!;
        if (!Number.isNaN(score)) known.push({ id: l.ids[i]!, score });
      }
      cut = i < l.ids.length;
      this.scoreWritten(clauses, op, (id, score) => known.push({ id, score }));
      known.sort((a, b) => b.score - a.score);
      exact = { length: known.length, at: (j) => known[j]! };
      bound = v.theta;
    } else {
      // Without filters only the best k + 1 are needed: kept in order as the merge finds them.
      const known: RankedId[] = [];
      const keep = k + 1;
      const found = (id: number, score: number) => {
        if (passes) known.push({ id, score });
        else if (known.length < keep || score > known[keep - 1]!.score) {
          let at = known.length;
          while (at > 0 && known[at - 1]!.score < score) at--;
          known.splice(at, 0, { id, score });
          if (known.length > keep) known.pop();
        }
      };
      if (live) {
        bound = this.merge(
          lists.map((l, i) => this.view(clauses[i]!, l)),
          op,
          found,
          this.writtenIds,
        );
        this.scoreWritten(clauses, op, found);
      } else bound = this.merge(lists, op, found);
      // With filters, passing() reads at most filterReach of them, best first: only those are sorted.
      const best = passes ? this.best(known, this.filterReach) : known;
      cut = best.length < known.length;
      exact = { length: best.length, at: (i) => best[i]! };
    }
    // One more than asked: a tie at the k-th place is the full query's to break (by path).
    const { top, checked } = this.passing(exact, k + 1, passes);
    if (top.length < k) {
      // Fewer than k: exact only when the lists hold every match and each was checked.
      if (!lists.every((l) => l.complete) || cut || checked < exact.length) return this.fellBack(passes ? [] : clauses, lists, memo);
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

  /** Resolves once no background build is in flight (tests, benches). */
  idle(): Promise<void> {
    if (this.tickets.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops the build worker, if one was started. */
  close(): void {
    this.worker?.terminate();
    this.worker = undefined;
    this.tickets.clear();
    this.pending.clear();
    for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Drops every list (tests, and a caller that knows the index changed). */
  clear(): void {
    this.gen++;
    this.pending.clear();
    this.lists.clear();
    this.deeper.clear();
    this.unprovable.clear();
    this.entries = 0;
    this.viewEntries = 0;
    this.resetState();
  }

  /** Forgets the writes and what was read of the index's state (each list's own state goes with the list). */
  private resetState(): void {
    this.log = [];
    this.drops.clear();
    this.goneChars = 0;
    this.writtenIds.clear();
    this.synced = 0;
    this.deltaStale = true;
    this.totals = undefined;
    this.lengths = undefined;
    this.hits.clear();
    this.deltaMatches.clear();
    this.goneHits.clear();
  }

  /**
   * Falls back to the full query; the partial lists that could not prove the answer are built
   * again on their next use, whole when their matches fit (up to maxDepth), else 4× deeper
   * (the best documents of a clause that is common in a vault are then known further down,
   * where a query's other clauses find theirs) — while the lists fill at most half the
   * budget, so deeper lists never push out the lists in use. A build scores every match
   * whatever its depth, so one whole build costs about what each step of a 4× ladder did.
   */
  private fellBack(clauses: string[] = [], lists: ChampionList[] = [], memo?: string): undefined {
    this.counts.fellBack++;
    if (memo !== undefined && lists.every((l) => l.complete || l.depth >= this.maxDepth) && this.unprovable.size < 4096) this.unprovable.add(memo);
    // This query's lists, deepened, fill at most half the budget; the lists of other queries
    // make room as any build does (least recently used first), so a query asked again after
    // many others gets its deeper lists back.
    let mine = lists.reduce((sum, l) => sum + l.ids.length, 0);
    lists.forEach((l, i) => {
      const key = clauses[i];
      if (key === undefined || l.complete || l.depth >= this.maxDepth || this.lists.get(key) !== l) return;
      // Whole when it fits (one build instead of a ladder of them), else 4× deeper.
      const matches = this.hits.get(key)?.n ?? Infinity;
      const whole = matches < this.maxDepth && mine + matches - l.ids.length <= this.maxEntries / 2;
      const depth = whole ? matches + 1 : Math.min(this.maxDepth, l.depth * 4);
      if (mine + depth - l.ids.length > this.maxEntries / 2) return;
      mine += depth - l.ids.length;
      this.forget(key, l);
      this.deeper.set(key, depth);
    });
    return undefined;
  }

  /** True when no other connection has written since the previous search; otherwise forgets every list. */
  private still(): boolean {
    this.stateQuery ??= this.db.query("SELECT data_version AS v FROM pragma_data_version()");
    const { v } = this.stateQuery.get()!;
    if (v === this.version) return true;
    this.version = v;
    this.clear();
    return false;
  }

  /** The clause's list, built here if need be — or, with a worker, undefined while it is built there. */
  private list(clause: string): ChampionList | undefined {
    const cached = this.lists.get(clause);
    if (cached) {
      // Most recently used last.
      this.lists.delete(clause);
      this.lists.set(clause, cached);
      return cached;
    }
    if (this.pending.has(clause)) return undefined;
    // Prepared on first use: docs_fts exists once the store has migrated. The temporary
    // tables too, here, outside any write (a write's rollback would take them with it).
    this.temp();
    let depth = this.deeper.get(clause) ?? this.depth;
    this.deeper.delete(clause);
    if (this.workerFile && !this.workerFailed) {
      this.send({ clause, gen: this.gen, seq: this.log.length }, depth);
      return undefined;
    }
    const matches = this.matches(clause);
    depth = buildDepth(matches, depth, this.maxDepth, this.maxEntries / 2);
    // The state the scores are computed in: a later write's search carries them from it.
    const totals = this.current();
    this.clauseQuery ??= this.db.query(`SELECT rowid, ${this.rank} AS r FROM docs_fts WHERE docs_fts MATCH ? ORDER BY r LIMIT ?`);
    const { ids, scores } = rankedArrays(this.clauseQuery.values(clause, depth) as [number, number][]);
    return this.install(clause, ids, scores, depth, totals, matches);
  }

  /** A built list kept: `scores` (best first) computed in the state `totals`, where the clause had `matches` matches. */
  private install(
    clause: string,
    ids: Int32Array | Float64Array,
    scores: Float64Array,
    depth: number,
    totals: TableTotals,
    matches: number,
    byId = idOrder(ids),
  ): ChampionList {
    this.counts.built++;
    const n = ids.length;
    const complete = n < depth;
    const list: ChampionList = {
      ids,
      scores,
      byId,
      theta: complete ? 0 : scores[n - 1]!,
      complete,
      depth,
      idf: idf(totals.rows, matches),
      avgdl: totals.tokens / totals.rows,
    };
    this.lists.set(clause, list);
    this.entries += n;
    this.evict(list);
    return list;
  }

  /**
   * The build worker, started at the first build sent to it: a router that never searches does
   * not carry the thread (its memory counts against the idle router).
   */
  private startWorker(): void {
    if (this.worker || !this.workerFile || this.workerFailed) return;
    this.worker = new Worker(new URL("./worker.ts", import.meta.url));
    // Never what keeps the process alive.
    this.worker.unref();
    this.worker.addEventListener("message", (event: MessageEvent<BuildReply>) => this.received(event.data));
    this.worker.addEventListener("error", () => {
      // Built here from now on; what was in flight is built again on its next use.
      this.workerFailed = true;
      this.close();
    });
  }

  /** Sends a build to the worker (started on first use). */
  private send(build: PendingBuild, depth: number): void {
    this.startWorker();
    const ticket = ++this.ticket;
    this.tickets.set(ticket, build);
    this.pending.set(build.clause, build);
    const request: BuildRequest = {
      file: this.workerFile!,
      rank: this.rank,
      clause: build.clause,
      depth,
      maxWhole: this.maxEntries / 2,
      maxDepth: this.maxDepth,
      ticket,
    };
    this.worker!.postMessage(request);
  }

  /**
   * A list back from the worker: a list built in the state the worker read — its totals and the
   * clause's count from the same read transaction — and kept like one built here. The writes
   * this connection made since the build was sent are in the log (written() logs them while a
   * build is pending), so the notes they touched are scored apart, whether or not the worker's
   * state held them. Not kept after a clear(), or when another connection wrote (data_version).
   */
  private received(reply: BuildReply): void {
    const build = this.tickets.get(reply.ticket);
    this.tickets.delete(reply.ticket);
    if (build && this.pending.get(build.clause) === build) this.pending.delete(build.clause);
    try {
      if ("failed" in reply) {
        // Built here from now on (a worker that cannot read the file would fail every build).
        this.workerFailed = true;
        return;
      }
      if (!build || build.gen !== this.gen || !this.still()) return;
      if (!this.lists.has(build.clause)) this.install(build.clause, reply.ids, reply.scores, reply.depth, reply, reply.matches, reply.byId);
      // Nothing written since it was sent: the worker read the index's state now (a search
      // commits before it sends), so its count is the clause's count now — not counted again
      // here at the next search after a write (a tenth of a build, for every clause in use).
      if (build.seq === this.log.length && this.hits.get(build.clause)?.seq !== build.seq) this.hits.set(build.clause, { seq: build.seq, n: reply.matches });
    } finally {
      if (this.tickets.size === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /** The least recently used lists go while the entries are over budget (never `keep`). */
  private evict(keep: ChampionList): void {
    for (const [key, old] of this.lists) {
      if (this.entries <= this.maxEntries || old === keep) break;
      this.forget(key, old);
    }
  }

  private forget(key: string, l: ChampionList): void {
    this.lists.delete(key);
    this.entries -= l.ids.length;
    if (l.view) this.viewEntries -= l.view.scores.length;
  }

  /** The table's row count and total tokens now (read once per state). */
  private current(): TableTotals {
    const seq = this.log.length;
    if (this.totals?.seq !== seq) this.totals = { seq, ...tableTotals(this.db, "docs_fts") };
    return this.totals;
  }

  /**
   * How many documents match `clause` now: its count at an earlier state, carried across the
   * writes since — each document written since then that holds it now adds one, and each
   * that held it then takes one away (it was there then when its first write since was a
   * delete: champ_gone has that row's text) — or, the first time, counted: one pass over the
   * clause's doclist (a tenth of a build).
   */
  private matches(clause: string): number {
    const seq = this.log.length;
    const h = this.hits.get(clause);
    if (h?.seq === seq) return h.n;
    let n: number;
    if (h) {
      const now = this.writtenMatches(clause);
      const gone = this.goneMatches(clause);
      const seen = new Set<number>();
      n = h.n;
      for (let i = h.seq; i < seq; i++) {
        const id = this.log[i]!;
        if (seen.has(id)) continue;
        seen.add(id);
        if (this.drops.has(i) && gone.has(i)) n--;
        if (now.has(id)) n++;
      }
    } else {
      this.countQuery ??= this.db.query("SELECT count(*) AS n FROM docs_fts WHERE docs_fts MATCH ?");
      n = this.countQuery.get(clause)!.n;
    }
    this.hits.set(clause, { seq, n });
    return n;
  }

  /**
   * List `l` of `clause` carried to the index as it is now: every entry not written since
   * rescored with today's idf and average length (the written ones are skipped by merge()
   * and scored apart), and θ raised by how much any other document's score can have grown.
   */
  private view(clause: string, l: ChampionList): MergeList & { grew: number } {
    const seq = this.log.length;
    if (l.view?.seq === seq) return l.view;
    const { rows, tokens } = this.current();
    const avgdl = tokens / rows;
    const idfNow = idf(rows, this.matches(clause));
    // Every document's length, read once while the lists live (a document written since the
    // read has another length, or none: it is skipped here and by merge()).
    if (this.lengths === undefined) this.lengths = allRowLengths(this.db, "docs_fts") ?? null;
    const all = this.lengths;
    const some = all ? undefined : rowLengths(this.db, "docs_fts", l.ids);
    const n = l.ids.length;
    const scores = new Float64Array(n);
    let grew = 0;
    for (let i = 0; i < n; i++) {
      const id = l.ids[i]!;
      if (this.writtenIds.has(id)) {
        scores[i] = Number.NaN;
        continue;
      }
      const length = all ? (all[id] ?? 0) : (some!.get(id) ?? 0);
      // Its weighted count, from the score the list was built with; then its score now.
      scores[i] = phraseScore(idfNow, phraseCount(l.scores[i]!, l.idf, length, l.avgdl), length, avgdl);
      grew = Math.max(grew, scores[i]! / l.scores[i]!);
    }
    const theta = l.complete ? 0 : l.theta * growthBound(l.idf, l.avgdl, idfNow, avgdl);
    // The rescored scores are held beside the list, within a budget of their own (half the
    // lists'): past it the least recently used lists' are dropped first (they are worked out
    // again when next used; the lists themselves stay).
    const counted = this.lists.get(clause) === l;
    if (l.view && counted) this.viewEntries -= l.view.scores.length;
    l.view = { seq, ids: l.ids, scores, byId: l.byId, theta, complete: l.complete, grew };
    if (counted) {
      this.viewEntries += n;
      for (const old of this.lists.values()) {
        if (this.viewEntries <= this.maxEntries / 2) break;
        if (old === l || !old.view) continue;
        this.viewEntries -= old.view.scores.length;
        old.view = undefined;
      }
    }
    return l.view;
  }

  /** The documents written since the lists were built, scored exactly for the query, given to `found`. */
  private scoreWritten(clauses: string[], op: "AND" | "OR", found: (id: number, score: number) => void): void {
    const each = clauses.map((c) => this.writtenScores(c));
    const ids = new Set<number>();
    for (const scores of each) for (const id of scores.keys()) ids.add(id);
    for (const id of ids) {
      let score = 0;
      let all = true;
      // In clause order, as FTS5 sums its phrases (one a document lacks adds 0).
      for (const scores of each) {
        const s = scores.get(id);
        if (s === undefined) all = false;
        else score += s;
      }
      if (op === "OR" || all) found(id, score);
    }
  }

  /** Each written document that holds `clause` now, with its score on it now. */
  private writtenScores(clause: string): Map<number, number> {
    const rows = this.writtenMatches(clause);
    const scores = new Map<number, number>();
    if (rows.size === 0) return scores;
    const { rows: total, tokens } = this.current();
    const idfNow = idf(total, this.matches(clause));
    for (const [id, { f, length }] of rows) scores.set(id, phraseScore(idfNow, f, length, tokens / total));
    return scores;
  }

  /**
   * Each written document that holds `clause` now, with its weighted count and length:
   * champ_delta holds their text (and only theirs), so its bm25 of a document gives back its
   * count (once per state).
   */
  private writtenMatches(clause: string): Map<number, { f: number; length: number }> {
    const seq = this.log.length;
    const cached = this.deltaMatches.get(clause);
    if (cached?.seq === seq) return cached.rows;
    const found = this.syncDelta().match.values(clause) as [number, number][];
    const rows = new Map<number, { f: number; length: number }>();
    if (found.length > 0) {
      const apart = tableTotals(this.db, "temp.champ_delta");
      const apartIdf = idf(apart.rows, found.length);
      const apartAvg = apart.tokens / apart.rows;
      const lengths = rowLengths(
        this.db,
        "temp.champ_delta",
        found.map((r) => r[0]),
      );
      for (const [id, r] of found) {
        const length = lengths.get(id) ?? 0;
        rows.set(id, { f: phraseCount(-r, apartIdf, length, apartAvg), length });
      }
    }
    this.deltaMatches.set(clause, { seq, rows });
    return rows;
  }

  /**
   * The two temporary FTS5 tables, created on first use, emptied after a clear(): champ_delta
   * holds the text of the documents written since (as docs_fts holds it now), champ_gone the
   * text each deleted row had (contentless: only its index), by its position in the log.
   */
  private temp(): NonNullable<ChampionLists["tables"]> {
    if (!this.tables) {
      this.db.run(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.champ_delta USING fts5 (title, body, filters, tokenize = '${this.tokenizer}')`);
      this.db.run(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.champ_gone USING fts5 (title, body, filters, content = '', tokenize = '${this.tokenizer}')`);
      this.tables = {
        clear: this.db.query("DELETE FROM temp.champ_delta"),
        clearGone: this.db.query("INSERT INTO temp.champ_gone (champ_gone) VALUES ('delete-all')"),
        forget: this.db.query("DELETE FROM temp.champ_delta WHERE rowid IN (SELECT value FROM json_each(?))"),
        copy: this.db.query(
          "INSERT INTO temp.champ_delta (rowid, title, body, filters) SELECT rowid, title, body, filters FROM docs_fts WHERE rowid IN (SELECT value FROM json_each(?))",
        ),
        keep: this.db.query(
          "INSERT INTO temp.champ_gone (rowid, title, body, filters) SELECT ?1, title, body, filters FROM docs_fts WHERE rowid = ?2 RETURNING length(body)",
        ),
        match: this.db.query(`SELECT rowid, ${this.deltaRank} FROM temp.champ_delta WHERE champ_delta MATCH ?`),
        matchGone: this.db.query("SELECT rowid FROM temp.champ_gone WHERE champ_gone MATCH ?"),
      };
      this.deltaStale = false;
    }
    const t = this.tables;
    if (this.deltaStale) {
      t.clear.run();
      t.clearGone.run();
      this.deltaStale = false;
    }
    return t;
  }

  /** champ_delta brought up to date: the text, as docs_fts holds it now, of each document written since. */
  private syncDelta(): NonNullable<ChampionLists["tables"]> {
    const t = this.temp();
    if (this.synced < this.log.length) {
      const ids = JSON.stringify([...new Set(this.log.slice(this.synced))]);
      t.forget.run(ids);
      t.copy.run(ids);
      this.synced = this.log.length;
    }
    return t;
  }

  /** The log positions of the deletes whose row held `clause` (once per state). */
  private goneMatches(clause: string): Set<number> {
    const seq = this.log.length;
    const cached = this.goneHits.get(clause);
    if (cached?.seq === seq) return cached.positions;
    const positions = new Set((this.temp().matchGone.values(clause) as [number][]).map((r) => r[0]));
    this.goneHits.set(clause, { seq, positions });
    return positions;
  }

  /**
   * Walks the lists in id order at once: each candidate found where it must be is given to
   * `exact` with its score; returns the most any other document can score. Documents in
   * `skip` (written since the lists were built) are left out: they are scored apart.
   */
  private merge(lists: MergeList[], op: "AND" | "OR", exact: (id: number, score: number) => void, skip?: Set<number>): number {
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
      if (out || skip?.has(id)) continue;
      if (unknown === 0) exact(id, known);
      else if (known + unknown > bound) bound = known + unknown;
    }
  }

  /** The first `k` of `ranked` (best first) that pass the filters, checked 64, 128, 256… at a time; and how many were checked. */
  private passing(ranked: Ranked, k: number, passes?: (ids: number[]) => Set<number>): { top: RankedId[]; checked: number } {
    const out: RankedId[] = [];
    if (!passes) {
      for (let i = 0; i < ranked.length && i < k; i++) out.push(ranked.at(i));
      return { top: out, checked: out.length };
    }
    // A filter that few of a clause's best documents pass is the full query's to intersect.
    let checked = 0;
    for (let size = 64; checked < ranked.length && checked < this.maxFilterChecks && out.length < k; size *= 2) {
      const batch: RankedId[] = [];
      for (let j = checked; j < ranked.length && j < checked + size; j++) batch.push(ranked.at(j));
      checked += batch.length;
      const ok = passes(batch.map((r) => r.id));
      for (const r of batch) if (ok.has(r.id) && out.length < k) out.push(r);
    }
    return { top: out, checked };
  }

  /** The best `n` of `known` (and any tied with the n-th), best first: a native sort of the scores finds the cut. */
  private best(known: RankedId[], n: number): RankedId[] {
    if (known.length > n) {
      const scores = new Float64Array(known.length);
      for (let i = 0; i < known.length; i++) scores[i] = known[i]!.score;
      scores.sort();
      const cut = scores[known.length - n]!;
      known = known.filter((r) => r.score >= cut);
    }
    return known.sort((a, b) => b.score - a.score);
  }
}
