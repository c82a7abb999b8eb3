// Where each kind of record lands in the vault, and in what format (the spec names them;
// ingest fans out through the same writers). Every write is atomic (temp file + rename);
// appends to shared logs run under a lock (vault-lock.ts: queued in-process, then a
// cross-process file lock) so concurrent writers lose nothing. The reads (a log's text, the
// signal folder's names and files, a folder's creation) are synchronous: small files and
// folder listings, cheap in this thread, while on the thread pool each was a round
// trip queued behind the pool's other work — an import's hundreds of file creations — and a
// batch's answer waited for its fan-out's reads in series.
import { mkdirSync, readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { writeFileAtomic, writeFileAtomicSync } from "../../common/atomic-write";
import { splitFrontmatter } from "../index/document";
import { withFrontmatter } from "./frontmatter";
import { readTextOrNull, statOrNull } from "./quiet-fs";
import { safeVaultPathSync } from "./safe-path";
import { compactStamp, isoDate, slugify } from "./slug";
import { withVaultLock } from "./vault-lock";

export interface RecordInput {
  content: string;
  title?: string;
  source: string;
  session_id?: string;
  severity?: string;
  scope?: string;
  /** A decision's status (default proposed). */
  status?: string;
  /** The record's time (replays back-date it). */
  ts: Date;
}

export interface RecordWrite {
  /** Vault-relative path written. */
  path: string;
  /** False when an identical record was already there (dropped or absorbed). */
  written: boolean;
  /** Signals: how many times this signal has been seen (1 when new, more once absorbed). */
  count?: number;
}

const lockOpts = { timeoutMs: 30_000 };

/**
 * Runs `fn` holding the lock on a shared log. The folder is resolved first and the file itself
 * only under the lock: resolving a file (realpath) while another writer renames a new version
 * over it can fail with ENOENT for an instant, which safeVaultPath would report as an escape.
 */
async function locked<T>(vault: string, rel: string, fn: (abs: string) => Promise<T>): Promise<T> {
  const dir = safeVaultPathSync(vault, dirname(rel));
  mkdirSync(dir, { recursive: true });
  return withVaultLock(join(dir, basename(rel)), async () => fn(safeVaultPathSync(vault, rel)), lockOpts);
}

/**
 * Parsed frontmatter and body of files in a folder, re-read only when a file's mtime or size
 * changed: duplicate checks scan every signal or ADR on each write, and YAML parsing is what
 * that costs.
 */
const parsedCache = new Map<string, { mtimeMs: number; size: number; data: Record<string, unknown>; body: string }>();

/** A file's frontmatter and its body, trimmed (what the duplicate checks compare; kept trimmed, so a scan trims nothing). */
type Parsed = { name: string; data: Record<string, unknown>; body: string };

/**
 * With `bodies` (a duplicate check): a file this process read before whose body is none of
 * these is passed over unread and unstatted — a stat a file would be most of a signal's
 * duplicate check with many open signals. The one thing that misses is a file edited
 * since (by hand) to hold one of these bodies: it is not absorbed into, and the new signal gets
 * its own file. A file whose body matches is statted as before, so one closed since is seen.
 */
function parsedFiles(dir: string, names: string[], bodies?: ReadonlySet<string>): Parsed[] {
  const out: Parsed[] = [];
  for (const name of names) {
    const abs = join(dir, name);
    if (bodies) {
      const known = parsedCache.get(abs);
      if (known && !bodies.has(known.body)) continue;
    }
    const st = statOrNull(abs);
    if (!st) continue;
    const hit = parsedCache.get(abs);
    if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) {
      out.push({ name, data: hit.data, body: hit.body });
      continue;
    }
    const { data, body: text } = splitFrontmatter(readTextOrNull(abs) ?? "");
    const body = text.trim();
    parsedCache.set(abs, { mtimeMs: st.mtimeMs, size: st.size, data, body });
    out.push({ name, data, body });
  }
  return out;
}

