// A marker's types and sizes: what the schema (schema.ts) and the domain (types.ts) both check.
export const MARKER_TYPES = ["lesson", "milestone", "signal", "decision"] as const;
export type MarkerType = (typeof MARKER_TYPES)[number];
/** The types as a client may send them: with or without the leading @. */
export const MARKER_TYPE_SPELLINGS = [...MARKER_TYPES, ...MARKER_TYPES.map((t) => `@${t}` as const)] as const;

/** Longest marker content, in characters; longer is refused as too large. */
export const MARKER_MAX_CHARS = 4096;

/** Longest idempotency key a client may name a marker by (X-Idempotency-Key, the MCP tool's idempotency_key). */
export const MARKER_KEY_MAX_CHARS = 512;
