// Schemas shared by several router routes.
import { z } from "@hono/zod-openapi";
import { errorResponse, STORAGE_FULL_DESCRIPTION } from "../../common/errors";
import { hookRoutesText } from "../../common/scoped-token";
import { PRODUCERS } from "../index/types";

export const SearchHit = z
  .object({
    id: z.string().openapi({ description: "`path#chunk` of the best-matching chunk", example: "raw/deploy.md#0" }),
    path: z.string().openapi({ description: "vault-relative path", example: "raw/deploy.md" }),
    producer: z.enum(PRODUCERS),
    title: z.string(),
    snippet: z.string().openapi({ description: "passage with matched terms wrapped in <mark>…</mark>" }),
    score: z.number().openapi({
      description:
        "0–1 relative to the best hit of this answer (the best is 1), 3 decimals: 0.5 scored half the best. Each stage's raw score (bm25, cosine, fused, rerank) is under `explain`",
      example: 0.734,
    }),
    coverage: z.number().openapi({
      description:
        "0–1: the share of the query's words (stop words aside) the note holds; a quoted phrase counts as its words, held only together. 0 for hits found without words (filters alone, vector neighbours)",
      example: 0.667,
    }),
    tags: z.array(z.string()),
    updated_at: z.string().openapi({ format: "date-time" }),
  })
  .openapi("SearchHit");

export const SearchMode = z
  .enum(["bm25", "hybrid"])
  .openapi({ description: "bm25 alone, or BM25 and vector search fused by score (each list scaled to 0–1, 0.5 each)" });

/** Shared 401/403/503 responses for the documents of bearer-protected routes. */
export const authResponses = {
  401: errorResponse("Missing or wrong bearer token, or an expired scoped token"),
  403: errorResponse(`A scoped token (an agent's hooks: ${hookRoutesText()}) on a route outside its scope`),
  503: errorResponse("No server token configured (KB_ROUTER_TOKEN / KB_ROUTER_TOKENS): the router fails closed"),
} as const;

/** The 507 of every route that writes (a full disk is a storage error, not a bug). */
export const storageFullResponses = {
  507: errorResponse(STORAGE_FULL_DESCRIPTION),
} as const;
