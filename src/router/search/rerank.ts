// The optional rerank stage of POST /search (issue 21 part 4): a second opinion on the top
// RERANK_DEPTH fused hits, from a cross-encoder behind RERANK_URL or, with RERANK_LLM and only a
// chat model configured, from yes/no relevance prompts through the LLM gateway. The reranker's
// scores are blended with the retrieval rank by position (blend()), and a reranker that fails,
// answers nonsense or is slower than RERANK_TIMEOUT_MS leaves the fused order as it was: the
// search answers anyway and says why (RerankStatus).
import { type ChatEndpoint, chat } from "../llm";

/** Scores `texts` for `query`: one score per text, higher = more relevant; NaN = not scored. */
export interface Reranker {
  /** "http" (RERANK_URL) or "llm" (yes/no prompts), for the response. */
  readonly kind: "http" | "llm";
  /** The model named to the service, when one is. */
  readonly model?: string;
  /** How many fused hits are reranked (RERANK_DEPTH). */
  readonly depth: number;
  /** The bound on the whole stage (RERANK_TIMEOUT_MS); past it the fused order stands. */
  readonly timeoutMs: number;
  score(query: string, texts: string[], signal: AbortSignal): Promise<number[]>;
}

/** What the search response says about the stage. */
export interface RerankStatus {
  applied: boolean;
  /** Why not, when not applied. */
  reason?: string;
  kind?: Reranker["kind"];
  model?: string;
  /** Hits sent to the reranker. */
  candidates?: number;
  took_ms?: number;
}

/** A reranker answer the stage cannot use; its message is the status's reason. */
export class RerankError extends Error {}

/**
 * Request bodies of the two wire families. `documents`: Cohere, Jina and llama.cpp's server
 * (`{model, query, documents, top_n}`); `texts`: text-embeddings-inference (`{query, texts}`).
 * Either family's answer is read whatever was sent (parseRerankResponse).
 */
export const RERANK_FORMATS = ["documents", "texts"] as const;
export type RerankFormat = (typeof RERANK_FORMATS)[number];

export interface HttpRerankerOptions {
  url: string;
  apiKey?: string;
  model?: string;
  format: RerankFormat;
  depth: number;
  timeoutMs: number;
}

/** RERANK_URL may name the service or its rerank route (…/rerank, …/v1/rerank). */
export function rerankRoute(url: string): string {
  const u = new URL(url);
  if (u.pathname === "/" || u.pathname === "") u.pathname = "/rerank";
  return u.toString();
}

export function httpReranker(opts: HttpRerankerOptions): Reranker {
  const route = rerankRoute(opts.url);
  const origin = new URL(route).origin;
  return {
    kind: "http",
    model: opts.model,
    depth: opts.depth,
    timeoutMs: opts.timeoutMs,
    async score(query, texts, signal) {
      // Only the fields every server of the family takes: TEI serves one model and truncates
      // inputs past its limit when asked; Cohere and Jina need `model`, llama.cpp ignores it.
      const body =
        opts.format === "texts"
          ? { query, texts, truncate: true }
          : { ...(opts.model ? { model: opts.model } : {}), query, documents: texts, top_n: texts.length };
      let res: Response;
      try {
        res = await fetch(route, {
          method: "POST",
          headers: { "content-type": "application/json", ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}) },
          body: JSON.stringify(body),
          signal,
        });
      } catch (err) {
        if (signal.aborted) throw err;
        throw new RerankError(`the reranker is unreachable at ${origin}: ${(err as Error).message}`);
      }
      const text = await res.text();
      if (!res.ok) throw new RerankError(`the reranker answered ${res.status}${text ? `: ${text.slice(0, 200)}` : ""}`);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new RerankError("the reranker answered something that is not JSON");
      }
      return parseRerankResponse(json, texts.length);
    },
  };
}

/**
 * Reads any of the answer shapes: TEI's `[{index, score}]`, and Cohere's, Jina's and llama.cpp's
 * `{results: [{index, relevance_score}]}` (also under `data`, and `score` for `relevance_score`).
 * Returns a score per input, NaN for an input the answer left out (a smaller top_n); an index
 * out of range, given twice, or a score that is not a finite number makes the answer unusable.
 */
export function parseRerankResponse(json: unknown, n: number): number[] {
  const list = Array.isArray(json) ? json : isObject(json) ? (json.results ?? json.data) : undefined;
  if (!Array.isArray(list)) throw new RerankError("the reranker's answer has no results list ([{index, score}] or {results: [{index, relevance_score}]})");
  const scores = new Array<number>(n).fill(Number.NaN);
  for (const item of list) {
    if (!isObject(item)) throw new RerankError("the reranker's answer holds a result that is not an object");
    const { index } = item;
    const score = item.relevance_score ?? item.score;
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= n) {
      throw new RerankError(`the reranker's answer names index ${JSON.stringify(index)} for ${n} documents`);
    }
    if (typeof score !== "number" || !Number.isFinite(score))
      throw new RerankError(`the reranker's answer gives document ${index} the score ${JSON.stringify(score)}`);
    if (!Number.isNaN(scores[index]!)) throw new RerankError(`the reranker's answer scores document ${index} twice`);
    scores[index] = score;
  }
  if (list.length === 0 && n > 0) throw new RerankError("the reranker's answer scores no document");
  return scores;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** At most this many yes/no prompts in flight at once. */
