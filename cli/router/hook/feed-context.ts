// The feed as the text a session starts with: the feed's entries (inject_blocks, already cut
// to max_chars by the router), hot arcs, the newest lessons and the live signals, then the
// whole cut to the same budget. Type-only import of the route's schema: no server code.
import type { Feed } from "../../../src/router/client";

export function renderFeed(feed: Feed, maxChars: number): string {
  const parts: string[] = [`# Team brain (brain-stack feed, ${feed.generated_at})`];
  if (feed.signals.length) {
    parts.push(
      `## Live signals\n\n${feed.signals.map((s) => `- [${s.severity}] ${s.title} — ${s.source}, since ${s.created}${s.count > 1 ? ` (seen ${s.count}×)` : ""}`).join("\n")}`,
    );
  }
  if (feed.inject_blocks.length) parts.push(feed.inject_blocks.join("\n\n"));
  if (feed.hot_arcs.length) {
    parts.push(`## Hot arcs\n\n${feed.hot_arcs.map((a) => `- ${a.title} (${a.status}, heat ${a.heat})${a.summary ? ` — ${a.summary}` : ""}`).join("\n")}`);
  }
  if (feed.lessons.length) {
    parts.push(`## Recent lessons\n\n${feed.lessons.map((l) => `- ${l.text.replace(/\s*\n\s*/g, " ")} (${l.source}, ${l.ts})`).join("\n")}`);
  }
  if (parts.length === 1) parts.push("The feed is empty so far.");
  parts.push(
    "Leave what you learn for the next session: an inline block in your reply, e.g.\n" +
      "<!-- @lesson -->\nWhat was learned, in one or two sentences.\n<!-- @/lesson -->\n" +
      "(kinds: @lesson, @decision, @milestone, @signal severity=high). They reach the team brain when you stop.",
  );
  const text = parts.join("\n\n");
  return text.length <= maxChars ? text : `${text.slice(0, Math.max(0, maxChars - 2))}\n…`;
}
