// Arcs: threads of related work, found by clustering recent markers and ingested notes. The
// rules are deterministic (no model, no clock but the tick's as-of time), so a no_ai tick is
// byte-for-byte repeatable:
//   1. items inside the window (ARC_WINDOW_DAYS before as-of) sorted by (time, id);
//   2. an item with a project scope joins its project's open arc, else one with a session id
//      joins its session's open arc; an arc stays open while the gap to its last item is at
//      most GAP_HOURS (project 48 h, session 6 h);
//   3. an item with neither joins the open arc (gap ≤ 24 h) it shares the most terms and tags
//      with, when that similarity reaches JOIN_SIMILARITY; otherwise it starts an arc
//      (an item's terms: its 16 most frequent words of 3+ letters, stop words aside, from its
//      first 1,500 characters; an arc's: its 12 most frequent over its items);
//   4. arcs whose times lie within 24 h of each other and whose top terms overlap by at least
//      MERGE_SIMILARITY merge.
// Heat and status: see heatOf() and statusOf().

import { hashContent } from "../index/document";
import { words } from "../index/query";
import { STOP_WORDS } from "../index/stopwords";
import { severityRank } from "../signals/signal-files";
import { slugify } from "../vault/slug";

export type ArcKind = "lesson" | "milestone" | "signal" | "decision" | "note";
export type ArcStatus = "hot" | "warm" | "cold";

export interface ArcItem {
  id: string;
  ts: Date;
  kind: ArcKind;
  severity?: string;
  session?: string;
  scope?: string;
  source: string;
  /** Title and text, for terms and summaries. */
  text: string;
  tags: string[];
}

export interface Arc {
  id: string;
  /** "project:<slug>", "session:<id>", or null for an arc of loose items. */
  key: string | null;
  items: ArcItem[];
  start: Date;
  end: Date;
  /** Top terms, most frequent first. */
  terms: string[];
  tags: string[];
  heat: number;
  status: ArcStatus;
  region: string;
  title: string;
  summary: string;
  generator: "rules" | "model";
}

export const ARC_WINDOW_DAYS = 14;
const GAP_HOURS = { project: 48, session: 6, loose: 24 } as const;
const JOIN_SIMILARITY = 0.2;
const MERGE_SIMILARITY = 0.5;
const TOP_TERMS = 12;
const HOUR = 3_600_000;

/** Item weights before decay: signals by severity, then decisions and milestones, lessons, notes. */
function itemWeight(item: ArcItem): number {
  if (item.kind === "signal") return [5, 4, 3, 2, 1][severityRank(item.severity ?? "medium")] ?? 3;
  return { decision: 2, milestone: 2, lesson: 1.5, note: 1 }[item.kind];
}

/**
 * heat = 10 · R · (1 − e^(−A/3)), rounded to one decimal, where
 *   R = 2^(−hours since the arc's newest item / 24)        (recency, half-life 24 h)
 *   A = Σ weight(item) · 2^(−hours since the item / 72)     (activity, each item decaying with half-life 72 h)
 * so a fresh arc of one lesson scores 3.9, five fresh lessons 9.2, and an arc left alone
 * halves its heat every day.
 */
function heatOf(items: ArcItem[], asOf: Date): number {
  if (items.length === 0) return 0;
  const age = (d: Date) => Math.max(0, (asOf.getTime() - d.getTime()) / HOUR);
  const newest = items.reduce((a, b) => (b.ts > a.ts ? b : a));
  const r = 2 ** (-age(newest.ts) / 24);
  const a = items.reduce((sum, i) => sum + itemWeight(i) * 2 ** (-age(i.ts) / 72), 0);
  return Math.round(100 * r * (1 - Math.exp(-a / 3))) / 10;
}

/**
 * Promote/demote with hysteresis, so an arc near a line does not flap from tick to tick:
 * cold → warm at heat ≥ 2, → hot at ≥ 6; a hot arc stays hot down to 4; a warm (or hot)
 * arc stays warm down to 1.
 */
function statusOf(heat: number, previous?: ArcStatus): ArcStatus {
  if (heat >= 6 || (previous === "hot" && heat >= 4)) return "hot";
  if (heat >= 2 || ((previous === "warm" || previous === "hot") && heat >= 1)) return "warm";
  return "cold";
}

function termsOf(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const w of words(text.toLowerCase())) {
    if (w.length < 3 || STOP_WORDS.has(w) || /^\d+$/.test(w)) continue;
    counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  return counts;
}

