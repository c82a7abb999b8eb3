// POST /ingest: classify content and fan it out into the vault, indexed at once.
import { createRoute, z } from "@hono/zod-openapi";
import { errorResponse } from "../../common/errors";
import type { RouterApp } from "../app";
import { authResponses } from "./schemas";
import { KINDS } from "../ingest/classify";
import { ingest } from "../ingest/ingest";
import { INGEST_SOURCE_MAX_CHARS, INGEST_TAGS, INGEST_TITLE_MAX_CHARS } from "../ingest/limits";

export const IngestRequest = z
  .object({
    content: z.string().refine((s) => s.trim().length > 0, "content is empty").openapi({ example: "# Deploys\nRoll back with `make rollback`." }),
    tags: z
      .array(z.string().min(1).max(INGEST_TAGS.maxChars, `a tag is at most ${INGEST_TAGS.maxChars} characters`))
      .max(INGEST_TAGS.max, `at most ${INGEST_TAGS.max} tags`)
      .default([]),
    title: z.string().max(INGEST_TITLE_MAX_CHARS).optional(),
    source: z.string().max(INGEST_SOURCE_MAX_CHARS).optional().openapi({ description: "who sent it (default api)" }),
  })
  .openapi("IngestRequest");

export const IngestResponse = z
  .object({
    id: z.string().openapi({ description: "first 16 hex of sha256(content)", example: "3f2a9c0d1e4b5a67" }),
    kind: z.enum(KINDS),
    paths: z.array(z.string()).openapi({ description: "vault paths written: the note, then the kind's own file" }),
    indexed: z.boolean(),
    duplicate: z.boolean().openapi({ description: "true when the same content was ingested before (200, nothing written)" }),
  })
  .openapi("IngestResponse");

const route = createRoute({
  method: "post",
  path: "/ingest",
  operationId: "ingest",
  tags: ["ingest"],
  summary: "Classify content and fan it out into the vault",
  security: [{ bearer: [] }],
  request: { body: { required: true, content: { "application/json": { schema: IngestRequest } } } },
  responses: {
    201: { description: "Ingested and indexed", content: { "application/json": { schema: IngestResponse } } },
    200: { description: "Already ingested (same content)", content: { "application/json": { schema: IngestResponse } } },
    400: errorResponse("Empty content or bad tags"),
    413: errorResponse("Content over INGEST_MAX_BYTES"),
    ...authResponses,
  },
});

export const registerIngest = (app: RouterApp) =>
  app.openapi(route, async (c) => {
    const result = await ingest(c.env.deps.ingest, c.req.valid("json"));
    return c.json(result, result.duplicate ? 200 : 201);
  });
