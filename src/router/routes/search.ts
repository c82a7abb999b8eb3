// POST /search: federated search across every producer.
import { createRoute, z } from "@hono/zod-openapi";
import { errorResponse } from "../../common/errors";
import type { RouterApp } from "../app-types";
import { SEARCH_LIMIT } from "../search/limits";
import { SearchRequest } from "../search/schema";
import { search } from "../search/search";
import { authResponses, SearchHit, SearchMode } from "./schemas";

const StageScore = z.object({ rank: z.number().int().openapi({ description: "place in that stage's list, from 1" }), score: z.number() });

export const HitExplain = z
  .object({
    bm25: StageScore.nullable().openapi({
      description:
        "rank and raw score in the full-text list (bm25; with match any, weighed by coverage and closeness); null when that list (read 50 deep in hybrid mode) lacks the hit",
    }),
    vector: StageScore.nullable().openapi({
      description: "rank and cosine similarity among the vector neighbours; null in bm25 mode or beyond the 50 nearest",
    }),
    fused: StageScore.openapi({ description: "rank and score after fusion (in bm25 mode, the BM25 list itself)" }),
    rerank: z
      .object({
        rank: z.number().int().nullable().openapi({ description: "rank by the reranker's score alone; null when its answer left the hit out" }),
        raw_score: z.number().nullable().openapi({ description: "the reranker's score as it answered it" }),
        score: z.number().openapi({ description: "that score scaled 0–1 over the candidates" }),
        retrieval_weight: z
          .number()
          .openapi({ description: "retrieval's share of the blend at the hit's fused rank: 0.75 for ranks 1–3, 0.6 for 4–10, 0.4 beyond" }),
        blended: z.number().openapi({ description: "retrieval_weight / fused rank + (1 − retrieval_weight) × score: the final order" }),
      })
      .nullable()
      .openapi({ description: "null when no reranker ran or the hit was past its depth" }),
  })
  .openapi("SearchHitExplain");

export const RerankStatus = z
  .object({
    applied: z.boolean().openapi({ description: "false: the hits are in fused order, and `reason` says why" }),
    reason: z.string().optional().openapi({ example: "the reranker did not answer within 2000 ms (RERANK_TIMEOUT_MS)" }),
    kind: z.enum(["http", "llm"]).optional().openapi({ description: "http = RERANK_URL; llm = yes/no prompts to the chat model (RERANK_LLM)" }),
    model: z.string().optional(),
    candidates: z.number().int().optional().openapi({ description: "fused hits sent to the reranker (RERANK_DEPTH at most)" }),
    took_ms: z.number().optional(),
  })
  .openapi("RerankStatus", { description: "The rerank stage: present when a reranker is configured, or with explain" });

export const SearchResponse = z
  .object({
    mode: SearchMode,
    hits: z.array(SearchHit.extend({ explain: HitExplain.optional() })),
    rerank: RerankStatus.optional(),
    took_ms: z.number(),
  })
  .openapi("SearchResponse");

const route = createRoute({
  method: "post",
  path: "/search",
  operationId: "search",
  tags: ["search"],
  summary: "Federated search",
  security: [{ bearer: [] }],
  request: { body: { required: true, content: { "application/json": { schema: SearchRequest } } } },
  responses: {
    200: {
      description:
        "Ranked hits, one per document. With a reranker configured (RERANK_URL, or RERANK_LLM with a chat model) the top RERANK_DEPTH fused hits " +
        "are reordered by a position-aware blend of retrieval rank and reranker score; a failing or slow reranker leaves the fused order, and `rerank` says why",
      content: { "application/json": { schema: SearchResponse } },
    },
    400: errorResponse(`Bad query or limit (1–${SEARCH_LIMIT.max})`),
    ...authResponses,
  },
});

export const registerSearch = (app: RouterApp) =>
  app.openapi(route, async (c) => {
    const { query, limit, explain, rerank, match } = c.req.valid("json");
    const started = performance.now();
    const result = await search(c.env.deps.search, query, limit, { explain, rerank, match });
    return c.json({ ...result, took_ms: Number((performance.now() - started).toFixed(2)) }, 200);
  });
