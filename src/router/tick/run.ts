// One tick (issue 6, "The tick"), in order:
//   1. walk the vault once;
//   2. harvest inline markers (harvest.ts) — recorded at once, exactly once each;
//   3. cluster recent markers and ingested notes into arcs (arcs.ts), titled by the model
//      when one is configured and no_ai is off;
//   4. sweep signals past SIGNAL_TTL_HOURS (critical ones stay) and regenerate signals.md;
//   5. write the feed entries (feed-entries.ts);
//   6. apply the staged vault changes (plan.ts) — nothing is applied when a step fails;
//   7. refresh the index over raw/ and every system-written file, each under its producer.
// A dry run stops before 6 and writes nothing anywhere; with no_ai the output depends only on
// the vault and the tick's as-of time.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { safeVaultPath } from "../vault/safe-path";
import { withVaultLock } from "../vault/vault-lock";
import { splitFrontmatter, frontmatterTags } from "../index/document";
import type { IndexStore } from "../index/types";
import type { ChatEndpoint } from "../llm";
import type { MarkerDeps } from "../markers/marker";
import { readJournalSince } from "../markers/journal";
import type { MarkerRecord } from "../markers/types";
import { readSignals, isLive, compareSignals } from "../signals/signal-files";
import { withFrontmatter } from "../vault/frontmatter";
import { walk, type WalkedFile } from "../vault/walk";
import { newestLessons } from "../feed/lessons";
import { ARC_WINDOW_DAYS, clusterArcs, type Arc, type ArcItem, type ArcKind } from "./arcs";
import { arcPath, arcRecord, hotArcsMarkdown, HOT_ARCS_FILE, listedArcs, readArcStatuses } from "./arc-files";
import { titleArcsWithModel } from "./arc-titles";
import { feedEntries, signalsMarkdown, SIGNALS_FILE } from "./feed-entries";
import { harvestInlineMarkers } from "./harvest";
import { refreshIndex } from "./index-refresh";
import { VaultPlan, type PlanSummary } from "./plan";

export interface TickDeps {
  vault: string;
  dataDir: string;
  index: IndexStore;
  embed?: (texts: string[]) => Promise<number[][]>;
  chat?: ChatEndpoint;
  markers: MarkerDeps;
  signalTtlHours: number;
  tickIntervalSeconds: number;
}

export interface TickOptions {
  dryRun: boolean;
  noAi: boolean;
  asOf: Date;
}

export interface TickCounts {
  notes_scanned: number;
  notes_read: number;
  markers_harvested: number;
  markers_already_harvested: number;
  markers_refused: number;
  arc_items: number;
  arcs: number;
  arcs_hot: number;
  arcs_warm: number;
  lessons_in_feed: number;
  signals_live: number;
  signals_swept: number;
  feed_entries: number;
  files_written: number;
  files_deleted: number;
  index_upserted: number;
  index_removed: number;
  index_unchanged: number;
}

export interface TickOutcome {
  counts: TickCounts;
  /** Milliseconds per step: walk, harvest, arcs, signals, feed, apply, index. */
  phases_ms: Record<string, number>;
  warnings: string[];
  /** What the tick wrote or, in a dry run, would write (vault-relative paths). */
  plan: PlanSummary;
}

const DAY = 86_400_000;

export async function runTick(deps: TickDeps, opts: TickOptions): Promise<TickOutcome> {
  const warnings: string[] = [];
  const plan = new VaultPlan(deps.vault);
  const { asOf } = opts;
  const phases_ms: Record<string, number> = {};
  let mark = performance.now();
  const phase = (name: string) => {
    const now = performance.now();
    phases_ms[name] = Math.round(now - mark);
    mark = now;
  };

  // 1–2. Walk, harvest.
  const walk0 = await walk(deps.vault, "");
  const walked = walk0.files;
  for (const link of walk0.skippedLinks.slice(0, 20)) warnings.push(`symlink not followed (it leaves the vault, points at a folder, dangles or loops): ${link}`);
  phase("walk");
  const harvest = await harvestInlineMarkers(deps.markers, walked, { dryRun: opts.dryRun, asOf });
  phase("harvest");
  for (const r of harvest.refused) warnings.push(`inline marker skipped: ${r}`);

  // 3. Arcs.
  const since = new Date(asOf.getTime() - ARC_WINDOW_DAYS * DAY);
  const journal = await readJournalSince(deps.vault, since);
  const items = [
    ...dedupe([...journal, ...(opts.dryRun ? harvest.records : [])]).map(markerItem),
    ...(await ingestedItems(deps.vault, walked, since)),
  ];
  const previous = await readArcStatuses(deps.vault);
  let arcs = clusterArcs(items, asOf, previous.statuses);
  if (!opts.noAi && deps.chat) arcs = await titleArcsWithModel(deps.chat, arcs, warnings);
  await planArcs(plan, arcs, previous.paths, asOf);
  phase("arcs");

  // 4. Signals.
  const signalFiles = await readSignals(deps.vault);
  const expired = signalFiles.filter((s) => s.status === "open" && !isLive(s, asOf, deps.signalTtlHours));
  for (const s of expired) plan.update(s.path, () => expireSignal(deps.vault, s.path, s.last_seen, asOf));
  const live = signalFiles.filter((s) => isLive(s, asOf, deps.signalTtlHours)).sort(compareSignals);
  if (signalFiles.length > 0) await plan.write(SIGNALS_FILE, signalsMarkdown(live, { asOf, ttlHours: deps.signalTtlHours }));
  phase("signals");

  // 5. Feed entries.
  const lessons = await newestLessons(deps.vault, 10);
  const entries = await feedEntries(deps.vault, { asOf, arcs: listedArcs(arcs), lessons, live, tickIntervalSeconds: deps.tickIntervalSeconds, signalTtlHours: deps.signalTtlHours });
  for (const [path, content] of entries) {
    if (content === null) await plan.delete(path);
    else await plan.write(path, content);
  }
  phase("feed");

  // 6. Apply.
  const summary = plan.summary();
  const counts: TickCounts = {
    notes_scanned: walked.length,
    notes_read: harvest.notesRead,
    markers_harvested: harvest.records.length,
    markers_already_harvested: harvest.alreadyRecorded,
    markers_refused: harvest.refused.length,
    arc_items: items.length,
    arcs: arcs.length,
    arcs_hot: arcs.filter((a) => a.status === "hot").length,
    arcs_warm: arcs.filter((a) => a.status === "warm").length,
    lessons_in_feed: lessons.length,
    signals_live: live.length,
    signals_swept: expired.length,
    feed_entries: [...entries.values()].filter((c) => c !== null).length,
    files_written: summary.writes.length,
    files_deleted: summary.deletes.length,
    index_upserted: 0,
    index_removed: 0,
    index_unchanged: 0,
  };
  if (opts.dryRun) return { counts, phases_ms, warnings, plan: summary };
  await plan.apply();
  phase("apply");

  // 7. Index: a fresh walk, so files the tick (and its harvest) just wrote are seen.
  const after = (await walk(deps.vault, "")).files;
  const refreshed = await refreshIndex({ vault: deps.vault, index: deps.index, embed: deps.embed }, after);
  counts.index_upserted = refreshed.upserted;
  counts.index_removed = refreshed.removed;
  counts.index_unchanged = refreshed.unchanged;
  phase("index");
  return { counts, phases_ms, warnings, plan: summary };
}