const LLM_CONCURRENCY = 8;

export const LLM_RERANK_SYSTEM =
  "You judge search results. Given a search query and one document, answer with exactly one word: " +
  "yes if the document is relevant to the query (it answers it or is what was looked for), no otherwise.";

/**
 * Reranking with a chat model: one yes/no prompt per document (yes = 1, no = 0). An answer that
 * is neither counts 0.5; when no document got a yes or a no, the answer is unusable.
 */
export function llmReranker(ep: ChatEndpoint, opts: { depth: number; timeoutMs: number }): Reranker {
  const bounded: ChatEndpoint = { ...ep, timeoutMs: opts.timeoutMs };
  return {
    kind: "llm",
    model: ep.model,
    depth: opts.depth,
    timeoutMs: opts.timeoutMs,
    async score(query, texts, signal) {
      const scores = new Array<number>(texts.length).fill(0.5);
      let judged = 0;
      let next = 0;
      const worker = async () => {
        while (next < texts.length && !signal.aborted) {
          const i = next++;
          let answer: string;
          try {
            answer = (
              await chat(
                bounded,
                [
                  { role: "system", content: LLM_RERANK_SYSTEM },
                  { role: "user", content: `Query: ${query}\n\nDocument:\n${texts[i]}\n\nIs the document relevant to the query? Answer yes or no.` },
                ],
                { maxTokens: 3 },
              )
            ).text;
          } catch (err) {
            throw new RerankError((err as Error).message);
          }
          const word = answer
            .trim()
            .toLowerCase()
            .match(/^[a-z]+/)?.[0];
          if (word === "yes" || word === "no") [scores[i], judged] = [word === "yes" ? 1 : 0, judged + 1];
        }
      };
      await Promise.all(Array.from({ length: Math.min(LLM_CONCURRENCY, texts.length) }, worker));
      if (judged === 0 && texts.length > 0) throw new RerankError("the chat model answered neither yes nor no to any document");
      return scores;
    },
  };
}

/**
 * How much of a hit's blended score comes from retrieval, by its fused rank (1-based); the rest
 * comes from the reranker. The top three stay mostly retrieval's, the tail mostly the
 * reranker's — the position-aware blend qmd uses.
 */
export const BLEND_WEIGHTS = [
  { upTo: 3, retrieval: 0.75 },
  { upTo: 10, retrieval: 0.6 },
  { upTo: Infinity, retrieval: 0.4 },
] as const;

export function retrievalWeight(rank: number): number {
  return BLEND_WEIGHTS.find((w) => rank <= w.upTo)!.retrieval;
}

export interface Blended {
  /** Index into the candidates (their fused order). */
  index: number;
  /** The reranker's score scaled to 0–1 over the candidates (min-max; 0 when all alike or not scored). */
  rerank: number;
  /** 1 + the number of candidates the reranker scored higher (its own ranking); null when not scored. */
  rerankRank: number | null;
  retrievalWeight: number;
  blended: number;
}

/**
 * The blend: for the candidate at fused rank r (1-based) with reranker score s (scaled 0–1),
 *
 *   blended = w(r) · 1/r + (1 − w(r)) · s,   w(r) = 0.75 (r ≤ 3), 0.6 (r ≤ 10), 0.4 (r > 10)
 *
 * 1/r is the retrieval position's score (reciprocal rank). The top hit keeps at least 0.75,
 * which no other candidate reaches (at most 0.75/2 + 0.25 = 0.625 at rank 2, 0.6 + 0.4/4 at
 * rank 4, 0.6 + 0.4/11 past rank 10): a reranker, however wrong, cannot bury retrieval's first
 * hit — an exact match. Below it the reranker moves hits up and down, more so the deeper they
 * were. Returns the candidates best first; ties keep the fused order.
 */
export function blend(raw: number[]): Blended[] {
  const scored = raw.filter((s) => !Number.isNaN(s));
  const lo = Math.min(...scored);
  const hi = Math.max(...scored);
  const scale = (s: number) => (Number.isNaN(s) || !(hi > lo) ? 0 : (s - lo) / (hi - lo));
  const out = raw.map((s, index) => {
    const r = index + 1;
    const w = retrievalWeight(r);
    const rerank = scale(s);
    return {
      index,
      rerank,
      rerankRank: Number.isNaN(s) ? null : 1 + scored.filter((x) => x > s).length,
      retrievalWeight: w,
      blended: w / r + (1 - w) * rerank,
    };
  });
  return out.sort((a, b) => b.blended - a.blended || a.index - b.index);
}

/** The characters of a hit sent to the reranker (cross-encoders read ~512 tokens). */
export const RERANK_TEXT_CHARS = 2000;
