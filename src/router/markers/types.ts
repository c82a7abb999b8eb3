// What a marker is (issue 6, POST /marker): the wire body the hooks package sends, and the
// record the router keeps for it.
export const MARKER_TYPES = ["lesson", "milestone", "signal", "decision"] as const;
export type MarkerType = (typeof MARKER_TYPES)[number];
/** The types as a client may send them: with or without the leading @. */
export const MARKER_TYPE_SPELLINGS = [...MARKER_TYPES, ...MARKER_TYPES.map((t) => `@${t}` as const)] as const;

/** Longest marker content, in characters; longer is refused as too large. */
export const MARKER_MAX_CHARS = 4096;

/** Longest idempotency key a client may name a marker by (X-Idempotency-Key, the MCP tool's idempotency_key). */
export const MARKER_KEY_MAX_CHARS = 512;

export interface MarkerAttrs {
  severity?: string;
  source?: string;
  session_id?: string;
  title?: string;
  scope?: string;
  status?: string;
  /** The record's time: ISO 8601, or epoch seconds / milliseconds. Replays back-date with it. */
  ts?: string | number;
  [key: string]: unknown;
}

export interface MarkerInput {
  type: MarkerType;
  content: string;
  attrs: MarkerAttrs;
}

/** Where a marker came from. */
export type MarkerOrigin = "api" | "mcp" | "inline";

export interface MarkerRecord {
  /** "mk_" + the first 16 hex of sha256(idempotency key). */
  id: string;
  type: MarkerType;
  content: string;
  attrs: MarkerAttrs;
  /** The record's time (attrs.ts, else when it arrived). */
  ts: string;
  received_at: string;
  source: string;
  session_id: string | null;
  /** Vault-relative path the marker was routed to. */
  path: string;
  /** False when the vault already held the same record (a same-day lesson, an absorbed signal, an ADR with the same body). */
  written: boolean;
  origin: MarkerOrigin;
  /** What the idempotency key was: the X-Idempotency-Key header, the body's sha256, or the inline marker's identity. */
  key_source: "header" | "body" | "inline";
}

/** "@lesson" or "Lesson" → "lesson"; undefined for anything else. */
export function markerType(value: string): MarkerType | undefined {
  const t = value.trim().replace(/^@/, "").toLowerCase();
  return (MARKER_TYPES as readonly string[]).includes(t) ? (t as MarkerType) : undefined;
}
