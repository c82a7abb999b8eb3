// Feed entries: markdown files directly under brain-feed/ with frontmatter
//   id, title, priority (1 = first), ttl (seconds, or "90m" / "24h" / "7d"; 0 = never expires),
//   severity, created (ISO time; the file's mtime when absent)
// and a non-empty body. A file missing any of these does not parse and does not count
// (spec: "brain-feed/ … each must parse as a feed entry to count").
import { splitFrontmatter } from "../index/document";
import { withFrontmatter } from "../vault/frontmatter";

export const FEED_DIR = "brain-feed";

export interface FeedEntry {
  id: string;
  title: string;
  priority: number;
  /** Seconds; 0 = never expires. */
  ttl: number;
  severity: string;
  created: string;
  /** created + ttl, or null when it never expires. */
  expires_at: string | null;
  /** Vault-relative path. */
  path: string;
  body: string;
  /** Other frontmatter keys (e.g. kind, generator). */
  meta: Record<string, unknown>;
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

/** 3600, "3600", "90m", "24h", "7d" → seconds; undefined when it is none of these. */
function parseTtl(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) && v >= 0 ? Math.floor(v) : undefined;
  if (typeof v !== "string") return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$/i.exec(v);
  if (!m) return undefined;
  return Math.floor(Number(m[1]) * (UNITS[(m[2] || "s").toLowerCase()] ?? 1));
}

export type FeedParse = { ok: true; entry: FeedEntry } | { ok: false; why: string };

export function parseFeedEntry(path: string, text: string, mtimeMs: number): FeedParse {
  const { data, body } = splitFrontmatter(text);
  if (Object.keys(data).length === 0) return { ok: false, why: "no frontmatter" };
  const id = typeof data.id === "string" || typeof data.id === "number" ? String(data.id).trim() : "";
  if (!id) return { ok: false, why: "frontmatter lacks id" };
  if (typeof data.title !== "string" || !data.title.trim()) return { ok: false, why: "frontmatter lacks title" };
  const priority = typeof data.priority === "number" ? data.priority : typeof data.priority === "string" ? Number(data.priority) : Number.NaN;
  if (!Number.isFinite(priority)) return { ok: false, why: "priority is not a number" };
  const ttl = parseTtl(data.ttl);
  if (ttl === undefined) return { ok: false, why: "ttl is not seconds or a duration like 24h" };
  if (typeof data.severity !== "string" || !data.severity.trim()) return { ok: false, why: "frontmatter lacks severity" };
  if (!body.trim()) return { ok: false, why: "empty body" };
  const createdRaw = data.created instanceof Date ? data.created.toISOString() : data.created;
  const createdMs = typeof createdRaw === "string" && !Number.isNaN(Date.parse(createdRaw)) ? Date.parse(createdRaw) : mtimeMs;
  const { id: _i, title: _t, priority: _p, ttl: _l, severity: _s, created: _c, ...meta } = data;
  return {
    ok: true,
    entry: {
      id,
      title: data.title.trim(),
      priority,
      ttl,
      severity: data.severity.trim().toLowerCase(),
      created: new Date(createdMs).toISOString(),
      expires_at: ttl === 0 ? null : new Date(createdMs + ttl * 1000).toISOString(),
      path,
      body: body.trim(),
      meta,
    },
  };
}

export const isExpired = (e: FeedEntry, now: Date) => e.expires_at !== null && Date.parse(e.expires_at) <= now.getTime();

export function feedEntryMarkdown(
  e: { id: string; title: string; priority: number; ttl: number; severity: string; created: Date; kind?: string },
  body: string,
): string {
  return withFrontmatter(
    { id: e.id, title: e.title, priority: e.priority, ttl: e.ttl, severity: e.severity, created: e.created.toISOString(), kind: e.kind, generator: "tick" },
    body,
  );
}
