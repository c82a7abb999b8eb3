// One tick (issue 6, "The tick"), in order:
//   1–2. walk the vault once, harvesting inline markers (harvest.ts) — recorded at once, exactly
//      once each — and, outside a dry run, refreshing the index over raw/ from the same reads;
//   3. cluster recent markers and ingested notes into arcs (arcs.ts), titled by the model
//      when one is configured and no_ai is off;
//   4. sweep signals past SIGNAL_TTL_HOURS (critical ones stay) and regenerate signals.md;
//   5. write the feed entries (feed-entries.ts);
//   6. apply the staged vault changes (plan.ts) — nothing is applied when a step fails;
//   7. refresh the index over every system-written file, each under its producer.
// A dry run stops before 6 and writes nothing anywhere; with no_ai the output depends only on
// the vault and the tick's as-of time.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { newestLessons } from "../feed/lessons";
import { frontmatterTags, splitFrontmatter } from "../index/document";
import type { FileEntry, RefreshCounts as RawCounts } from "../index/refresh";
import type { IndexStore } from "../index/types";
import type { ChatEndpoint } from "../llm";
import { readJournalSince } from "../markers/journal";
import type { MarkerDeps } from "../markers/marker";
import type { MarkerRecord } from "../markers/types";
import { compareSignals, isLive, readSignals } from "../signals/signal-files";
import { withFrontmatter } from "../vault/frontmatter";
import { safeVaultPath } from "../vault/safe-path";
import { withVaultLock } from "../vault/vault-lock";
import { type WalkedFile, walkSorted } from "../vault/walk";
import { arcPath, arcRecord, HOT_ARCS_FILE, hotArcsMarkdown, listedArcs, readArcStatuses } from "./arc-files";
import { titleArcsWithModel } from "./arc-titles";
import { ARC_WINDOW_DAYS, type Arc, type ArcItem, type ArcKind, clusterArcs } from "./arcs";
import { feedEntries, SIGNALS_FILE, signalsMarkdown } from "./feed-entries";
import { Harvest } from "./harvest";
import { refreshIndex, refreshRaw } from "./index-refresh";
import { type PlanSummary, VaultPlan } from "./plan";
import { producerOf } from "./sources";

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
  /** Milliseconds per step: index_raw (the vault walk, the harvest and raw/'s refresh; harvest in a dry run), arcs, signals, feed, apply, index. */
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

  // 1–2. One streaming walk of the vault: each note changed since the last scan is read for its
  // inline markers, and (outside a dry run) raw/'s files go on to the index refresh with the
  // text when it was read, so a changed note — every note, on a first tick — is read once.
  // Only the ingested notes of the arc window are kept: no list of the vault's files is held.
  const indexDeps = { vault: deps.vault, index: deps.index, embed: deps.embed };
  const since = new Date(asOf.getTime() - ARC_WINDOW_DAYS * DAY);
  const pass = await VaultPass.start(deps, opts, since);
  let raw: RawCounts | undefined;
  try {
    if (opts.dryRun) for await (const _ of pass.files()) void _;
    else raw = await refreshRaw(indexDeps, pass.files());
    await pass.finish();
  } finally {
    await pass.close();
  }
  const harvest = pass.harvest.result;
  for (const link of pass.skippedLinks) warnings.push(`symlink not followed (it leaves the vault, points at a folder, dangles or loops): ${link}`);
  phase(opts.dryRun ? "harvest" : "index_raw");
  for (const r of harvest.refused) warnings.push(`inline marker skipped: ${r}`);

  // 3. Arcs.
  const journal = await readJournalSince(deps.vault, since);
  const items = [...dedupe([...journal, ...(opts.dryRun ? harvest.records : [])]).map(markerItem), ...(await ingestedItems(deps.vault, pass.ingested))];
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
  const entries = await feedEntries(deps.vault, {
    asOf,
    arcs: listedArcs(arcs),
    lessons,
    live,
    tickIntervalSeconds: deps.tickIntervalSeconds,
    signalTtlHours: deps.signalTtlHours,
  });
  for (const [path, content] of entries) {
    if (content === null) await plan.delete(path);
    else await plan.write(path, content);
  }
  phase("feed");

  // 6. Apply.
  const summary = plan.summary();
  const counts: TickCounts = {
    notes_scanned: pass.scanned,
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

  // 7. Index: the producers' folders walked afresh, so files the tick (and its harvest) just
  // wrote are seen (raw/ was refreshed before the harvest).
  const refreshed = await refreshIndex(indexDeps, { raw });
  counts.index_upserted = refreshed.upserted;
  counts.index_removed = refreshed.removed;
  counts.index_unchanged = refreshed.unchanged;
  phase("index");
  return { counts, phases_ms, warnings, plan: summary };
}