const topTerms = (counts: Map<string, number>, n = TOP_TERMS) =>
  [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, n)
    .map(([t]) => t);

function jaccard(a: Iterable<string>, b: Iterable<string>): number {
  const A = new Set(a);
  const B = new Set(b);
  if (A.size === 0 && B.size === 0) return 0;
  let inter = 0;
  for (const x of A) if (B.has(x)) inter++;
  return inter / (A.size + B.size - inter);
}

interface Cluster {
  key: string | null;
  items: ArcItem[];
  counts: Map<string, number>;
  top: string[] | undefined;
  tags: Set<string>;
  start: Date;
  end: Date;
}

const newCluster = (key: string | null, item: ArcItem): Cluster => {
  const c: Cluster = { key, items: [], counts: new Map(), top: undefined, tags: new Set(), start: item.ts, end: item.ts };
  add(c, item);
  return c;
};

/** Terms an item contributes: its top ITEM_TERMS from the first ITEM_TEXT characters. */
const ITEM_TERMS = 16;
const ITEM_TEXT = 1500;
/**
 * Each item's terms, kept across ticks by item id (a marker's text never changes; an ingested
 * note's may, so the text is compared too): a tick with nothing new recomputes none.
 */
const termsById = new Map<string, { text: string; terms: Map<string, number> }>();
const TERMS_KEPT = 100_000;
function itemTerms(item: ArcItem): Map<string, number> {
  const hit = termsById.get(item.id);
  if (hit && hit.text === item.text) return hit.terms;
  const all = termsOf(item.text.slice(0, ITEM_TEXT));
  const terms = new Map(topTerms(all, ITEM_TERMS).map((term) => [term, all.get(term)!]));
  if (termsById.size >= TERMS_KEPT) termsById.clear();
  termsById.set(item.id, { text: item.text, terms });
  return terms;
}

function add(c: Cluster, item: ArcItem): void {
  c.items.push(item);
  for (const [t, n] of itemTerms(item)) c.counts.set(t, (c.counts.get(t) ?? 0) + n);
  for (const t of item.tags) c.tags.add(t.toLowerCase());
  c.top = undefined;
  if (item.ts < c.start) c.start = item.ts;
  if (item.ts > c.end) c.end = item.ts;
}

const top = (c: Cluster) => (c.top ??= topTerms(c.counts));
const keyOf = (i: ArcItem) => (i.scope ? `project:${slugify(i.scope, "")}` : i.session ? `session:${i.session}` : null);
const gapFor = (key: string | null) => (key?.startsWith("project:") ? GAP_HOURS.project : key ? GAP_HOURS.session : GAP_HOURS.loose) * HOUR;
const byTimeThenId = (a: ArcItem, b: ArcItem) => a.ts.getTime() - b.ts.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Clusters the items (any order) into arcs; `previous` maps arc id → last tick's status. */
export function clusterArcs(input: ArcItem[], asOf: Date, previous: ReadonlyMap<string, ArcStatus> = new Map()): Arc[] {
  const from = asOf.getTime() - ARC_WINDOW_DAYS * 24 * HOUR;
  const items = input.filter((i) => i.ts.getTime() >= from && i.ts.getTime() <= asOf.getTime()).sort(byTimeThenId);
  const clusters: Cluster[] = [];
  const openByKey = new Map<string, Cluster>();
  for (const item of items) {
    const key = keyOf(item);
    if (key && key !== "project:") {
      const open = openByKey.get(key);
      if (open && item.ts.getTime() - open.end.getTime() <= gapFor(key)) add(open, item);
      else {
        const c = newCluster(key, item);
        clusters.push(c);
        openByKey.set(key, c);
      }
      continue;
    }
    const loose = topTerms(itemTerms(item));
    let best: Cluster | undefined;
    let bestSim = 0;
    for (let i = clusters.length - 1; i >= 0; i--) {
      const c = clusters[i]!;
      if (item.ts.getTime() - c.end.getTime() > GAP_HOURS.loose * HOUR) continue;
      const sim =
        jaccard(loose, top(c)) +
        0.5 *
          jaccard(
            item.tags.map((t) => t.toLowerCase()),
            c.tags,
          );
      if (sim > bestSim) [best, bestSim] = [c, sim];
    }
    if (best && bestSim >= JOIN_SIMILARITY) add(best, item);
    else clusters.push(newCluster(null, item));
  }
  const merged = mergeClusters(clusters);
  return merged.map((c) => toArc(c, asOf, previous));
}

