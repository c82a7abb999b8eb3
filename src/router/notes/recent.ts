// GET /notes (MCP `recent`): what changed in the vault since a time — indexed notes, newest
// first (updated_at, then path, both descending), a page at a time behind an opaque cursor.
import { DomainError } from "../../common/domain-error";
import type { IndexStore, Producer } from "../index/types";
import { type NoteRef, noteRef } from "./view";

export const RECENT_LIMIT = { default: 50, max: 500 } as const;
/** Longest tag filter, and longest cursor (next_cursor as returned), in characters. */
export const RECENT_TAG_MAX_CHARS = 200;
export const CURSOR_MAX_CHARS = 4096;

export interface RecentRequest {
  since?: Date;
  producer?: Producer;
  tag?: string;
  prefix?: string;
  limit?: number;
  cursor?: string;
}

export interface RecentNote extends NoteRef {
  tags: string[];
  hash: string;
}

export interface RecentResult {
  notes: RecentNote[];
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
}

export async function recentNotes(index: IndexStore, req: RecentRequest): Promise<RecentResult> {
  const limit = req.limit ?? RECENT_LIMIT.default;
  const after = req.cursor ? decodeCursor(req.cursor) : undefined;
  const rows = await index.recent({ since: req.since, producer: req.producer, tag: req.tag, prefix: req.prefix, limit: limit + 1, after });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    notes: page.map((n) => ({ ...noteRef(n), tags: n.tags, hash: n.hash })),
    next_cursor: rows.length > limit && last ? encodeCursor(last.updatedAt, last.path) : null,
  };
}

function encodeCursor(updatedAt: Date, path: string): string {
  return Buffer.from(JSON.stringify([updatedAt.getTime(), path])).toString("base64url");
}

function decodeCursor(cursor: string): { updatedAt: Date; path: string } {
  try {
    const [ms, path] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [unknown, unknown];
    if (typeof ms === "number" && Number.isFinite(ms) && typeof path === "string") return { updatedAt: new Date(ms), path };
  } catch {}
  throw new DomainError("invalid", "invalid_cursor", "cursor is not one this API returned: pass next_cursor from the previous page unchanged");
}
