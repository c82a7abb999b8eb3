// The seven pipeline stages (spec: "/health/pipeline" table), one function each. Each reads
// only what its rule needs, through the report's scan budget.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { FEED_DIR, type FeedEntry, isExpired, parseFeedEntry } from "../feed/entry";
import { LESSONS_DIR, lessonLogs, newestLessons } from "../feed/lessons";
import { splitFrontmatter } from "../index/document";
import { type IndexStore, PRODUCERS, type Producer } from "../index/types";
import { lastJournalRecord } from "../markers/journal";
import { parseSignalFile, severityRank } from "../signals/signal-files";
import { ARCS_DIR, HOT_ARCS_FILE } from "../tick/arc-files";
import { SIGNALS_FILE, TICK_ENTRIES } from "../tick/feed-entries";
import { readRecord, TICK_FOLDERS, type TickRecord } from "../tick/queue";
import { PRODUCER_SOURCES } from "../tick/sources";
import { walk } from "../vault/walk";
import { hoursBetween, type ScanBudget, type StageReport } from "./report";

export interface StageContext {
  vault: string;
  index: IndexStore;
  markerQuietHours: number;
  drainStaleMinutes: number;
  signalTtlHours: number;
  nextTickAt?: () => Date | undefined;
  now: Date;
  budget: ScanBudget;
}

/** When the newest completed tick finished, if one did. */
async function lastCompletedTick(ctx: StageContext): Promise<Date | undefined> {
  const { names: list } = await names(ctx, TICK_FOLDERS.completed);
  const newest = list.filter((n) => n.endsWith(".json")).at(-1);
  const r = newest ? await readRecord(join(ctx.vault, TICK_FOLDERS.completed, newest)) : undefined;
  return r?.finished_at ? new Date(r.finished_at) : undefined;
}

const LISTED = 10;
/** Lessons this recent must reach the feed (the lessons rule's "recent"). */
const RECENT_LESSON_DAYS = 7;

/** Names in one folder, through the budget. */
async function names(ctx: StageContext, rel: string): Promise<{ names: string[]; truncated: boolean }> {
  const all = await readdir(join(ctx.vault, rel)).catch(() => [] as string[]);
  const visible = all.filter((n) => !n.startsWith("."));
  const room = ctx.budget.left;
  ctx.budget.take(Math.min(all.length, room));
  return { names: visible.slice(0, room).sort(), truncated: visible.length > room };
}

const mtimeOf = async (path: string) =>
  (
    await Bun.file(path)
      .stat()
      .catch(() => null)
  )?.mtime ?? null;

// spec: ingest — never fails; warns when no marker was written for PIPELINE_MARKER_QUIET_HOURS.
export async function ingestStage(ctx: StageContext): Promise<StageReport> {
  const last = await lastJournalRecord(ctx.vault);
  if (!last) {
    return {
      name: "ingest",
      verdict: "ok",
      evidence: { last_marker_at: null, quiet_hours: ctx.markerQuietHours },
      message: "no marker recorded yet (nothing to check)",
    };
  }
  const since = hoursBetween(new Date(last.received_at), ctx.now);
  const evidence = {
    last_marker_at: last.received_at,
    last_marker_type: last.type,
    last_marker_source: last.source,
    hours_since: since,
    quiet_hours: ctx.markerQuietHours,
  };
  if (since > ctx.markerQuietHours) {
    return {
      name: "ingest",
      verdict: "warn",
      evidence,
      message: `no marker for ${since} h (PIPELINE_MARKER_QUIET_HOURS is ${ctx.markerQuietHours}): are the agents' hooks still posting to /marker?`,
    };
  }
  return { name: "ingest", verdict: "ok", evidence, message: `last marker ${since} h ago` };
}

