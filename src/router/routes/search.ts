// POST /search: federated search across every producer.
import { createRoute, z } from "@hono/zod-openapi";
import { errorResponse } from "../../common/errors";
import type { RouterApp } from "../app";
import { search } from "../search/search";
import { authResponses, SearchHit, SearchMode } from "./schemas";

export const SearchRequest = z
  .object({
    query: z.string().min(1).max(2000).openapi({ description: 'words, "quoted phrases", tag:x, producer:x', example: 'rollback "feature flag" tag:deploy' }),
    limit: z.number().int().min(1).max(100).default(10),
  })
  .openapi("SearchRequest");

export const SearchResponse = z
  .object({ mode: SearchMode, hits: z.array(SearchHit), took_ms: z.number() })
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
    200: { description: "Ranked hits, one per document", content: { "application/json": { schema: SearchResponse } } },
    400: errorResponse("Bad query or limit (1–100)"),
    ...authResponses,
  },
});

export const registerSearch = (app: RouterApp) =>
  app.openapi(route, async (c) => {
    const { query, limit } = c.req.valid("json");
    const started = performance.now();
    const result = await search(c.env.deps.search, query, limit);
    return c.json({ ...result, took_ms: Number((performance.now() - started).toFixed(2)) }, 200);
  });
