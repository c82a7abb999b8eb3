// The store's ranking: a query's best documents by bm25 (from the first pass when it proves
// them, else one FTS5 query), weighed again by coverage and closeness for "match any", and
// each hit's best chunk and snippet from FTS5's highlight().
import type { Database, Statement } from "bun:sqlite";
import { toHit } from "../hit.ts";
import { clausePositions, clauseStems } from "../positions.ts";
import { clauses, clauseWeights, type ParsedQuery, queryCoverage } from "../query.ts";
import { anyScore, closeness } from "../rank.ts";
import { MARK_CLOSE, MARK_OPEN, markedSnippet } from "../snippet.ts";
import type { MatchMode, Producer, SearchFilters, SearchHit } from "../types.ts";
import type { FirstPass, RankedId } from "./accelerators/first-pass/first-pass.ts";
import { docExpression, passingFilters } from "./filters.ts";
import { bestChunk, ftsExpression, splitMarked } from "./text.ts";
import type { Reader } from "./text-rows.ts";

/** docs_fts's tokenizer (schema.ts), for the temporary table that highlights apart. */
export const DOC_TOKENIZER = "porter unicode61 remove_diacritics 2";
/** bm25's column weights: the title ten times the body, the filters column (tokens no query word can equal) not at all. */
export const DOC_WEIGHTS = [10, 1, 0];
const DOC_RANK = `bm25(docs_fts, ${DOC_WEIGHTS.map((w) => w.toFixed(1)).join(", ")})`;
/** The best `limit` documents of a MATCH (?1) by DOC_RANK, as (id, rank). */
const TOP_BY_RANK = `SELECT rowid AS id, ${DOC_RANK} AS rank FROM docs_fts WHERE docs_fts MATCH ?1 ORDER BY rank LIMIT ?2`;
/** The rows of documents the first pass ranked (?1, JSON ids), and (MARKED) each body highlighted for the words (?2). */
const RANKED_PLAIN = "SELECT 0 AS rank, NULL AS marked, d.* FROM docs d WHERE d.id IN (SELECT value FROM json_each(?1))";
const RANKED_MARKED = `SELECT 0 AS rank, (SELECT highlight(docs_fts, 1, '${MARK_OPEN}', '${MARK_CLOSE}') FROM docs_fts WHERE docs_fts MATCH ?2 AND rowid = d.id) AS marked, d.*
  FROM docs d WHERE d.id IN (SELECT value FROM json_each(?1))`;
/**
 * A "match any" search of several clauses weighs the best of the notes holding any of them
 * (by bm25) again by coverage and closeness: this many per hit asked for, at least CANDIDATES_MIN,
 * and, unless those provably hold the best, the best `limit` holding all of them (an AND query).
 */
const CANDIDATES_PER_HIT = 3;
const CANDIDATES_MIN = 30;
const byScore = (a: RankedId, b: RankedId) => b.score - a.score || a.id - b.id;
/** The candidates' title and body (?1, JSON ids), read for where they hold the query's words (positions.ts). */
const CANDIDATE_TEXT = "SELECT f.rowid, f.title, f.body FROM json_each(?1) j JOIN docs_fts f ON f.rowid = j.value";

export interface DocRow {
  id: number;
  path: string;
  producer: Producer;
  title: string;
  tags: string;
  updated_at: number;
  hash: string;
  mtime_ms: number;
  /** noteName(path); null until the document's links are extracted (schema v4). */
  name: string | null;
  /** Each chunk's length in the stored body, JSON; null for one chunk (schema v5). */
  chunk_lengths: string | null;
}

export class Ranking {
  /** Searches that asked FTS5 for the best notes holding every word, and those whose candidates proved them instead. */
  readonly counts = { everyWordQueries: 0, provenByCandidates: 0 };

  constructor(
    private readonly db: Database,
    /** The store's read(): every read outside a write (the pending-rows rule). */
    private readonly read: Reader,
    private readonly firstPass: FirstPass | undefined,
  ) {}

