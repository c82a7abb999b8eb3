// Inline markers written into vault notes, harvested by the tick:
//   <!-- @lesson source=retro session_id=abc title="Pin digests" -->
//   Pin base image digests; tags move under you.
//   <!-- @/lesson -->
// The opening comment carries k=v attributes (values quoted with " or ' when they hold spaces);
// the content is everything up to the matching closing comment.
import { MARKER_TYPES, type MarkerType } from "./types";

export interface InlineMarker {
  type: MarkerType;
  attrs: Record<string, string>;
  content: string;
  /** Character offset of the opening comment in the note. */
  offset: number;
}

const BLOCK = new RegExp(`<!--\\s*@(${MARKER_TYPES.join("|")})\\b([^>]*?)-->([\\s\\S]*?)<!--\\s*@\\/\\1\\s*-->`, "gi");
const ATTR = /([A-Za-z_][\w.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|(\S+))/g;

export function parseAttrs(text: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  for (const m of text.matchAll(ATTR)) attrs[m[1]!] = m[2] ?? m[3] ?? m[4] ?? "";
  return attrs;
}

/** Quick test before the full parse: most notes hold no marker at all. */
export const mayHoldMarkers = (text: string) => text.includes("<!--") && /<!--\s*@(lesson|milestone|signal|decision)\b/i.test(text);

export function parseInlineMarkers(text: string): InlineMarker[] {
  if (!mayHoldMarkers(text)) return [];
  const out: InlineMarker[] = [];
  for (const m of text.matchAll(BLOCK)) {
    const content = (m[3] ?? "").trim();
    if (!content) continue;
    out.push({ type: m[1]!.toLowerCase() as MarkerType, attrs: parseAttrs(m[2] ?? ""), content, offset: m.index ?? 0 });
  }
  return out;
}
