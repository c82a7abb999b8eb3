// GET /feed's domain: what a new session gets injected — the parsed feed entries by priority
// (expired ones left out) cut to a character budget as inject_blocks, plus the hot arcs, the
// newest lessons and the live signals. `hash` covers everything but generated_at, so a client
// holding the same hash can skip the feed (the route also answers If-None-Match with 304).
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { hashContent } from "../index/document";
import { compareSignals, isLive, readSignals, severityRank } from "../signals/signal-files";
import { HOT_ARCS_FILE, type HotArcRow, parseHotArcs } from "../tick/arc-files";
import { walk } from "../vault/walk";
import { FEED_DIR, type FeedEntry, isExpired, parseFeedEntry } from "./entry";
import { type LessonEntry, newestLessons } from "./lessons";
import type { FeedRequest } from "./schema";

export interface FeedDeps {
  vault: string;
  signalTtlHours: number;
  defaultMaxChars: number;
  now?: () => Date;
}

export interface FeedSignal {
  path: string;
  severity: string;
  source: string;
  title: string;
  created: string;
  last_seen: string;
  count: number;
}

export interface Feed {
  hot_arcs: HotArcRow[];
  inject_blocks: string[];
  entries: Array<Omit<FeedEntry, "meta"> & { kind?: string }>;
  lessons: LessonEntry[];
  signals: FeedSignal[];
  generated_at: string;
  hash: string;
  entry_count: number;
  /** Files under brain-feed/ that did not parse as entries. */
  invalid: Array<{ path: string; why: string }>;
  max_chars: number;
  truncated: boolean;
}

export { FEED_CHARS } from "./limits";

export const FEED_LESSONS = 10;
export const FEED_SIGNALS = 20;
const FEED_FILES_READ = 500;
const MIN_PARTIAL_BLOCK = 200;

async function readFeedEntries(vault: string, now: Date): Promise<{ entries: FeedEntry[]; invalid: Array<{ path: string; why: string }> }> {
  const { files } = await walk(vault, FEED_DIR, { recursive: false, filter: (p) => /\.md$/i.test(p), limit: FEED_FILES_READ });
  const entries: FeedEntry[] = [];
  const invalid: Array<{ path: string; why: string }> = [];
  for (const f of files) {
    const text = await readFile(join(vault, f.path), "utf8").catch(() => null);
    if (text === null) continue;
    const parsed = parseFeedEntry(f.path, text, f.mtimeMs);
    if (!parsed.ok) invalid.push({ path: f.path, why: parsed.why });
    else if (!isExpired(parsed.entry, now)) entries.push(parsed.entry);
  }
  entries.sort(
    (a, b) =>
      a.priority - b.priority ||
      severityRank(a.severity) - severityRank(b.severity) ||
      (a.created < b.created ? 1 : a.created > b.created ? -1 : 0) ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  return { entries, invalid };
}

/** Blocks `## title\n\nbody` in order until the budget is spent; the last may be cut at a line. */
function injectBlocks(entries: FeedEntry[], maxChars: number): { blocks: string[]; truncated: boolean } {
  const blocks: string[] = [];
  let left = maxChars;
  for (const e of entries) {
    const block = `## ${e.title}\n\n${e.body}`;
    const cost = block.length + (blocks.length ? 2 : 0);
    if (cost <= left) {
      blocks.push(block);
      left -= cost;
      continue;
    }
    if (left >= MIN_PARTIAL_BLOCK) {
      const room = left - (blocks.length ? 2 : 0) - 2;
      const cut = block.slice(0, room);
      const atLine = cut.lastIndexOf("\n");
      blocks.push(`${atLine > room / 2 ? cut.slice(0, atLine) : cut}\n…`);
    }
    return { blocks, truncated: true };
  }
  return { blocks, truncated: false };
}

export async function buildFeed(deps: FeedDeps, req: FeedRequest = {}): Promise<Feed> {
  const now = (deps.now ?? (() => new Date()))();
  const maxChars = req.max_chars ?? deps.defaultMaxChars;
  const [{ entries, invalid }, hotText, lessons, signalFiles] = await Promise.all([
    readFeedEntries(deps.vault, now),
    readFile(join(deps.vault, HOT_ARCS_FILE), "utf8").catch(() => ""),
    newestLessons(deps.vault, FEED_LESSONS),
    readSignals(deps.vault, { liveAt: { asOf: now, ttlHours: deps.signalTtlHours } }),
  ]);
  const hot_arcs = parseHotArcs(hotText);
  const signals = signalFiles
    .filter((s) => isLive(s, now, deps.signalTtlHours))
    .sort(compareSignals)
    .slice(0, FEED_SIGNALS)
    .map((s) => ({
      path: s.path,
      severity: s.severity,
      source: s.source,
      title: s.title,
      created: s.created.toISOString(),
      last_seen: s.last_seen.toISOString(),
      count: s.count,
    }));
  const { blocks, truncated } = injectBlocks(entries, maxChars);
  const shown = entries.map(({ meta, ...e }) => ({ ...e, ...(typeof meta.kind === "string" ? { kind: meta.kind } : {}) }));
  const hash = hashContent(JSON.stringify({ hot_arcs, inject_blocks: blocks, entries: shown, lessons, signals })).slice(0, 32);
  return {
    hot_arcs,
    inject_blocks: blocks,
    entries: shown,
    lessons,
    signals,
    generated_at: now.toISOString(),
    hash,
    entry_count: shown.length,
    invalid,
    max_chars: maxChars,
    truncated,
  };
}
