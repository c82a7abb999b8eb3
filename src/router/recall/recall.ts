// Recall (issue 35 parts 3 and 4): the vault's notes that bear on a prompt or a job's task,
// found through the router's public API (POST /search, then POST /notes/batch for the text),
// kept above a relevance threshold, lessons and decisions first, rendered within a character
// budget with each note's path so the agent can read it whole. Used by the prompt hook
// (cli/router/hook/prompt.ts) and by the orchestrator before a job's or a conversation's first
// turn; both pass the paths already given so a note reaches a session once. Imports only the
// client's types and the stop-word list: the prompt hook loads it on every prompt.
import type { NotesBatch, RouterClient, SearchResult } from "../client";
import { STOP_WORDS } from "../index/stopwords";

export interface RecallSettings {
  /** The rendered block's budget, in characters (BRAIN_RECALL_MAX_CHARS). */
  maxChars: number;
  /** At most this many notes (BRAIN_RECALL_MAX_NOTES). */
  maxNotes: number;
  /** The share of the query's words a note must hold (BRAIN_RECALL_MIN_COVERAGE, 0–1). */
  minCoverage: number;
}

export const RECALL_DEFAULTS: RecallSettings = { maxChars: 2400, maxNotes: 3, minCoverage: 0.25 };

/** Fewer content words than this (a "yes", a "go on") look nothing up; a note must hold as many of the query's words. */
const MIN_PROMPT_WORDS = 2;
/** The query keeps this many of the prompt's words (a long task's first ones). */
const MAX_QUERY_WORDS = 24;
/** Candidates asked of the search before the threshold. */
const CANDIDATES = 10;
/** Each candidate's body is read up to this (the excerpt is cut from it). */
const BODY_CHARS = 8000;

export type RecallKind = "lesson" | "decision" | "note";

export interface RecalledNote {
  /** Vault path: `router-cli get <path>`, GET /notes/{path}. */
  path: string;
  title: string;
  kind: RecallKind;
  /** What marks it as given: the path, or `path#<entry>` for one entry of a lesson log. */
  key: string;
  /** The excerpt injected (a lesson log's matching entry, else the note's opening). */
  text: string;
  /** Share of the query's words the note holds (0–1). */
  coverage: number;
}

export interface RecallResult {
  /** The notes given, in the order shown; empty when nothing passed. */
  notes: RecalledNote[];
  /** The block to inject ("" when no note). */
  text: string;
}

const WORD = /[\p{L}\p{N}]+/gu;

/** The distinct content words of a text, lower-cased, stop words and single letters dropped. */
export function contentWords(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.toLowerCase().matchAll(WORD)) {
    const w = m[0];
    if (w.length < 2 || STOP_WORDS.has(w) || /^\d+$/.test(w)) continue;
    out.add(w);
  }
  return [...out];
}

/** The search query for a prompt: its content words, then the hint's (a repository's name) not already there. */
export function recallQuery(prompt: string, hint?: string): { query: string; words: string[] } | undefined {
  const words = contentWords(prompt).slice(0, MAX_QUERY_WORDS);
  if (words.length < MIN_PROMPT_WORDS) return undefined;
  const extra = hint ? contentWords(hint).filter((w) => !words.includes(w)) : [];
  const all = [...words, ...extra];
  return { query: all.join(" "), words: all };
}

/** A crude stem, so "deploys" meets "deploy" and "flaky" meets "flakes" in the fallback coverage. */
const stem = (w: string) => (w.replace(/(ies|es|s|y|ed|ing)$/, "") || w).slice(0, 5);

/** The share of `words` a text holds (by stem). */
export function coverageIn(text: string, words: string[]): number {
  if (words.length === 0) return 0;
  const held = new Set(contentWords(text).map(stem));
  return words.filter((w) => held.has(stem(w))).length / words.length;
}

export function kindOf(path: string, producer?: string): RecallKind {
  if (producer === "lessons" || /(^|\/)lessons-[^/]*\.md$/.test(path)) return "lesson";
  if (path.startsWith("left/decisions/")) return "decision";
  return "note";
}

type Hit = SearchResult["hits"][number] & { coverage?: number };

const stripMarks = (s: string) => s.replace(/<\/?mark>/g, "");