const stampOf = (name: string) => {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-/.exec(name);
  return m ? new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`) : undefined;
};

// spec: drain — fails when requests pile up unconsumed, or the most recent tick failed.
export async function drainStage(ctx: StageContext): Promise<StageReport> {
  const requested = await names(ctx, TICK_FOLDERS.requested);
  const files = requested.names.filter((n) => n.endsWith(".json"));
  // A request whose tick is running is being consumed, not piling up. Ticks run in request
  // order, so only the oldest file can be the running one: one read tells.
  const head = files[0] ? await readRecord(join(ctx.vault, TICK_FOLDERS.requested, files[0])) : undefined;
  const runningTick = head?.status === "running" ? head : undefined;
  const waiting = runningTick ? files.slice(1) : files;
  const oldest = waiting
    .map(stampOf)
    .filter((d): d is Date => d !== undefined)
    .sort((a, b) => a.getTime() - b.getTime())[0];
  const waitingMinutes = oldest ? Math.round((ctx.now.getTime() - oldest.getTime()) / 60_000) : null;
  const runningSince = runningTick?.started_at ? new Date(runningTick.started_at) : undefined;
  const runningMinutes = runningSince ? Math.round((ctx.now.getTime() - runningSince.getTime()) / 60_000) : null;
  const newestOf = async (dir: string) => {
    const { names: list } = await names(ctx, dir);
    const newest = list.filter((n) => n.endsWith(".json")).at(-1);
    return newest ? readRecord(join(ctx.vault, dir, newest)) : undefined;
  };
  const [completed, failed] = await Promise.all([newestOf(TICK_FOLDERS.completed), newestOf(TICK_FOLDERS.failed)]);
  const finished = (r: TickRecord | undefined) => r?.finished_at ?? r?.requested_at ?? "";
  const last = [completed, failed].filter((r): r is TickRecord => r !== undefined).sort((a, b) => (finished(a) < finished(b) ? 1 : -1))[0];
  const evidence: Record<string, unknown> = {
    requested: waiting.length,
    oldest_waiting_minutes: waitingMinutes,
    running: runningTick ? { tick_id: runningTick.tick_id, started_at: runningTick.started_at, running_minutes: runningMinutes } : null,
    stale_minutes: ctx.drainStaleMinutes,
    last_tick: last ? { tick_id: last.tick_id, status: last.status, finished_at: last.finished_at } : null,
    error_tail: last?.status === "failed" ? last.error_tail : null,
    truncated: requested.truncated,
  };
  if (waitingMinutes !== null && waitingMinutes > ctx.drainStaleMinutes) {
    return {
      name: "drain",
      verdict: "fail",
      evidence,
      message: `${waiting.length} tick request(s) pile up unconsumed in ${TICK_FOLDERS.requested}/, the oldest for ${waitingMinutes} min (PIPELINE_DRAIN_STALE_MINUTES is ${ctx.drainStaleMinutes}): ${runningTick ? `they wait behind tick ${runningTick.tick_id}, running for ${runningMinutes ?? "?"} min` : "the tick worker is not running them"}`,
    };
  }
  if (last?.status === "failed") {
    const firstLine = (last.error_tail ?? "").split("\n")[0];
    return { name: "drain", verdict: "fail", evidence, message: `the most recent tick (${last.tick_id}) failed: ${firstLine}` };
  }
  if (runningTick && runningMinutes !== null && runningMinutes > ctx.drainStaleMinutes) {
    return {
      name: "drain",
      verdict: "warn",
      evidence,
      message: `tick ${runningTick.tick_id} has been running for ${runningMinutes} min (longer than PIPELINE_DRAIN_STALE_MINUTES, ${ctx.drainStaleMinutes}); ${waiting.length} request(s) wait behind it`,
    };
  }
  if (!last)
    return {
      name: "drain",
      verdict: "ok",
      evidence,
      message: waiting.length ? `${waiting.length} tick request(s) waiting; none finished yet` : "no tick has run yet (nothing to check)",
    };
  return {
    name: "drain",
    verdict: "ok",
    evidence,
    message: `the most recent tick (${last.tick_id}) succeeded at ${last.finished_at}; ${waiting.length} waiting`,
  };
}

// spec: arcs — fails when arcs exist but hot-arcs.md was never written.
export async function arcsStage(ctx: StageContext): Promise<StageReport> {
  const { names: list, truncated } = await names(ctx, ARCS_DIR);
  const arcs = list.filter((n) => n.endsWith(".md"));
  const hot = await mtimeOf(join(ctx.vault, HOT_ARCS_FILE));
  const evidence = {
    arc_records: arcs.length,
    examples: arcs.slice(0, 3).map((n) => `${ARCS_DIR}/${n}`),
    hot_arcs_md: hot ? { exists: true, modified: hot.toISOString() } : { exists: false },
    truncated,
  };
  if (arcs.length === 0)
    return { name: "arcs", verdict: "ok", evidence, message: hot ? "no arc records; hot-arcs.md is there" : "no arcs yet (nothing to check)" };
  if (!hot)
    return {
      name: "arcs",
      verdict: "fail",
      evidence,
      message: `${arcs.length} arc record(s) exist in ${ARCS_DIR}/ but ${HOT_ARCS_FILE} was never written: run a tick, and check its record if it fails`,
    };
  return { name: "arcs", verdict: "ok", evidence, message: `${arcs.length} arc record(s); ${HOT_ARCS_FILE} written ${hot.toISOString()}` };
}

async function feedEntries(
  ctx: StageContext,
): Promise<{ entries: FeedEntry[]; invalid: Array<{ path: string; why: string }>; files: number; truncated: boolean }> {
  const { files, truncated, entries: read } = await walk(ctx.vault, FEED_DIR, { recursive: false, filter: (p) => /\.md$/i.test(p), limit: ctx.budget.left });
  ctx.budget.take(read);
  const entries: FeedEntry[] = [];
  const invalid: Array<{ path: string; why: string }> = [];
  for (const f of files) {
    const parsed = parseFeedEntry(f.path, await readFile(join(ctx.vault, f.path), "utf8").catch(() => ""), f.mtimeMs);
    if (parsed.ok) entries.push(parsed.entry);
    else invalid.push({ path: f.path, why: parsed.why });
  }
  return { entries, invalid, files: files.length, truncated };
}

/** A lesson log is named like the ones records.ts writes: lessons-YYYY-MM-DD.md. */
const LESSON_LOG_NAME = /(^|\/)lessons-\d{4}-\d{2}-\d{2}\.md$/i;

// spec: lessons — fails when a lesson log sits outside left/reference/, the feed is missing,
// or recent lessons yield an empty feed.
export async function lessonsStage(ctx: StageContext): Promise<StageReport> {
  const scan = await walk(ctx.vault, "", { filter: (p) => LESSON_LOG_NAME.test(p), limit: ctx.budget.left, stat: false });
  ctx.budget.take(scan.entries);
  const misplaced = scan.files.map((f) => f.path).filter((p) => !p.startsWith(`${LESSONS_DIR}/`));
  const logs = await lessonLogs(ctx.vault);
  const recentSince = new Date(ctx.now.getTime() - RECENT_LESSON_DAYS * 86_400_000);
  const [newest] = await newestLessons(ctx.vault, 1);
  const recent = newest !== undefined && newest.ts >= recentSince.toISOString();
  const feed = await feedEntries(ctx);
  const entry = feed.entries.find((e) => e.meta.kind === "lessons" || e.path === TICK_ENTRIES.lessons);
  const items = entry ? entry.body.split("\n").filter((l) => l.startsWith("- ")).length : 0;
  const expired = entry ? isExpired(entry, ctx.now) : false;
  const evidence = {
    lesson_logs: logs.length,
    misplaced_logs: misplaced.slice(0, LISTED),
    newest_lesson_at: newest?.ts ?? null,
    recent_days: RECENT_LESSON_DAYS,
    feed_entry: entry ? { path: entry.path, items, expired, expires_at: entry.expires_at } : null,
    truncated: scan.truncated,
    // This walk covers the whole vault: the symlinks no walk or read follows (out of the vault, to a folder, dangling, looping).
    symlinks_skipped: { count: scan.skippedLinks.length, examples: scan.skippedLinks.slice(0, LISTED) },
  };
  if (misplaced.length > 0) {
    return {
      name: "lessons",
      verdict: "fail",
      evidence,
      message: `${misplaced.length} lesson log(s) sit outside ${LESSONS_DIR}/ (the only place they may sit): ${misplaced.slice(0, 3).join(", ")}`,
    };
  }
  if (logs.length === 0) return { name: "lessons", verdict: "ok", evidence, message: "no lessons yet (nothing to check)" };
  if (!entry) {
    // A lesson written after the last completed tick (or before any) waits for the next one:
    // that is the pipeline working, not broken (issue 16 part 5). Once a tick has run over it
    // and left no entry, the spec's rule fails.
    const newestLog = logs[0] ? await mtimeOf(join(ctx.vault, LESSONS_DIR, logs[0])) : null;
    const ticked = await lastCompletedTick(ctx);
    if (!ticked || (newestLog && newestLog > ticked)) {
      const due = ctx.nextTickAt?.();
      return {
        name: "lessons",
        verdict: "warn",
        evidence: { ...evidence, last_tick_at: ticked?.toISOString() ?? null, next_tick_at: due?.toISOString() ?? null },
        message: `${logs.length} lesson log(s) wait for the next tick to reach the feed: ${due ? `it is due at ${due.toISOString()}` : "no tick is scheduled (TICK_INTERVAL_SECONDS=0): run router-cli tick"}`,
      };
    }
    return {
      name: "lessons",
      verdict: "fail",
      evidence,
      message: `${logs.length} lesson log(s) exist but the feed is missing: no lessons entry in ${FEED_DIR}/ (a tick writes ${TICK_ENTRIES.lessons})`,
    };
  }
  if (recent && (items === 0 || expired)) {
    return {
      name: "lessons",
      verdict: "fail",
      evidence,
      message: `recent lessons (newest ${newest!.ts}) yield an empty feed: ${entry.path} ${expired ? `expired at ${entry.expires_at}` : "lists no lesson"}`,
    };
  }
  return { name: "lessons", verdict: "ok", evidence, message: `${logs.length} lesson log(s); ${entry.path} lists ${items}` };
}

/** Why a file in amygdala/ that parseSignalFile refused is not a signal the tick lists. */
function notSignalWhy(text: string): string {
  const { data } = splitFrontmatter(text);
  if (data.type !== "signal") return "its frontmatter lacks `type: signal`";
  return "its frontmatter lacks a valid `created` time";
}

// spec: signals — fails when signal files exist but signals.md was never written; warns when
// signals.md is stale (the TTL sweep has not run). A file in amygdala/ that is not a signal
// (hand-made, no `type: signal`) is one the tick skips: it is named with the fix, and never
// counted as a signal that a tick would list.
export async function signalsStage(ctx: StageContext): Promise<StageReport> {
  const { names: list, truncated } = await names(ctx, "amygdala");
  const files = list.filter((n) => n.endsWith(".md"));
  const md = await readFile(join(ctx.vault, SIGNALS_FILE), "utf8").catch(() => null);
  const sweptRaw = md === null ? undefined : splitFrontmatter(md).data.swept;
  const swept = typeof sweptRaw === "string" && !Number.isNaN(Date.parse(sweptRaw)) ? new Date(sweptRaw) : undefined;
  // Signals overdue for the sweep: open, not critical, quiet past the TTL. Newest files first,
  // capped; past the cap, older files are read only while no signal has been found yet.
  const overdue: string[] = [];
  const notSignals: { path: string; why: string }[] = [];
  let open = 0;
  let signals = 0;
  for (const [i, name] of [...files].reverse().entries()) {
    if (i >= 200 && signals > 0) break;
    const path = `amygdala/${name}`;
    const text = await readFile(join(ctx.vault, "amygdala", name), "utf8").catch(() => "");
    const sig = parseSignalFile(path, text);
    if (!sig) {
      notSignals.push({ path, why: notSignalWhy(text) });
      continue;
    }
    signals++;
    if (sig.status !== "open") continue;
    open++;
    if (severityRank(sig.severity) > 0 && ctx.now.getTime() - sig.last_seen.getTime() > ctx.signalTtlHours * 3_600_000) overdue.push(sig.path);
  }
  const evidence = {
    signal_files: files.length,
    open,
    overdue_for_sweep: overdue.slice(0, LISTED),
    not_signals: notSignals.slice(0, LISTED),
    ttl_hours: ctx.signalTtlHours,
    signals_md: md === null ? { exists: false } : { exists: true, swept: swept?.toISOString() ?? null },
    truncated,
  };
  const notSignalsWarning = (): StageReport => {
    const first = notSignals[0]!;
    return {
      name: "signals",
      verdict: "warn",
      evidence,
      message: `${notSignals.length} file(s) in amygdala/ are not signals, so no tick lists them (${first.path}: ${first.why}): give each \`type: signal\` and \`created: <ISO time>\` frontmatter (or record it with POST /marker), or move it out of amygdala/`,
    };
  };
  if (signals === 0) {
    if (notSignals.length > 0) return notSignalsWarning();
    return { name: "signals", verdict: "ok", evidence, message: md === null ? "no signals yet (nothing to check)" : "no signal files" };
  }
  if (md === null)
    return {
      name: "signals",
      verdict: "fail",
      evidence,
      message: `${files.length - notSignals.length} signal file(s) exist in amygdala/ but ${SIGNALS_FILE} was never written: run a tick`,
    };
  if (!swept || hoursBetween(swept, ctx.now) > ctx.signalTtlHours) {
    return {
      name: "signals",
      verdict: "warn",
      evidence,
      message: `${SIGNALS_FILE} is stale: last swept ${swept ? `${hoursBetween(swept, ctx.now)} h ago` : "never"}, longer than SIGNAL_TTL_HOURS (${ctx.signalTtlHours})`,
    };
  }
  if (overdue.length > 0) {
    return {
      name: "signals",
      verdict: "warn",
      evidence,
      message: `${SIGNALS_FILE} is stale: ${overdue.length} open signal(s) are past SIGNAL_TTL_HOURS (${ctx.signalTtlHours}) and the TTL sweep has not run since`,
    };
  }
  if (notSignals.length > 0) return notSignalsWarning();
  return { name: "signals", verdict: "ok", evidence, message: `${open} open signal(s); ${SIGNALS_FILE} swept ${swept.toISOString()}` };
}