/** Union of clusters close in time whose top terms overlap strongly; order-stable. */
function mergeClusters(clusters: Cluster[]): Cluster[] {
  const parent = clusters.map((_, i) => i);
  const find = (i: number): number => {
    if (parent[i] === i) return i;
    const root = find(parent[i]!);
    parent[i] = root; // path compression
    return root;
  };
  const sorted = clusters.map((c, i) => ({ c, i })).sort((a, b) => a.c.start.getTime() - b.c.start.getTime() || a.i - b.i);
  for (let x = 0; x < sorted.length; x++) {
    const a = sorted[x]!;
    for (let y = x + 1; y < sorted.length; y++) {
      const b = sorted[y]!;
      if (b.c.start.getTime() - a.c.end.getTime() > GAP_HOURS.loose * HOUR) break;
      if (a.c.key && b.c.key && a.c.key.split(":")[0] === "project" && b.c.key.split(":")[0] === "project" && a.c.key !== b.c.key) continue;
      if (jaccard(top(a.c), top(b.c)) >= MERGE_SIMILARITY) parent[find(b.i)] = find(a.i);
    }
  }
  const groups = new Map<number, Cluster>();
  clusters.forEach((c, i) => {
    const root = find(i);
    const g = groups.get(root);
    if (!g) groups.set(root, { ...c, items: [...c.items], counts: new Map(c.counts), tags: new Set(c.tags), top: undefined });
    else {
      for (const item of c.items) add(g, item);
      if (!g.key || (c.key?.startsWith("project:") && !g.key.startsWith("project:"))) g.key = c.key ?? g.key;
    }
  });
  return [...groups.values()].map((g) => ({ ...g, items: g.items.sort(byTimeThenId) }));
}

const REGION_BY_KIND: Record<ArcKind, string> = {
  signal: "amygdala",
  decision: "left/decisions",
  lesson: "left/reference",
  milestone: "daily",
  note: "ingest",
};
const KIND_ORDER: ArcKind[] = ["signal", "decision", "lesson", "milestone", "note"];

/** The project folder for a project arc, else the vault region of the arc's commonest kind. */
function regionOf(key: string | null, items: ArcItem[]): string {
  if (key?.startsWith("project:")) return `projects/${key.slice("project:".length)}`;
  const counts = new Map<ArcKind, number>();
  for (const i of items) counts.set(i.kind, (counts.get(i.kind) ?? 0) + 1);
  const kind = [...KIND_ORDER].sort((a, b) => (counts.get(b) ?? 0) - (counts.get(a) ?? 0))[0]!;
  return REGION_BY_KIND[kind];
}

const oneLine = (s: string, max: number) => {
  const line = s.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

function kindsSummary(items: ArcItem[]): string {
  const counts = new Map<ArcKind, number>();
  for (const i of items) counts.set(i.kind, (counts.get(i.kind) ?? 0) + 1);
  return KIND_ORDER.filter((k) => counts.has(k))
    .map((k) => `${counts.get(k)} ${k}${counts.get(k) === 1 ? "" : "s"}`)
    .join(", ");
}

function toArc(c: Cluster, asOf: Date, previous: ReadonlyMap<string, ArcStatus>): Arc {
  const first = c.items[0]!;
  const id = `arc-${hashContent(first.id).slice(0, 8)}`;
  const heat = heatOf(c.items, asOf);
  const terms = top(c);
  const newest = c.items[c.items.length - 1]!;
  const scope = c.key?.startsWith("project:") ? c.key.slice("project:".length) : undefined;
  const head = terms.slice(0, 3).join(" · ") || oneLine(first.text, 40);
  const day = (d: Date) => d.toISOString().slice(0, 10);
  const span = day(c.start) === day(c.end) ? day(c.start) : `${day(c.start)} to ${day(c.end)}`;
  return {
    id,
    key: c.key,
    items: c.items,
    start: c.start,
    end: c.end,
    terms,
    tags: [...c.tags].sort(),
    heat,
    status: statusOf(heat, previous.get(id)),
    region: regionOf(c.key, c.items),
    title: scope ? `${scope}: ${head}` : head,
    summary: `${kindsSummary(c.items)}, ${span}; latest: ${oneLine(newest.text, 120)}`,
    generator: "rules",
  };
}