  /**
   * Ranked hits, one per document. docs_fts ranks documents by bm25: the filters are part of
   * its MATCH, so FTS5 intersects them with the words before anything is scored, and the
   * core's ORDER BY … LIMIT keeps only the best. "all" (or a single clause): the best `limit`
   * holding every clause. "any" with several clauses: the best candidates holding any clause,
   * and (unless the candidates prove them) the best holding all, their text read (positions.ts)
   * for which clauses each holds and how close together, then ordered by anyScore(). Then, for
   * the hits alone (and only when `snippets`), each one's best chunk and snippet.
   */
  match(query: ParsedQuery, mode: MatchMode, limit: number, snippets: boolean): SearchHit[] {
    const parts = clauses(query);
    const text = ftsExpression(parts, "OR");
    let ranked: Array<RankedId & { coverage: number }>;
    /** Candidates that, holding every clause, make the query for the best holding all needless (once FTS5 confirms it). */
    let proof: number[] | undefined;
    let weighEvery: (() => void) | undefined;
    if (mode === "all" || parts.length === 1) {
      ranked = this.topByRank(parts, "AND", query, limit).map((r) => ({ ...r, coverage: 1 }));
    } else {
      const stems = clauseStems(parts);
      const weights = clauseWeights(query);
      const total = weights.reduce((a, b) => a + b, 0);
      const weigh = (found: Array<RankedId>) => {
        const texts = this.read(CANDIDATE_TEXT).values(JSON.stringify(found.map((r) => r.id))) as [number, string, string][];
        const text = new Map(found.map((r) => [r.id, r.score]));
        return texts.map(([id, title, body]) => {
          const at = clausePositions(stems, [title, body]);
          // FTS5 matched it, so it holds a clause even where this stemmer reads a word otherwise.
          const coverage = Math.max(queryCoverage(weights, at.held), Math.min(...weights) / total);
          const score = text.get(id)!;
          return {
            id,
            coverage: Math.round(coverage * 1000) / 1000,
            score: anyScore(score, coverage, closeness(at.occurrences)),
            bm25: score,
            every: at.held.every(Boolean),
          };
        });
      };
      const depth = Math.max(CANDIDATES_MIN, limit * CANDIDATES_PER_HIT);
      const any = this.topByRank(parts, "OR", query, depth);
      const weighed = weigh(any).sort(byScore);
      ranked = weighed;
      // A note past the candidates scored at most the last one's bm25 (θ), so at most
      // anyScore(θ, 1, 1): when the limit-th hit is above that, the hits are the exact best.
      // Otherwise the best holding every word are weighed too — unless `limit` candidates hold
      // every word with a bm25 above θ: those are the best holding every word (a note's bm25
      // is the same for "any" and "all"), already weighed. This stemmer only proposes them;
      // FTS5 confirms it, in the table the hits' snippets are read from (loadApart).
      const theta = any.length === depth ? any[depth - 1]!.score : 0;
      if (theta > 0 && (ranked[limit - 1]?.score ?? 0) < anyScore(theta, 1, 1)) {
        const seen = new Set(any.map((r) => r.id));
        weighEvery = () => {
          this.counts.everyWordQueries++;
          ranked = [...ranked, ...weigh(this.topByRank(parts, "AND", query, limit).filter((r) => !seen.has(r.id)))].sort(byScore);
        };
        const every = weighed.filter((r) => r.every).sort((a, b) => b.bm25 - a.bm25);
        if (snippets && every.length >= limit && every[limit - 1]!.bm25 > theta) proof = every.slice(0, limit).map((r) => r.id);
        else weighEvery();
      }
    }
    let top = ranked.slice(0, limit);
    let marked: Map<number, string> | undefined;
    const apart = snippets && parts.length > 1;
    if (proof) {
      // (Only asked for with snippets: the table is loaded for them anyway.)
      this.loadApart([...new Set([...proof, ...top.map((r) => r.id)])]);
      const holding = this.holdingApart(ftsExpression(parts, "AND"));
      if (proof.every((id) => holding.has(id))) this.counts.provenByCandidates++;
      else {
        // This stemmer read a word as FTS5 does not: the query decides.
        weighEvery!();
        top = ranked.slice(0, limit);
        this.loadApart(top.map((r) => r.id));
      }
    } else if (apart) this.loadApart(top.map((r) => r.id));
    if (apart) marked = this.markApart(text);
    ranked = top;
    const ids = JSON.stringify(ranked.map((r) => r.id));
    let rows: Array<DocRow & { rank: number; marked: string | null }>;
    if (marked) {
      rows = this.read<DocRow & { rank: number; marked: null }>(RANKED_PLAIN).all(ids);
      for (const row of rows) row.marked = marked.get(row.id) ?? null;
    } else if (snippets) rows = this.read<DocRow & { rank: number; marked: string | null }>(RANKED_MARKED).all(ids, text);
    else rows = this.read<DocRow & { rank: number; marked: null }>(RANKED_PLAIN).all(ids);
    const byId = new Map(ranked.map((r) => [r.id, r]));
    const hits = rows.map((row) => {
      const r = byId.get(row.id)!;
      if (row.marked === null) return { row, r, seq: 0, snippet: "" };
      const chunk = bestChunk(splitMarked(row.marked, row.chunk_lengths === null ? [] : (JSON.parse(row.chunk_lengths) as number[])));
      return { row, r, seq: chunk.seq, snippet: markedSnippet(chunk.marked) };
    });
    return hits
      .sort((a, b) => b.r.score - a.r.score || (a.row.path < b.row.path ? -1 : a.row.path > b.row.path ? 1 : 0))
      .map((h) => docHit({ ...h.row, seq: h.seq }, h.r.score, h.snippet, h.r.coverage));
  }

