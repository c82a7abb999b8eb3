// What a marker is (issue 6, POST /marker): the wire body the hooks package sends, and the
// record the router keeps for it.
import { MARKER_TYPES, type MarkerType } from "./limits";
import type { MarkerAttrs, MarkerRequest } from "./schema";

export { MARKER_KEY_MAX_CHARS, MARKER_MAX_CHARS, MARKER_TYPE_SPELLINGS, MARKER_TYPES, type MarkerType } from "./limits";
export type { MarkerAttrs } from "./schema";

/** A marker as the domain records it: the request with its type spelled without the @. */
export type MarkerInput = Omit<MarkerRequest, "type"> & { type: MarkerType };

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
