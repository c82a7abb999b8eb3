// POST /marker: record a lesson, milestone, signal or decision (the hooks package's wire format).
import { createRoute, z } from "@hono/zod-openapi";
import { errorResponse } from "../../common/errors";
import type { RouterApp } from "../app-types";
import { markerKey, recordMarker, requireMarkerType } from "../markers/marker";
import { MarkerIdempotencyKey, MarkerRequest } from "../markers/schema";
import { MARKER_MAX_CHARS, MARKER_TYPES } from "../markers/types";
import { authResponses, storageFullResponses } from "./schemas";

export const MarkerRecord = z
  .object({
    id: z.string().openapi({ description: "mk_ + 16 hex of sha256(idempotency key)", example: "mk_3f2a9c0d1e4b5a67" }),
    type: z.enum(MARKER_TYPES),
    content: z.string(),
    attrs: z.record(z.string(), z.unknown()),
    ts: z.string().openapi({ format: "date-time", description: "attrs.ts, else when it arrived" }),
    received_at: z.string().openapi({ format: "date-time" }),
    source: z.string(),
    session_id: z.string().nullable(),
    path: z.string().openapi({ description: "vault path the marker was routed to", example: "left/reference/lessons-2026-11-22.md" }),
    written: z.boolean().openapi({ description: "false when the vault already held it (same-day lesson, absorbed signal, same ADR body)" }),
    origin: z.enum(["api", "mcp", "inline"]),
    key_source: z.enum(["header", "body", "inline"]),
  })
  .openapi("MarkerRecord");
export type MarkerRecord = z.infer<typeof MarkerRecord>;

const route = createRoute({
  method: "post",
  path: "/marker",
  operationId: "createMarker",
  tags: ["markers"],
  summary: "Record a marker",
  description:
    "Idempotent: the X-Idempotency-Key header, else the sha256 of the JSON body, identifies the marker. The same key again answers 200 with the stored record " +
    "and header Idempotent-Replayed: true; nothing is written twice, concurrent duplicates included.",
  security: [{ bearer: [] }],
  request: {
    headers: z.object({
      "x-idempotency-key": MarkerIdempotencyKey.optional().openapi({ description: "the client's key for this marker" }),
    }),
    body: { required: true, content: { "application/json": { schema: MarkerRequest } } },
  },
  responses: {
    201: { description: "Recorded and routed into the vault", content: { "application/json": { schema: MarkerRecord } } },
    200: { description: "Already recorded under this key: the stored record", content: { "application/json": { schema: MarkerRecord } } },
    400: errorResponse("Unknown type, empty content, bad attrs"),
    413: errorResponse(`Content over ${MARKER_MAX_CHARS} characters`),
    ...authResponses,
    ...storageFullResponses,
  },
});

export const registerMarker = (app: RouterApp) =>
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const header = c.req.valid("header")["x-idempotency-key"];
    // The body as the client sent it (before defaults), which the key hashes when no header names one.
    const key = markerKey(header, await c.req.json());
    const type = requireMarkerType(body.type);
    const { record, replayed } = await recordMarker(c.env.deps.markers, { type, content: body.content, attrs: body.attrs }, key, {
      origin: "api",
      defaultSource: "api",
    });
    if (replayed) c.header("Idempotent-Replayed", "true");
    return c.json(record, replayed ? 200 : 201);
  });