// spec: feed — fails when brain-feed/ holds files but none parse as feed entries.
export async function feedStage(ctx: StageContext): Promise<StageReport> {
  const feed = await feedEntries(ctx);
  const live = feed.entries.filter((e) => !isExpired(e, ctx.now)).length;
  const evidence = { files: feed.files, parsed: feed.entries.length, live, invalid: feed.invalid.slice(0, LISTED), truncated: feed.truncated };
  if (feed.files === 0) return { name: "feed", verdict: "ok", evidence, message: `no feed entries in ${FEED_DIR}/ yet (nothing to check)` };
  if (feed.entries.length === 0) {
    return {
      name: "feed",
      verdict: "fail",
      evidence,
      message: `${FEED_DIR}/ holds ${feed.files} file(s) but none parse as a feed entry (frontmatter id, title, priority, ttl, severity and a body): ${feed.invalid
        .slice(0, 3)
        .map((i) => `${i.path}: ${i.why}`)
        .join("; ")}`,
    };
  }
  if (feed.invalid.length > 0) {
    return {
      name: "feed",
      verdict: "warn",
      evidence,
      message: `${feed.invalid.length} of ${feed.files} file(s) in ${FEED_DIR}/ do not parse as feed entries: ${feed.invalid
        .slice(0, 3)
        .map((i) => `${i.path}: ${i.why}`)
        .join("; ")}`,
    };
  }
  return { name: "feed", verdict: "ok", evidence, message: `${feed.entries.length} feed entr${feed.entries.length === 1 ? "y" : "ies"}, ${live} live` };
}

