// POST /search's domain: federated search over every producer. BM25 alone without
// embeddings; with them, BM25 and vector results combined by score-aware fusion (fuseScores).
// Reciprocal rank fusion (fuseRrf, k = 60) stays available: on the labelled relevance set
// (scripts/bench/relevance.ts) the score-aware fusion ranked better with both embedding
// fixtures, so hybrid search uses it, as issue 3 allows. An optional rerank stage (rerank.ts)
// then reorders the top RERANK_DEPTH fused hits, and `explain` shows every stage's scores.

import { splitFrontmatter } from "../index/document";
import { hasText, parseQuery } from "../index/query";
import { type IndexStore, type SearchHit, SNIPPET_MARK } from "../index/types";
import { readNoteOpening } from "../notes/file";
import { blend, RERANK_TEXT_CHARS, RerankError, type Reranker, type RerankStatus, retrievalWeight } from "./rerank";
import type { SearchRequestOptions } from "./schema";

export type SearchMode = "bm25" | "hybrid";

export interface SearchDeps {
  index: IndexStore;
  /** Embeds the query text when embeddings are configured. */
  embed?: (texts: string[]) => Promise<number[][]>;
  /** The optional rerank stage (RERANK_URL, or RERANK_LLM with a chat model). */
  rerank?: Reranker;
  /** The vault, for the text a reranker reads (a hit's note); without it, title and snippet. */
  vault?: string;
}

export type { SearchRequestOptions } from "./schema";

/** A hit's place in one stage's list: rank from 1, and the stage's own score. */
export interface StageScore {
  rank: number;
  score: number;
}

/** Why a hit is where it is (`"explain": true`). */
export interface HitExplain {
  /**
   * Its full-text rank and raw score (bm25, weighed by coverage and closeness in match "any");
   * null when the full-text list (read FUSION_DEPTH deep) lacks it.
   */
  bm25: StageScore | null;
  /** Its vector rank and cosine similarity; null in bm25 mode or beyond FUSION_DEPTH. */
  vector: StageScore | null;
  /** Its place after fusion (in bm25 mode, the BM25 list itself). */
  fused: StageScore;
  /** The reranker's view; null when no reranker ran or the hit was past its depth. */
  rerank: {
    /** Its rank by the reranker's score alone (null when the reranker's answer left it out). */
    rank: number | null;
    /** The reranker's score as the service answered it. */
    raw_score: number | null;
    /** That score scaled 0–1 over the candidates. */
    score: number;
    /** The share of retrieval in the blend at its fused rank (BLEND_WEIGHTS). */
    retrieval_weight: number;
    /** The blended score the final order is sorted by. */
    blended: number;
  } | null;
}

export type ExplainedHit = SearchHit & { explain?: HitExplain };

export interface SearchResult {
  mode: SearchMode;
  hits: ExplainedHit[];
  /** Present when a reranker is configured (or explain asked): whether it ran, else why not. */
  rerank?: RerankStatus;
}

/** Reciprocal rank fusion constant (Cormack et al.); 60 is the usual choice. */
export const RRF_K = 60;
/** How deep each list is read before fusing. */
export const FUSION_DEPTH = 50;

