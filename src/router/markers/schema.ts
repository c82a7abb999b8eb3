// The one declaration of a marker's input: POST /marker's body and X-Idempotency-Key, the MCP
// tool's arguments, the client's input and the domain's MarkerAttrs type.
import { z } from "@hono/zod-openapi";
import { MARKER_KEY_MAX_CHARS, MARKER_MAX_CHARS, MARKER_TYPE_SPELLINGS } from "./limits";

export const MarkerAttrs = z
  .looseObject({
    severity: z.string().optional().openapi({ description: "signals: critical, high, medium (default), low, info" }),
    source: z.string().optional().openapi({ description: "who wrote it (default api)" }),
    session_id: z.string().optional(),
    title: z.string().optional(),
    scope: z.string().optional().openapi({ description: "milestones: a project folder name under projects/" }),
    status: z.string().optional().openapi({ description: "decisions: the ADR status (default proposed)" }),
    ts: z.union([z.string(), z.number()]).optional().openapi({ description: "the record's time (ISO 8601, or epoch seconds/ms); replays back-date with it" }),
  })
  .openapi("MarkerAttrs", { description: "Other keys are kept in the record as given." });
export type MarkerAttrs = z.infer<typeof MarkerAttrs>;

export const MarkerRequest = z
  .object({
    type: z.enum(MARKER_TYPE_SPELLINGS).openapi({ description: "lesson | milestone | signal | decision, with or without the leading @" }),
    content: z
      .string()
      .openapi({ description: `at most ${MARKER_MAX_CHARS} characters; longer → 413`, example: "Pin base image digests; tags move under you." }),
    attrs: MarkerAttrs.default({}),
  })
  .openapi("MarkerRequest");
export type MarkerRequest = z.infer<typeof MarkerRequest>;

/** The client's key for a marker: the X-Idempotency-Key header, the MCP tool's idempotency_key. */
export const MarkerIdempotencyKey = z.string().min(1).max(MARKER_KEY_MAX_CHARS);

/**
 * The MCP tool's arguments: the request with the client's key among them. Its attrs stay a plain
 * record of strings and numbers: with no body to hash, the key hashes the parsed arguments, whose
 * attrs must keep the order the client gave them (MarkerAttrs' parse would reorder its own keys).
 */
export const MarkerToolRequest = MarkerRequest.extend({
  attrs: z.record(z.string(), z.union([z.string(), z.number()])).default({}),
  idempotency_key: MarkerIdempotencyKey.optional(),
});
