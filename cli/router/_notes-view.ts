// How router-cli prints notes on a terminal (get, search --read, recent): the path and title,
// the body as written, then its links and backlinks; what was cut is said.
import type { Note, RecentNotes } from "../../src/router/client";

export function formatNote(note: Note): string {
  const meta = [note.producer, `updated ${note.updated_at}`, note.tags.length ? `tags: ${note.tags.join(", ")}` : ""].filter(Boolean).join(" · ");
  const out = [`── ${note.path} — ${note.title}`, `   ${meta}`, ""];
  out.push(note.body.replace(/\n$/, ""));
  if (note.truncated) {
    const how = note.truncated_by === "lines" ? "--lines" : "--max-chars";
    out.push("", `   (lines ${note.from_line}–${note.to_line} of ${note.total_lines}, ${note.body.length} of ${note.total_chars} characters: cut by ${how})`);
  }
  if (note.links.length) out.push("", `   links: ${note.links.map((l) => (l.path ? `→ ${l.path}` : `✗ ${l.target} (dangling)`)).join("  ")}`);
  if (note.backlinks.length) out.push(`   backlinks: ${note.backlinks.map((b) => `← ${b.path}`).join("  ")}`);
  return out.join("\n");
}

export function formatRecent(page: RecentNotes): string {
  if (page.notes.length === 0) return "no notes changed in that window";
  const width = Math.max(...page.notes.map((n) => n.path.length));
  const rows = page.notes.map((n) => `${n.updated_at.replace("T", " ").slice(0, 19)}  ${n.producer.padEnd(8)} ${n.path.padEnd(width)}  ${n.title}`);
  if (page.next_cursor) rows.push(`… more: --cursor ${page.next_cursor}`);
  return rows.join("\n");
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `--since`: an ISO 8601 time, or a duration back from now ("90m", "2h", "3d", "1w"). */
export function parseSince(value: string, now = Date.now()): string {
  const d = /^(\d+)\s*([smhdw])$/i.exec(value.trim());
  if (d) return new Date(now - Number(d[1]) * UNITS[d[2]!.toLowerCase()]!).toISOString();
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new Error(`--since ${JSON.stringify(value)}: give an ISO time (2026-01-31T09:00:00Z) or a duration (90m, 2h, 3d, 1w)`);
  return new Date(t).toISOString();
}
