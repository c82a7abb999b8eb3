// POST /search's domain: federated search over every producer. BM25 alone without
// embeddings; with them, BM25 and vector results combined by score-aware fusion (fuseScores).
// Reciprocal rank fusion (fuseRrf, k = 60) stays available: on the labelled relevance set
// (scripts/bench/relevance.ts) the score-aware fusion ranked better with both embedding
// fixtures, so hybrid search uses it, as issue 3 allows.
import { parseQuery, hasText } from "../index/query";
import type { IndexStore, SearchHit } from "../index/types";

export type SearchMode = "bm25" | "hybrid";

export interface SearchDeps {
  index: IndexStore;
  /** Embeds the query text when embeddings are configured. */
  embed?: (texts: string[]) => Promise<number[][]>;
}

export interface SearchResult {
  mode: SearchMode;
  hits: SearchHit[];
}

/** Reciprocal rank fusion constant (Cormack et al.); 60 is the usual choice. */
export const RRF_K = 60;
/** How deep each list is read before fusing. */
const FUSION_DEPTH = 50;

export async function search(deps: SearchDeps, query: string, limit: number): Promise<SearchResult> {
  const parsed = parseQuery(query);
  const useVectors = deps.embed !== undefined && deps.index.hasVectors && hasText(parsed);
  if (!useVectors) return { mode: "bm25", hits: await deps.index.search(parsed, limit) };

  const text = [...parsed.terms, ...parsed.phrases.map((p) => p.join(" "))].join(" ");
  // Fusion needs the BM25 ranking only: snippets are cut afterwards, for the BM25 hits that
  // survive it (at most `limit`, not FUSION_DEPTH).
  const [bm25, [vector]] = await Promise.all([deps.index.search(parsed, FUSION_DEPTH, { snippets: false }), deps.embed!([text])]);
  const nearest = await deps.index.vectorSearch(vector!, FUSION_DEPTH, { tags: parsed.tags, producers: parsed.producers });
  const fused = fuseScores([bm25, nearest], limit);
  const fromText = new Set(bm25.map((h) => h.path));
  const marked = await deps.index.snippets(parsed, fused.filter((h) => fromText.has(h.path)).map((h) => h.path));
  return { mode: "hybrid", hits: fused.map((h) => ({ ...h, ...marked.get(h.path) })) };
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