const ENTRY = /\n(?=## \d{4}-\d{2}-\d{2}T)/;

/** A lesson log's entries: [heading, text] each (records.ts writes them as `## <iso> — source — session`). */
function logEntries(body: string): Array<{ heading: string; text: string }> {
  return body
    .split(ENTRY)
    .slice(1)
    .map((e) => {
      const nl = e.indexOf("\n");
      return { heading: e.slice(3, nl < 0 ? undefined : nl).trim(), text: (nl < 0 ? "" : e.slice(nl)).replace(/^\\(\\*## \d{4}-\d{2}-\d{2}T)/gm, "$1").trim() };
    });
}

/** The excerpt of a note to inject, and the key that marks it as given. */
function excerptOf(hit: Hit, body: string | undefined, words: string[]): { key: string; text: string } {
  if (body === undefined) return { key: hit.path, text: stripMarks(hit.snippet) };
  const entries = logEntries(body);
  if (entries.length > 0) {
    // A lesson log holds a day's lessons: the entry holding most of the query's words (the newest on a tie).
    let best = 0;
    let bestCover = -1;
    entries.forEach((e, i) => {
      const c = coverageIn(e.text, words);
      if (c >= bestCover) {
        best = i;
        bestCover = c;
      }
    });
    // The matching entry lies past what was read of a long log: the search's passage stands in.
    if (bestCover <= 0) return { key: hit.id, text: stripMarks(hit.snippet) };
    const e = entries[best]!;
    return { key: `${hit.path}#${best + 1}`, text: `(${e.heading.split(" — ")[0]}) ${e.text}` };
  }
  return { key: hit.path, text: body.trim() };
}

/**
 * Searches with the prompt (and the hint), keeps the hits above the threshold whose excerpt was
 * not given yet (`given` holds their keys), lessons and decisions first, and renders them
 * within the budget. Throws what the client throws (the router down, a refusal): callers
 * decide what that costs them.
 */
export async function recall(
  client: RouterClient,
  input: { prompt: string; hint?: string; given?: ReadonlySet<string>; heading?: string },
  settings: RecallSettings = RECALL_DEFAULTS,
): Promise<RecallResult> {
  const q = recallQuery(input.prompt, input.hint);
  if (!q || settings.maxNotes < 1) return { notes: [], text: "" };
  const result = await client.search({ query: q.query, limit: CANDIDATES });
  const hits = result.hits as Hit[];
  const passing = hits
    .map((h, rank) => {
      // The search's own coverage when it gives one; else what the title and snippet show.
      const coverage = typeof h.coverage === "number" ? h.coverage : coverageIn(`${h.title} ${stripMarks(h.snippet)}`, q.words);
      return { h, rank, coverage, kind: kindOf(h.path, h.producer) };
    })
    // One shared word is chance ("new", "time"): a note holds two of the query's words at least.
    .filter((c) => c.coverage >= settings.minCoverage && Math.round(c.coverage * q.words.length) >= MIN_PROMPT_WORDS);
  if (passing.length === 0) return { notes: [], text: "" };
  const bodies = new Map<string, string>();
  const batch: NotesBatch | undefined = await client.notes({ paths: passing.map((c) => c.h.path), max_chars: BODY_CHARS }).catch(() => undefined);
  for (const n of batch?.notes ?? []) bodies.set(n.path, n.body);
  const order = (k: RecallKind) => (k === "note" ? 1 : 0);
  const given = input.given ?? new Set<string>();
  const notes: RecalledNote[] = [];
  for (const c of passing.sort((a, b) => order(a.kind) - order(b.kind) || a.rank - b.rank)) {
    if (notes.length >= settings.maxNotes) break;
    const { key, text } = excerptOf(c.h, bodies.get(c.h.path), q.words);
    if (given.has(key) || given.has(c.h.path) || !text.trim()) continue;
    notes.push({ path: c.h.path, title: c.h.title, kind: c.kind, key, text, coverage: Number(c.coverage.toFixed(3)) });
  }
  return render(notes, settings.maxChars, input.heading);
}

const LABEL: Record<RecallKind, string> = { lesson: "Lesson", decision: "Decision", note: "Note" };

/** The block: a heading, how to read a note whole, then each note's excerpt, all within maxChars. Notes that do not fit are left out. */
export function render(notes: RecalledNote[], maxChars: number, heading = "Team brain: notes that may bear on this"): RecallResult {
  if (notes.length === 0) return { notes: [], text: "" };
  const how = "Excerpts, best first; read one whole with `router-cli get <path>` (or GET /notes/<path>, or the router's MCP tool `get`).";
  const head = `# ${heading}\n\n${how}`;
  let text = head;
  const shown: RecalledNote[] = [];
  for (const n of notes) {
    const title = `\n\n## ${LABEL[n.kind]}: ${n.title} (${n.path})\n\n`;
    const room = maxChars - text.length - title.length;
    // Too little room left for a useful excerpt: the note is left out, not cut to a stub.
    if (room < 80) break;
    const body = n.text.length <= room ? n.text : `${n.text.slice(0, room - 1).trimEnd()}…`;
    text += title + body;
    shown.push({ ...n, text: body });
  }
  return shown.length ? { notes: shown, text } : { notes: [], text: "" };
}
