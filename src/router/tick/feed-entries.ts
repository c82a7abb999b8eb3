// What the tick writes for sessions to read: signals.md (live signals after the TTL sweep)
// and its feed entries under brain-feed/ (tick-signals.md, tick-arcs.md, tick-lessons.md,
// tick-decisions.md). An entry with nothing to say is removed rather than left empty.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { FEED_DIR, feedEntryMarkdown } from "../feed/entry";
import type { LessonEntry } from "../feed/lessons";
import { splitFrontmatter } from "../index/document";
import { SEVERITIES, type SignalFile, severityRank, signalLine } from "../signals/signal-files";
import { withFrontmatter } from "../vault/frontmatter";
import type { Arc } from "./arcs";

export const SIGNALS_FILE = "signals.md";
export const TICK_ENTRIES = {
  signals: `${FEED_DIR}/tick-signals.md`,
  arcs: `${FEED_DIR}/tick-arcs.md`,
  lessons: `${FEED_DIR}/tick-lessons.md`,
  decisions: `${FEED_DIR}/tick-decisions.md`,
} as const;

const LISTED = { signals: 20, arcs: 10, lessons: 10, decisions: 10 };
const DECISION_DAYS = 14;

/** `swept` defaults to asOf (the tick sweeps); null leaves it out (never swept yet). */
export function signalsMarkdown(live: SignalFile[], opts: { asOf: Date; ttlHours: number; swept?: Date | null }): string {
  const swept = opts.swept === undefined ? opts.asOf : opts.swept;
  const fm = {
    id: "signals",
    title: "Live signals",
    type: "signals",
    generated: opts.asOf.toISOString(),
    ...(swept ? { swept: swept.toISOString() } : {}),
    ttl_hours: opts.ttlHours,
    live: live.length,
  };
  const lines = live.map(signalLine);
  return withFrontmatter(fm, `# Live signals\n\n${lines.length ? lines.join("\n") : "No live signals."}`);
}

const oneLine = (s: string, max: number) => {
  const line = s.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** Seconds an arcs/lessons/decisions entry lives: two tick intervals, at least a day (a week with ticks off). */
function feedTtlSeconds(tickIntervalSeconds: number): number {
  return tickIntervalSeconds > 0 ? Math.max(2 * tickIntervalSeconds, 86_400) : 7 * 86_400;
}

export async function feedEntries(
  vault: string,
  opts: { asOf: Date; arcs: Arc[]; lessons: LessonEntry[]; live: SignalFile[]; tickIntervalSeconds: number; signalTtlHours: number },
): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  const ttl = feedTtlSeconds(opts.tickIntervalSeconds);
  const created = opts.asOf;

  const live = opts.live.slice(0, LISTED.signals);
  out.set(
    TICK_ENTRIES.signals,
    live.length === 0
      ? null
      : feedEntryMarkdown(
          {
            id: "tick-signals",
            title: "Live signals",
            priority: 1,
            ttl: opts.signalTtlHours * 3600,
            severity: SEVERITIES[Math.min(...live.map((s) => severityRank(s.severity)))] ?? "medium",
            created,
            kind: "signals",
          },
          live.map(signalLine).join("\n") + (opts.live.length > live.length ? `\n\n…and ${opts.live.length - live.length} more in signals.md.` : ""),
        ),
  );

  const arcs = opts.arcs.slice(0, LISTED.arcs);
  out.set(
    TICK_ENTRIES.arcs,
    arcs.length === 0
      ? null
      : feedEntryMarkdown(
          { id: "tick-arcs", title: "Hot arcs", priority: 2, ttl, severity: "info", created, kind: "arcs" },
          arcs
            .map((a) => `- **${oneLine(a.title, 100)}** (${a.id}, heat ${a.heat.toFixed(1)}, ${a.status}, ${a.region}) — ${oneLine(a.summary, 240)}`)
            .join("\n"),
        ),
  );

  const lessons = opts.lessons.slice(0, LISTED.lessons);
  out.set(
    TICK_ENTRIES.lessons,
    lessons.length === 0
      ? null
      : feedEntryMarkdown(
          { id: "tick-lessons", title: "Recent lessons", priority: 3, ttl, severity: "info", created, kind: "lessons" },
          lessons.map((l) => `- ${l.ts.slice(0, 10)} (${l.source}) ${oneLine(l.text, 300)}`).join("\n"),
        ),
  );

  const decisions = await proposedDecisions(vault, new Date(opts.asOf.getTime() - DECISION_DAYS * 86_400_000), opts.asOf);
  out.set(
    TICK_ENTRIES.decisions,
    decisions.length === 0
      ? null
      : feedEntryMarkdown(
          { id: "tick-decisions", title: "Open decisions", priority: 4, ttl, severity: "info", created, kind: "decisions" },
          decisions
            .slice(0, LISTED.decisions)
            .map((d) => `- ${d.id} ${oneLine(d.title, 160)} (${d.status}, ${d.path})`)
            .join("\n"),
        ),
  );
  return out;
}

interface DecisionRow {
  id: string;
  title: string;
  status: string;
  created: string;
  path: string;
}

/** ADRs still `proposed`, created within the window, newest first. */
async function proposedDecisions(vault: string, since: Date, asOf: Date): Promise<DecisionRow[]> {
  const names = (await readdir(join(vault, "left/decisions")).catch(() => [] as string[]))
    .filter((n) => /^ADR-\d{4}-.*\.md$/.test(n))
    .sort()
    .reverse();
  const out: DecisionRow[] = [];
  for (const name of names.slice(0, 200)) {
    const path = `left/decisions/${name}`;
    const { data } = splitFrontmatter(await readFile(join(vault, path), "utf8").catch(() => ""));
    const created = typeof data.created === "string" ? data.created : "";
    if (data.status !== "proposed" || !created || created < since.toISOString() || created > asOf.toISOString()) continue;
    out.push({ id: String(data.id ?? name.slice(0, 8)), title: String(data.title ?? name), status: "proposed", created, path });
  }
  return out.sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : a.id < b.id ? -1 : 1));
}
