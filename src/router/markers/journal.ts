// The marker journal: brain-feed/markers/YYYY-MM-DD.jsonl, one JSON line per accepted marker
// (its MarkerRecord), filed by the day it arrived. The tick reads it to cluster recent markers
// into arcs; the pipeline's ingest stage reads its newest line. Each line is one O_APPEND
// write (a whole-file rewrite per marker would cost O(n²)): appends from this process queue
// one behind the other, and on a local filesystem another process's appends land whole
// between them. A reader skips a torn last line (a crash mid-write).
import { appendFile, mkdir, readdir, readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { safeVaultPath } from "../vault/safe-path";
import { isoDate } from "../vault/slug";
import type { MarkerRecord } from "./types";

export const JOURNAL_DIR = "brain-feed/markers";
const TAIL_BYTES = 64 * 1024;
const FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;

const appends = new Map<string, Promise<void>>();

export async function appendJournal(vault: string, record: MarkerRecord): Promise<string> {
  const rel = `${JOURNAL_DIR}/${isoDate(new Date(record.received_at))}.jsonl`;
  const dir = await safeVaultPath(vault, JOURNAL_DIR);
  await mkdir(dir, { recursive: true });
  const abs = join(dir, basename(rel));
  const line = `${JSON.stringify(record)}\n`;
  const prior = appends.get(abs) ?? Promise.resolve();
  const mine = prior.then(() => appendFile(abs, line));
  const tail = mine.catch(() => {});
  appends.set(abs, tail);
  void tail.then(() => appends.get(abs) === tail && appends.delete(abs));
  await mine;
  return rel;
}

export function parseJournal(text: string): MarkerRecord[] {
  const out: MarkerRecord[] = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    try {
      const r = JSON.parse(line) as MarkerRecord;
      if (r && typeof r.id === "string" && typeof r.ts === "string") out.push(r);
    } catch {
      // torn line: skipped
    }
  }
  return out;
}

/** Journal days present, newest first. */
export async function journalDays(vault: string): Promise<string[]> {
  const names = await readdir(join(vault, JOURNAL_DIR)).catch(() => [] as string[]);
  return names
    .map((n) => FILE.exec(n)?.[1])
    .filter((d): d is string => d !== undefined)
    .sort()
    .reverse();
}

/** Markers that arrived on or after `since` (by their file's day), oldest file first. */
export async function readJournalSince(vault: string, since: Date): Promise<MarkerRecord[]> {
  const from = isoDate(since);
  const days = (await journalDays(vault)).filter((d) => d >= from).reverse();
  const out: MarkerRecord[] = [];
  for (const d of days) {
    const text = await readFile(join(vault, JOURNAL_DIR, `${d}.jsonl`), "utf8").catch(() => "");
    out.push(...parseJournal(text));
  }
  return out;
}

/**
 * The newest journal record, or undefined when no marker was ever recorded. Reads only the
 * tail of the newest day's file, so a busy day costs no more than a quiet one.
 */
export async function lastJournalRecord(vault: string): Promise<MarkerRecord | undefined> {
  for (const d of await journalDays(vault)) {
    const file = Bun.file(join(vault, JOURNAL_DIR, `${d}.jsonl`));
    const start = Math.max(0, file.size - TAIL_BYTES);
    let text = await file
      .slice(start)
      .text()
      .catch(() => "");
    if (start > 0) text = text.slice(text.indexOf("\n") + 1);
    const records = parseJournal(text);
    if (records.length) return records.reduce((a, b) => (b.received_at > a.received_at ? b : a));
  }
  return undefined;
}