const firstLine = (s: string) =>
  s
    .trim()
    .split("\n")[0]
    ?.replace(/^#+\s*/, "")
    .slice(0, 80) || "untitled";

/** lesson → left/reference/lessons-YYYY-MM-DD.md; an identical entry the same day is dropped. */
export async function appendLesson(vault: string, r: RecordInput): Promise<RecordWrite> {
  const date = isoDate(r.ts);
  const rel = `left/reference/lessons-${date}.md`;
  return locked(vault, rel, async (abs) => {
    const current = readTextOrNull(abs);
    const body = r.content.trim();
    const base =
      current ?? withFrontmatter({ id: `lessons-${date}`, title: `Lessons ${date}`, type: "lesson-log", created: r.ts.toISOString() }, `# Lessons ${date}`);
    if (current !== null && lessonBodies(current).includes(body)) return { path: rel, written: false };
    const entry = `\n## ${r.ts.toISOString()} — ${r.source} — ${r.session_id ?? "-"}\n\n${escapeEntryHeadings(body)}\n`;
    await writeFileAtomic(abs, `${base.trimEnd()}\n${entry}`);
    return { path: rel, written: true };
  });
}

/**
 * A lesson's own line that looks like an entry heading (`## 2026-…T…`) would split the log into
 * two entries when read back. Such lines are written with one more leading backslash (`\## …`,
 * which markdown shows as the same text, not a heading) and read back with one less; a line
 * that already began with backslashes gets one more, so every text comes back exactly.
 */
const HEADING_LIKE = /^(\\*)(## \d{4}-\d{2}-\d{2}T)/gm;
const ESCAPED_HEADING = /^\\(\\*## \d{4}-\d{2}-\d{2}T)/gm;
export const escapeEntryHeadings = (text: string) => text.replace(HEADING_LIKE, "\\$1$2");
export const unescapeEntryHeadings = (text: string) => text.replace(ESCAPED_HEADING, "$1");

/** The bodies of a lesson log's entries, as they were given (for duplicate detection and the pipeline checks). */
export function lessonBodies(log: string): string[] {
  const { body } = splitFrontmatter(log);
  return body
    .split(/\n(?=## \d{4}-\d{2}-\d{2}T)/)
    .slice(1)
    .map((e) => unescapeEntryHeadings(e.replace(/^## [^\n]*\n/, "").trim()));
}

/** milestone → projects/<scope>/BLOCKS.md when that project folder exists, else daily/DATE.md. */
export async function appendMilestone(vault: string, r: RecordInput): Promise<RecordWrite> {
  return unwrap((await appendMilestones(vault, [r]))[0]!);
}

/**
 * Many milestones (a batch of ingests): one locked rewrite per target file, its lines in the
 * order given. Each record's outcome in order: its write, or the Error that kept its file from
 * being written (then none of that file's lines were: the rewrite is one atomic write).
 */
export async function appendMilestones(vault: string, rs: RecordInput[]): Promise<Array<RecordWrite | Error>> {
  const out: Array<RecordWrite | Error> = new Array(rs.length);
  const byFile = new Map<string, number[]>();
  const targets = await Promise.all(rs.map((r) => milestoneFile(vault, r).catch((err: Error) => err)));
  targets.forEach((rel, i) => {
    if (rel instanceof Error) out[i] = rel;
    else byFile.set(rel, [...(byFile.get(rel) ?? []), i]);
  });
  await Promise.all(
    [...byFile].map(async ([rel, idx]) => {
      try {
        await locked(vault, rel, async (abs) => {
          const first = rs[idx[0]!]!;
          const current = readTextOrNull(abs);
          const head = current ?? (rel.startsWith("daily/") ? `# ${isoDate(first.ts)}\n` : `# Blocks\n`);
          const lines = idx.map((i) => {
            const r = rs[i]!;
            return `- ${r.ts.toISOString()} — milestone — ${r.content.trim().replace(/\n+/g, " ")} (${r.source})\n`;
          });
          writeFileAtomicSync(abs, `${head.trimEnd()}\n${lines.join("")}`);
        });
        for (const i of idx) out[i] = { path: rel, written: true };
      } catch (err) {
        for (const i of idx) out[i] = err as Error;
      }
    }),
  );
  return out;
}

async function milestoneFile(vault: string, r: RecordInput): Promise<string> {
  if (r.scope) {
    const project = `projects/${slugify(r.scope, "")}`;
    const isDir = statOrNull(safeVaultPathSync(vault, project))?.isDirectory() ?? false;
    if (isDir && slugify(r.scope, "") !== "") return `${project}/BLOCKS.md`;
  }
  return `daily/${isoDate(r.ts)}.md`;
}

function unwrap(w: RecordWrite | Error): RecordWrite {
  if (w instanceof Error) throw w;
  return w;
}

/**
 * signal → amygdala/<YYYYMMDDTHHMMSSZ>-<severity>-<slug>.md. An open signal with the same
 * source, severity and body absorbs the duplicate (its `count` goes up).
 */
export async function writeSignal(vault: string, r: RecordInput): Promise<RecordWrite> {
  return unwrap((await writeSignals(vault, [r]))[0]!);
}

/**
 * Many signals (a batch of ingests) under one hold of the signal folder's lock, with one scan
 * of it: the open signals are read once into a map (source, severity, body → file), which
 * this call's own new and absorbed signals keep current, so a duplicate later in the batch is
 * absorbed as if written one at a time. Each record is its own write: one failing (the Error
 * in its place) leaves the others, and the map, as they were.
 */
export async function writeSignals(vault: string, rs: RecordInput[]): Promise<Array<RecordWrite | Error>> {
  const dir = safeVaultPathSync(vault, "amygdala");
  mkdirSync(dir, { recursive: true });
  return withVaultLock(join(dir, ".signals"), async () => {
    const severities = [...new Set(rs.map((r) => signalSeverity(r)))];
    // The severity is in the file name: only those files can hold a duplicate.
    const candidates = readdirSync(dir).filter((n) => n.endsWith(".md") && severities.some((s) => n.includes(`-${s}-`)));
    // Only a file whose body is one of these records' can hold a duplicate of one: the key (a
    // JSON text holding the body) is built for those alone, not for every open signal on
    // every write (that was most of a signal's fan-out with a few hundred open signals).
    const bodies = new Set(rs.map((r) => r.content.trim()));
    const open = new Map<string, Parsed>();
    for (const f of parsedFiles(dir, candidates, bodies)) {
      if (!bodies.has(f.body)) continue;
      const { status, source, severity } = f.data;
      if (status !== "open" || typeof severity !== "string" || !f.name.includes(`-${severity}-`)) continue;
      const key = signalKey(source, severity, f.body);
      const first = open.get(key);
      if (!first || f.name < first.name) open.set(key, f); // the first in name order, as a one-by-one scan finds
    }
    const out: Array<RecordWrite | Error> = [];
    for (const r of rs) {
      const severity = signalSeverity(r);
      const body = r.content.trim();
      const key = signalKey(r.source, severity, body);
      try {
        const hit = open.get(key);
        if (hit) {
          const count = (typeof hit.data.count === "number" ? hit.data.count : 1) + 1;
          const data = { ...hit.data, count, last_seen: r.ts.toISOString() };
          writeFileAtomicSync(join(dir, hit.name), withFrontmatter(data, body));
          open.set(key, { ...hit, data });
          out.push({ path: `amygdala/${hit.name}`, written: false, count });
          continue;
        }
        const name = `${compactStamp(r.ts)}-${severity}-${slugify(r.title ?? firstLine(body))}.md`;
        const fm = {
          type: "signal",
          severity,
          status: "open",
          source: r.source,
          session_id: r.session_id,
          created: r.ts.toISOString(),
          count: 1,
          title: r.title ?? firstLine(body),
        };
        writeFileAtomicSync(join(dir, name), withFrontmatter(fm, body));
        open.set(key, { name, data: Object.fromEntries(Object.entries(fm).filter(([, v]) => v !== undefined)), body });
        out.push({ path: `amygdala/${name}`, written: true, count: 1 });
      } catch (err) {
        out.push(err as Error);
      }
    }
    return out;
  });
}

const signalSeverity = (r: RecordInput) => slugify(r.severity ?? "medium", "medium");
const signalKey = (source: unknown, severity: string, body: string) => JSON.stringify([source, severity, body]);

/** decision → left/decisions/ADR-NNNN-slug.md with status proposed, or the one given (NNNN = next number). */
export async function writeDecision(vault: string, r: RecordInput): Promise<RecordWrite> {
  const dir = safeVaultPathSync(vault, "left/decisions");
  mkdirSync(dir, { recursive: true });
  return withVaultLock(join(dir, ".adr"), async () => {
    const names = readdirSync(dir);
    const body = r.content.trim();
    for (const { name, body: existing } of parsedFiles(dir, names.filter((n) => /^ADR-\d{4}-/.test(n)).sort())) {
      if (existing === body) return { path: `left/decisions/${name}`, written: false };
    }
    const next = names.reduce((max, n) => Math.max(max, Number(/^ADR-(\d{4})-/.exec(n)?.[1] ?? 0)), 0) + 1;
    const num = String(next).padStart(4, "0");
    const title = r.title ?? firstLine(body);
    const name = `ADR-${num}-${slugify(title)}.md`;
    const fm = {
      id: `ADR-${num}`,
      title,
      type: "decision",
      status: r.status ?? "proposed",
      source: r.source,
      session_id: r.session_id,
      created: r.ts.toISOString(),
    };
    await writeFileAtomic(join(dir, name), withFrontmatter(fm, body));
    return { path: `left/decisions/${name}`, written: true };
  });
}