export async function search(deps: SearchDeps, query: string, limit: number, opts: SearchRequestOptions = {}): Promise<SearchResult> {
  const parsed = parseQuery(query);
  const useVectors = deps.embed !== undefined && deps.index.hasVectors && hasText(parsed);
  const reranker = opts.rerank === false ? undefined : deps.rerank;
  const reranking = reranker !== undefined && hasText(parsed);
  // With a reranker the candidates are the top `depth` fused hits, cut to `limit` after it.
  const depth = reranking ? Math.max(limit, reranker.depth) : limit;
  const match = opts.match ?? "any";

  let bm25: SearchHit[];
  let nearest: SearchHit[] = [];
  let fused: SearchHit[];
  if (!useVectors) {
    bm25 = await deps.index.search(parsed, depth, { match });
    fused = bm25;
  } else {
    const text = [...parsed.terms, ...parsed.phrases.map((p) => p.join(" "))].join(" ");
    const listDepth = Math.max(FUSION_DEPTH, depth);
    // Fusion needs the BM25 ranking only: snippets are cut afterwards, for the BM25 hits that
    // survive it (at most `depth`, not FUSION_DEPTH).
    const [lexical, [vector]] = await Promise.all([deps.index.search(parsed, listDepth, { snippets: false, match }), deps.embed!([text])]);
    bm25 = lexical;
    nearest = await deps.index.vectorSearch(vector!, listDepth, { tags: parsed.tags, producers: parsed.producers });
    // Strict: a neighbour that does not hold every word is no answer, however near.
    if (match === "all") {
      const holding = new Set(bm25.map((h) => h.path));
      nearest = nearest.filter((h) => holding.has(h.path));
    }
    const top = fuseScores([bm25, nearest], depth);
    const fromText = new Set(bm25.map((h) => h.path));
    const marked = await deps.index.snippets(
      parsed,
      top.filter((h) => fromText.has(h.path)).map((h) => h.path),
    );
    fused = top.map((h) => ({ ...h, ...marked.get(h.path) }));
  }
  const mode: SearchMode = useVectors ? "hybrid" : "bm25";
  // No rerank stage and no explain: the fused list is the answer, nothing more to build.
  if (reranker === undefined && !opts.explain) return { mode, hits: readable(fused.length > limit ? fused.slice(0, limit) : fused) };

  let status: RerankStatus | undefined;
  let order: Array<{ hit: SearchHit; fusedRank: number; rerank: HitExplain["rerank"] }> = fused.map((hit, i) => ({ hit, fusedRank: i + 1, rerank: null }));
  if (reranker && !reranking) status = { applied: false, reason: "the query has no words to rerank by (filters only)", kind: reranker.kind };
  else if (reranker && fused.length === 0) status = { applied: false, reason: "no hits to rerank", kind: reranker.kind };
  else if (reranker) {
    const outcome = await rerankStage(deps, reranker, query, fused.slice(0, reranker.depth));
    status = outcome.status;
    if (outcome.scores) {
      const ranked = blend(outcome.scores);
      const head = ranked.map((b) => ({
        hit: { ...fused[b.index]!, score: round(b.blended) },
        fusedRank: b.index + 1,
        rerank: {
          rank: b.rerankRank,
          raw_score: Number.isNaN(outcome.scores![b.index]!) ? null : outcome.scores![b.index]!,
          score: round(b.rerank),
          retrieval_weight: b.retrievalWeight,
          blended: round(b.blended),
        },
      }));
      // Past the depth a hit has no rerank score: the same blend with s = 0 keeps it below every candidate.
      const tail = order.slice(ranked.length).map((o) => ({ ...o, hit: { ...o.hit, score: round(retrievalWeight(o.fusedRank) / o.fusedRank) } }));
      order = [...head, ...tail];
    }
  } else if (opts.explain && deps.rerank) status = { applied: false, reason: "the request turned it off (rerank: false)", kind: deps.rerank.kind };
  else if (opts.explain) status = { applied: false, reason: "no reranker is configured (RERANK_URL, or RERANK_LLM with a chat model)" };

  const kept = order.slice(0, limit);
  const hits: ExplainedHit[] = readable(opts.explain ? explainHits(kept, bm25, nearest, fused, mode) : kept.map((o) => o.hit));
  return status ? { mode, hits, rerank: status } : { mode, hits };
}

const round = (x: number) => Number(x.toFixed(6));

/**
 * The answer's scores as a person reads them: 0–1 relative to the best hit of this answer
 * (best = 1), 3 decimals. Each stage's own scores stay under `explain`.
 */
export function readable<T extends SearchHit>(hits: T[]): T[] {
  const best = hits.reduce((m, h) => Math.max(m, h.score), 0);
  return hits.map((h) => ({ ...h, score: best > 0 ? Math.round((Math.max(0, h.score) / best) * 1000) / 1000 : 1 }));
}

function explainHits(
  order: Array<{ hit: SearchHit; fusedRank: number; rerank: HitExplain["rerank"] }>,
  bm25: SearchHit[],
  nearest: SearchHit[],
  fused: SearchHit[],
  mode: SearchMode,
): ExplainedHit[] {
  const place = (list: SearchHit[]) => new Map(list.map((h, i) => [h.path, { rank: i + 1, score: h.score }]));
  const lexical = place(bm25);
  const vector = place(nearest);
  return order.map(({ hit, fusedRank, rerank }) => ({
    ...hit,
    explain: {
      bm25: lexical.get(hit.path) ?? null,
      vector: mode === "hybrid" ? (vector.get(hit.path) ?? null) : null,
      fused: { rank: fusedRank, score: fused[fusedRank - 1]!.score },
      rerank,
    },
  }));
}

/**
 * Runs the reranker over the candidates within its time bound. Never throws: a failure, a bad
 * answer or the bound passing gives `scores` undefined and the reason in the status.
 */
