// Lesson logs (left/reference/lessons-YYYY-MM-DD.md, written by vault/records.ts) read back as
// entries: each `## <iso> — <source> — <session_id>` heading and the text under it.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { splitFrontmatter } from "../index/document";
import { containedFileNamesSync } from "../vault/contained";
import { unescapeEntryHeadings } from "../vault/records";

export interface LessonEntry {
  ts: string;
  source: string;
  session_id: string | null;
  text: string;
  /** The lesson log's vault-relative path. */
  path: string;
}

export const LESSONS_DIR = "left/reference";
const LOG = /^lessons-(\d{4}-\d{2}-\d{2})\.md$/;
const HEADING = /^## (\d{4}-\d{2}-\d{2}T[^\s]+) — (.*?) — (.*)$/;

export function parseLessonLog(path: string, text: string): LessonEntry[] {
  const { body } = splitFrontmatter(text);
  const out: LessonEntry[] = [];
  let current: LessonEntry | undefined;
  const lines: string[] = [];
  const flush = () => {
    if (current) out.push({ ...current, text: unescapeEntryHeadings(lines.join("\n").trim()) });
    lines.length = 0;
  };
  for (const line of body.split("\n")) {
    const m = HEADING.exec(line);
    if (m) {
      flush();
      current = { ts: m[1]!, source: m[2]!, session_id: m[3] === "-" ? null : m[3]!, text: "", path };
    } else if (current) lines.push(line);
  }
  flush();
  return out.filter((e) => e.text.length > 0);
}

/** Lesson log names under left/reference/, newest day first. */
export async function lessonLogs(vault: string): Promise<string[]> {
  // A symlinked lesson log counts only when it is a file inside the vault.
  return containedFileNamesSync(vault, join(vault, LESSONS_DIR), (n) => LOG.test(n))
    .sort()
    .reverse();
}

/** The `limit` newest lessons (by their heading's time), reading logs newest day first. */
export async function newestLessons(vault: string, limit: number, opts: { since?: Date } = {}): Promise<LessonEntry[]> {
  const out: LessonEntry[] = [];
  const since = opts.since?.toISOString().slice(0, 10);
  for (const name of await lessonLogs(vault)) {
    if (since && LOG.exec(name)![1]! < since) break;
    const path = `${LESSONS_DIR}/${name}`;
    const text = await readFile(join(vault, path), "utf8").catch(() => "");
    out.push(...parseLessonLog(path, text));
    // A day's log holds that day's lessons only (by their time), so once `limit` are in hand
    // no older day can hold a newer one.
    if (out.length >= limit) break;
  }
  const sorted = out.sort((a, b) => (a.ts < b.ts ? 1 : a.ts > b.ts ? -1 : a.text < b.text ? -1 : 1));
  return (opts.since ? sorted.filter((e) => e.ts >= opts.since!.toISOString()) : sorted).slice(0, limit);
}