/** Files read at once by the vault pass: enough to overlap the reads, few enough to hold. */
const READ_SLICE = 64;

/**
 * The tick's one walk over the vault (comparePaths order): the harvest sees every file, raw/'s
 * indexable files are handed on to its refresh (with their text when the harvest read it), and
 * a slice of READ_SLICE files at a time is all that is held.
 */
class VaultPass {
  readonly skippedLinks: string[] = [];
  readonly ingested: WalkedFile[] = [];
  scanned = 0;

  private constructor(
    private readonly vault: string,
    readonly harvest: Harvest,
    private readonly indexRaw: boolean,
    private readonly since: Date,
  ) {}

  static async start(deps: TickDeps, opts: TickOptions, since: Date): Promise<VaultPass> {
    return new VaultPass(deps.vault, await Harvest.start(deps.markers, { dryRun: opts.dryRun, asOf: opts.asOf }), !opts.dryRun, since);
  }

  async *files(): AsyncGenerator<FileEntry> {
    let slice: { file: WalkedFile; read: boolean; index: boolean }[] = [];
    const onSkippedLink = (path: string) => void (this.skippedLinks.length < 20 && this.skippedLinks.push(path));
    for await (const file of walkSorted(this.vault, "", { onSkippedLink })) {
      this.scanned++;
      if (isIngestedSince(file.path, this.since)) this.ingested.push(file);
      const read = await this.harvest.wants(file);
      const index = this.indexRaw && producerOf(file.path) === "raw";
      if (!read && !index) continue;
      slice.push({ file, read, index });
      if (slice.length >= READ_SLICE) {
        yield* this.flush(slice);
        slice = [];
      }
    }
    yield* this.flush(slice);
  }

  private async *flush(slice: { file: WalkedFile; read: boolean; index: boolean }[]): AsyncGenerator<FileEntry> {
    const texts = await Promise.all(slice.map((s) => (s.read ? readFile(join(this.vault, s.file.path), "utf8").catch(() => null) : undefined)));
    for (const [i, s] of slice.entries()) if (s.read) await this.harvest.take(s.file, texts[i] ?? null);
    for (const [i, s] of slice.entries()) {
      if (!s.index) continue;
      const content = texts[i];
      yield { ...s.file, abs: join(this.vault, s.file.path), ...(typeof content === "string" ? { content } : {}) };
    }
  }

  async finish(): Promise<void> {
    await this.harvest.finish();
  }

  async close(): Promise<void> {
    await this.harvest.close();
  }
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

const INGESTED = /^ingest\/(\d{4}-\d{2}-\d{2})\/[^/]+\.md$/;

/** An ingested note (ingest/<YYYY-MM-DD>/…) of a day inside the arc window. */
function isIngestedSince(path: string, since: Date): boolean {
  const m = INGESTED.exec(path);
  return m !== null && m[1]! >= since.toISOString().slice(0, 10);
}

/** Ingested notes of the window (isIngestedSince), as arc items. */
async function ingestedItems(vault: string, walked: WalkedFile[]): Promise<ArcItem[]> {
  const out: ArcItem[] = [];
  for (const f of walked) {
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