  /**
   * The best `k` documents of the clauses joined by `op`, by bm25 (score: −bm25, higher is
   * better): from the champion lists where they can prove it, else one FTS5 query.
   */
  private topByRank(parts: string[][], op: "AND" | "OR", filters: SearchFilters, k: number): RankedId[] {
    const ranked = this.firstPass?.topK(
      parts.map((p) => ftsExpression([p], "AND")),
      op,
      k,
      filters.tags.length || filters.producers.length ? (ids) => passingFilters(this.read, ids, filters) : undefined,
    );
    if (ranked) return ranked;
    const rows = this.read(TOP_BY_RANK).values(docExpression(ftsExpression(parts, op), filters), k) as [number, number][];
    return rows.map(([id, rank]) => ({ id, score: -rank }));
  }

  /**
   * These documents' title and body, alone in a temporary FTS5 table (search_hl) of the same
   * tokenizer, to highlight them (markApart): the same as highlighting them in docs_fts (a
   * document matches there as here), but each MATCH there seeks every clause's doclist in every
   * segment for each document. A query of one clause seeks once, and stays with docs_fts.
   */
  private loadApart(ids: number[]): void {
    if (!this.apart) {
      this.db.run("CREATE TEMP TABLE IF NOT EXISTS search_hl_text (title TEXT, body TEXT)");
      this.db.run(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_hl USING fts5 (title, body, content = 'search_hl_text', tokenize = '${DOC_TOKENIZER}')`);
      this.apart = {
        clearIndex: this.db.query("INSERT INTO search_hl (search_hl) VALUES ('delete-all')"),
        clearText: this.db.query("DELETE FROM search_hl_text"),
        text: this.db.query(
          "INSERT INTO search_hl_text (rowid, title, body) SELECT rowid, title, body FROM docs_fts WHERE rowid IN (SELECT value FROM json_each(?))",
        ),
        index: this.db.query("INSERT INTO search_hl (rowid, title, body) SELECT rowid, title, body FROM search_hl_text"),
        marked: this.db.query(`SELECT rowid, highlight(search_hl, 1, '${MARK_OPEN}', '${MARK_CLOSE}') FROM search_hl WHERE search_hl MATCH ?`),
        holding: this.db.query("SELECT rowid FROM search_hl WHERE search_hl MATCH ?"),
      };
    }
    const a = this.apart;
    a.clearIndex.run();
    a.clearText.run();
    a.text.run(JSON.stringify(ids));
    a.index.run();
  }
  private apart: Record<"clearIndex" | "clearText" | "text" | "index" | "marked" | "holding", Statement> | undefined;

  /** The loaded documents (loadApart) that match `text`. */
  private holdingApart(text: string): Set<number> {
    return new Set((this.apart!.holding.values(text) as [number][]).map((r) => r[0]));
  }

  /** highlight() of the loaded documents' bodies (loadApart) for `text`, by id. */
  private markApart(text: string): Map<number, string> {
    return new Map(this.apart!.marked.values(text) as [number, string][]);
  }

  /**
   * Each document's best chunk for `text` (an ftsExpression) and its snippet: one highlight()
   * of each document's body, the chunk holding the most distinct matched words (then the most
   * matches, then the first) is the hit's, and its snippet is cut from the same text. A
   * document that does not match `text` is left out.
   */
  bestChunks(text: string, docIds: number[]): Map<number, { seq: number; snippet: string }> {
    const out = new Map<number, { seq: number; snippet: string }>();
    if (docIds.length === 0) return out;
    const ids = JSON.stringify(docIds);
    // The chunks' lengths, to find them again in the highlighted body (joined by "\n\n").
    const lengths = new Map<number, number[]>();
    for (const [doc, json] of this.read("SELECT id, chunk_lengths FROM docs WHERE id IN (SELECT value FROM json_each(?)) AND chunk_lengths IS NOT NULL").values(
      ids,
    ) as [number, string][]) {
      lengths.set(doc, JSON.parse(json) as number[]);
    }
    const marked = this.read(
      `SELECT rowid, highlight(docs_fts, 1, '${MARK_OPEN}', '${MARK_CLOSE}') FROM docs_fts
          WHERE docs_fts MATCH ? AND rowid IN (SELECT value FROM json_each(?))`,
    ).values(text, ids) as [number, string][];
    for (const [id, body] of marked) {
      const chunk = bestChunk(splitMarked(body, lengths.get(id) ?? []));
      out.set(id, { seq: chunk.seq, snippet: markedSnippet(chunk.marked) });
    }
    return out;
  }
}

export function docHit(row: Omit<DocRow, "name" | "chunk_lengths"> & { seq: number }, score: number, snippet: string, coverage = 0): SearchHit {
  return toHit({
    path: row.path,
    seq: row.seq,
    producer: row.producer,
    title: row.title,
    tags: JSON.parse(row.tags) as string[],
    updatedAt: new Date(row.updated_at),
    score,
    coverage,
    snippet,
  });
}