function dedupe(records: MarkerRecord[]): MarkerRecord[] {
  const seen = new Set<string>();
  return records.filter((r) => {
    if (seen.has(r.id)) return false;
    seen.add(r.id);
    return true;
  });
}

const str = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim() : undefined);

function markerItem(r: MarkerRecord): ArcItem {
  const title = str(r.attrs.title);
  return {
    id: r.id,
    ts: new Date(r.ts),
    kind: r.type,
    severity: str(r.attrs.severity)?.toLowerCase(),
    session: r.session_id ?? undefined,
    scope: str(r.attrs.scope),
    source: r.source,
    text: title ? `${title}\n${r.content}` : r.content,
    tags: [],
  };
}

const KINDS = new Set<ArcKind>(["lesson", "milestone", "signal", "decision", "note"]);

/** Ingested notes (ingest/<YYYY-MM-DD>/…) from the window, as arc items. */
async function ingestedItems(vault: string, walked: WalkedFile[], since: Date): Promise<ArcItem[]> {
  const from = since.toISOString().slice(0, 10);
  const out: ArcItem[] = [];
  for (const f of walked) {
    const m = /^ingest\/(\d{4}-\d{2}-\d{2})\/[^/]+\.md$/.exec(f.path);
    if (!m || m[1]! < from) continue;
    const text = await readFile(join(vault, f.path), "utf8").catch(() => null);
    if (text === null) continue;
    const { data, body } = splitFrontmatter(text);
    const created = typeof data.created === "string" && !Number.isNaN(Date.parse(data.created)) ? new Date(data.created) : new Date(f.mtimeMs);
    const kind = (str(data.kind) ?? "note") as ArcKind;
    out.push({
      id: `ingest:${f.path}`,
      ts: created,
      kind: KINDS.has(kind) ? kind : "note",
      severity: str(data.severity),
      session: str(data.session_id),
      scope: str(data.scope) ?? str(data.project),
      source: str(data.source) ?? "ingest",
      text: `${str(data.title) ?? ""}\n${body.slice(0, 2000)}`,
      tags: frontmatterTags(data),
    });
  }
  return out;
}

/**
 * Records for the listed (hot and warm) arcs only: a cold arc needs no memory (its next status
 * depends on heat alone), and a vault of many quiet threads should not rewrite a file for each
 * on every tick.
 */
async function planArcs(plan: VaultPlan, arcs: Arc[], previousPaths: string[], asOf: Date): Promise<void> {
  const listed = listedArcs(arcs);
  const current = new Set(listed.map((a) => arcPath(a.id)));
  for (const a of listed) await plan.write(arcPath(a.id), arcRecord(a));
  for (const p of previousPaths) if (!current.has(p)) await plan.delete(p);
  // spec: hot-arcs.md is "written by the system when arcs exist".
  if (arcs.length > 0 || previousPaths.length > 0) await plan.write(HOT_ARCS_FILE, hotArcsMarkdown(arcs, asOf));
}

/** Marks an open signal expired, under the lock signal writers hold, unless it was seen again meanwhile. */
async function expireSignal(vault: string, path: string, lastSeen: Date, asOf: Date): Promise<boolean> {
  const dir = await safeVaultPath(vault, "amygdala");
  return withVaultLock(join(dir, ".signals"), async () => {
    const abs = await safeVaultPath(vault, path);
    const text = await readFile(abs, "utf8").catch(() => null);
    if (text === null) return false;
    const { data, body } = splitFrontmatter(text);
    const seen = typeof data.last_seen === "string" ? data.last_seen : typeof data.created === "string" ? data.created : undefined;
    if (data.status !== "open" || (seen !== undefined && Date.parse(seen) !== lastSeen.getTime())) return false;
    await writeFileAtomic(abs, withFrontmatter({ ...data, status: "expired", expired_at: asOf.toISOString() }, body.replace(/^\n+/, "")));
    return true;
  });
}