async function rerankStage(deps: SearchDeps, reranker: Reranker, query: string, candidates: SearchHit[]): Promise<{ scores?: number[]; status: RerankStatus }> {
  const started = performance.now();
  const base = { kind: reranker.kind, ...(reranker.model ? { model: reranker.model } : {}), candidates: candidates.length };
  const took = () => Number((performance.now() - started).toFixed(2));
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new RerankError(`the reranker did not answer within ${reranker.timeoutMs} ms (RERANK_TIMEOUT_MS)`));
    }, reranker.timeoutMs);
  });
  try {
    const work = (async () => {
      const texts = await Promise.all(candidates.map((h) => rerankText(h, deps.vault)));
      return reranker.score(rerankQuery(query), texts, controller.signal);
    })();
    work.catch(() => {}); // settled after the deadline: nobody is waiting any more
    const scores = await Promise.race([work, deadline]);
    if (scores.length !== candidates.length) throw new RerankError(`the reranker gave ${scores.length} scores for ${candidates.length} documents`);
    return { scores, status: { applied: true, ...base, took_ms: took() } };
  } catch (err) {
    const reason = err instanceof RerankError ? err.message : `the reranker failed: ${(err as Error).message}`;
    return { status: { applied: false, reason, ...base, took_ms: took() } };
  } finally {
    clearTimeout(timer);
  }
}

/** The query as typed, less its tag:/producer: filters (a reranker reads language, not syntax). */
export function rerankQuery(query: string): string {
  return query
    .split(/\s+/)
    .filter((w) => w !== "" && !/^(tag|producer):/i.test(w))
    .join(" ");
}

const unmark = (s: string) => s.replaceAll(SNIPPET_MARK.open, "").replaceAll(SNIPPET_MARK.close, "");
const flat = (s: string) => s.replace(/\s+/g, " ").trim();

/**
 * What the reranker reads of a hit, at most RERANK_TEXT_CHARS: its title, the passage that
 * matched (its snippet), then the note's opening from the vault (frontmatter removed). A note
 * that cannot be read (gone since indexing) is represented by title and snippet alone.
 */
export async function rerankText(hit: SearchHit, vault: string | undefined): Promise<string> {
  const passage = flat(unmark(hit.snippet));
  let opening = "";
  if (vault) {
    try {
      // Frontmatter comes first and may be long: read well past the characters kept.
      opening = flat(splitFrontmatter(await readNoteOpening(vault, hit.path, RERANK_TEXT_CHARS * 4)).body.slice(0, RERANK_TEXT_CHARS * 2));
    } catch {
      opening = "";
    }
  }
  const core = passage.replace(/^…\s*|\s*…$/g, "");
  const parts = [hit.title, ...(core && !opening.slice(0, RERANK_TEXT_CHARS).includes(core) ? [passage] : []), opening].filter((p) => p !== "");
  return parts.join("\n\n").slice(0, RERANK_TEXT_CHARS);
}

/**
 * Score-aware fusion by document path. Each list's scores are min-max normalised to 0–1
 * within that list (the best hit 1, the worst 0; every hit 1 when all score alike), and a
 * document's fused score is the weighted sum over the lists:
 *
 *   fused(d) = Σᵢ wᵢ · (sᵢ(d) − minᵢ) / (maxᵢ − minᵢ),   0 for a list that lacks d
 *
 * with equal weights by default (0.5 BM25, 0.5 vector: fixed in advance, not tuned on the
 * relevance set). Unlike RRF it keeps how far apart the hits of one list are: a clear BM25
 * winner stays ahead of a middling vector neighbour. Ties go to the path, ascending. The first
 * list's hit is kept for its fields (a BM25 hit's marked snippet wins over a vector hit's).
 */
export function fuseScores(lists: SearchHit[][], limit: number, weights: number[] = lists.map(() => 1 / lists.length)): SearchHit[] {
  const fused = new Map<string, { hit: SearchHit; score: number }>();
  lists.forEach((list, i) => {
    const weight = weights[i] ?? 0;
    let lo = Infinity;
    let hi = -Infinity;
    for (const h of list) [lo, hi] = [Math.min(lo, h.score), Math.max(hi, h.score)];
    for (const hit of list) {
      const add = weight * (hi > lo ? (hit.score - lo) / (hi - lo) : 1);
      const entry = fused.get(hit.path);
      if (entry) entry.score += add;
      else fused.set(hit.path, { hit, score: add });
    }
  });
  return ranked(fused, limit);
}

/** Reciprocal rank fusion by document path: Σ 1 / (k + rank), rank from 1; the first list's hit is kept. */
export function fuseRrf(lists: SearchHit[][], limit: number, k = RRF_K): SearchHit[] {
  const fused = new Map<string, { hit: SearchHit; score: number }>();
  for (const list of lists) {
    list.forEach((hit, rank) => {
      const entry = fused.get(hit.path);
      const add = 1 / (k + rank + 1);
      if (entry) entry.score += add;
      else fused.set(hit.path, { hit, score: add });
    });
  }
  return ranked(fused, limit);
}

function ranked(fused: Map<string, { hit: SearchHit; score: number }>, limit: number): SearchHit[] {
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || (a.hit.path < b.hit.path ? -1 : a.hit.path > b.hit.path ? 1 : 0))
    .slice(0, limit)
    .map(({ hit, score }) => ({ ...hit, score: Number(score.toFixed(6)) }));
}
