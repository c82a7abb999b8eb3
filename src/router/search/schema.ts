// The one declaration of search's input: POST /search's body, the MCP tool's arguments, the
// client's input and the domain's options type.
import { z } from "@hono/zod-openapi";
import { MATCH_MODES } from "../index/types";
import { QUERY_MAX_CHARS, SEARCH_LIMIT } from "./limits";

export const SearchRequest = z
  .object({
    query: z
      .string()
      .min(1)
      .max(QUERY_MAX_CHARS)
      .openapi({ description: 'words, "quoted phrases", tag:x, producer:x', example: 'rollback "feature flag" tag:deploy' }),
    limit: z.number().int().min(1).max(SEARCH_LIMIT.max).default(SEARCH_LIMIT.default),
    explain: z.boolean().default(false).openapi({ description: "add `explain` to every hit: its BM25, vector, fused and rerank scores and ranks" }),
    rerank: z.boolean().default(true).openapi({ description: "false skips the configured reranker for this request" }),
    match: z.enum(MATCH_MODES).default("any").openapi({
      description:
        "any: every word counts — notes holding any word are answered (up to `limit`), ranked by BM25 scaled by the share of the words they hold and how close together they stand; all: only notes holding every word and phrase",
    }),
  })
  .openapi("SearchRequest");
export type SearchRequest = z.infer<typeof SearchRequest>;

/** The request's switches as the domain takes them; each may be left out for its default. */
export type SearchRequestOptions = Partial<Pick<SearchRequest, "explain" | "rerank" | "match">>;