// spec: index — fails when source files exist for a producer for which the index holds no rows.
export async function indexStage(ctx: StageContext): Promise<StageReport> {
  let rows: Record<Producer, number>;
  try {
    rows = await ctx.index.countByProducer();
  } catch (err) {
    return {
      name: "index",
      verdict: "fail",
      evidence: { index: ctx.index.kind, error: (err as Error).message },
      message: `the ${ctx.index.kind} index does not answer: ${(err as Error).message}`,
    };
  }
  const withFiles: Producer[] = [];
  let truncated = false;
  for (const s of PRODUCER_SOURCES) {
    for (const root of s.roots) {
      const isFile = root.endsWith(".md");
      const found = isFile
        ? await Bun.file(join(ctx.vault, root)).exists()
        : await walk(ctx.vault, root, { filter: s.matches, maxFiles: 1, limit: ctx.budget.left, stat: false }).then((w) => {
            ctx.budget.take(w.entries);
            truncated ||= w.truncated && w.files.length === 0;
            return w.files.length > 0;
          });
      if (found) {
        withFiles.push(s.producer);
        break;
      }
    }
  }
  const missing = withFiles.filter((p) => (rows[p] ?? 0) === 0);
  // Links whose target no note carries: worth seeing (a rename, a typo), never a failure.
  const links = await ctx.index.linkCounts().catch((err: Error) => ({ error: err.message }));
  const evidence = { index: ctx.index.kind, rows, producers_with_files: withFiles, missing, truncated, links };
  if (missing.length > 0) {
    return {
      name: "index",
      verdict: "fail",
      evidence,
      message: `source files exist for ${missing.join(", ")} but the index holds no rows for ${missing.length === 1 ? "it" : "them"}: run a tick (it refreshes the index)`,
    };
  }
  const total = PRODUCERS.reduce((n, p) => n + (rows[p] ?? 0), 0);
  const linkLine = "links" in links && links.links > 0 ? `; ${links.links} link(s), ${links.dangling} dangling` : "";
  return {
    name: "index",
    verdict: "ok",
    evidence,
    message: withFiles.length
      ? `${total} indexed document(s) across ${withFiles.length} producer(s) with files${linkLine}`
      : "no source files yet (nothing to check)",
  };
}
