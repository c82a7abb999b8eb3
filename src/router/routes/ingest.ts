// POST /ingest: classify content and fan it out into the vault, indexed at once.
import { createRoute, z } from "@hono/zod-openapi";
import { ErrorBody, type ErrorDetails, errorResponse, httpErrorOf } from "../../common/errors";
import { log } from "../../common/logger";
import { describeZodError } from "../../common/validation";
import type { RouterApp } from "../app-types";
import { KINDS } from "../ingest/classify";
import { type BatchItemOutcome, ingest, ingestBatch } from "../ingest/ingest";
import { INGEST_BATCH_MAX } from "../ingest/limits";
import { IngestRequest } from "../ingest/schema";
import { authResponses, storageFullResponses } from "./schemas";

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
    ...storageFullResponses,
  },
});

/**
 * An item's schema in the document: IngestRequest as a request reads it, written out in place —
 * a $ref would make IngestRequest a shared component, and openapi-typescript then types its
 * defaulted `tags` as required in /ingest's body too (see inlineRequestSchemas).
 */
function batchItemSchema(): Record<string, unknown> {
  const { $schema: _, ...schema } = z.toJSONSchema(IngestRequest, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  return { title: "IngestRequest", ...schema };
}

export const IngestBatchRequest = z
  .object({
    // Each item is checked on its own (a bad one is refused in its result, the rest go in), so
    // the body's schema takes any item; the document says what an item is.
    items: z
      .array(z.unknown())
      .min(1, "at least one item")
      .max(INGEST_BATCH_MAX, `at most ${INGEST_BATCH_MAX} items`)
      .openapi({
        type: "array",
        minItems: 1,
        maxItems: INGEST_BATCH_MAX,
        items: batchItemSchema(),
        description: `1–${INGEST_BATCH_MAX} items, each a POST /ingest body`,
      }),
  })
  .openapi("IngestBatchRequest");

const IngestBatchItem = z
  .union([
    IngestResponse.extend({
      index: z.number().int(),
      status: z.union([z.literal(201), z.literal(200)]).openapi({ description: "201 ingested, 200 already ingested (duplicate)" }),
    }),
    z.object({
      index: z.number().int(),
      status: z
        .number()
        .int()
        .openapi({ description: "what POST /ingest would have answered: 400 bad item, 413 content over INGEST_MAX_BYTES, 5xx server failure" }),
      error: ErrorBody.shape.error,
    }),
  ])
  .openapi("IngestBatchItem", { description: "one item's outcome, in item order (`index` is its position)" });

export const IngestBatchResponse = z
  .object({
    results: z.array(IngestBatchItem),
    created: z.number().int().openapi({ description: "items ingested now (status 201)" }),
    duplicates: z.number().int().openapi({ description: "items whose content was ingested before (status 200)" }),
    failed: z.number().int().openapi({ description: "items refused or failed (each with its error); nothing of them was written" }),
  })
  .openapi("IngestBatchResponse");

const batchRoute = createRoute({
  method: "post",
  path: "/ingest/batch",
  operationId: "ingestBatch",
  tags: ["ingest"],
  summary: "Ingest many items at once (bulk import)",
  security: [{ bearer: [] }],
  request: { body: { required: true, content: { "application/json": { schema: IngestBatchRequest } } } },
  responses: {
    200: { description: "Every item's outcome, in item order", content: { "application/json": { schema: IngestBatchResponse } } },
    400: errorResponse("No items, more than the batch allows, or a body that is not {items: [...]}"),
    413: errorResponse("Body over MAX_BODY_BYTES"),
    ...authResponses,
    ...storageFullResponses,
  },
});

type BatchItem = z.infer<typeof IngestBatchItem>;
const logger = log("ingest");

/** Each item read by POST /ingest's own schema: the request, or the 400 it would have had. */
function readItem(item: unknown, index: number): IngestRequest | BatchItem {
  const parsed = IngestRequest.safeParse(item);
  if (parsed.success) return parsed.data;
  const { message, details } = describeZodError(parsed.error);
  return { index, status: 400, error: { code: "invalid_request", message, details } };
}

/** An item's outcome as POST /ingest would have answered it. */
function answerOf(outcome: BatchItemOutcome, index: number): BatchItem {
  if ("result" in outcome) return { index, status: outcome.result.duplicate ? 200 : 201, ...outcome.result };
  const http = httpErrorOf(outcome.error);
  if (http) {
    const error = { code: http.code, message: http.message, ...(http.details === undefined ? {} : { details: http.details as ErrorDetails }) };
    return { index, status: http.status, error };
  }
  logger.error(`batch item ${index} failed:`, outcome.error);
  return { index, status: 500, error: { code: "internal_error", message: "the server failed to ingest this item; see its log" } };
}

export const registerIngest = (app: RouterApp) => {
  app.openapi(route, async (c) => {
    const result = await ingest(c.env.deps.ingest, c.req.valid("json"));
    return c.json(result, result.duplicate ? 200 : 201);
  });
  app.openapi(batchRoute, async (c) => {
    const read = c.req.valid("json").items.map(readItem);
    const valid = read.map((r, index) => ({ r, index })).filter((x): x is { r: IngestRequest; index: number } => !("index" in x.r));
    const outcomes = await ingestBatch(
      c.env.deps.ingest,
      valid.map((v) => v.r),
    );
    for (const [i, v] of valid.entries()) read[v.index] = answerOf(outcomes[i]!, v.index);
    const results = read as BatchItem[];
    const count = (s: number) => results.filter((r) => r.status === s).length;
    return c.json({ results, created: count(201), duplicates: count(200), failed: results.length - count(201) - count(200) }, 200);
  });
};
