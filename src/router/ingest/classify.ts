// Deterministic classification of ingested content (issue 3, POST /ingest): an explicit
// frontmatter type wins, then tags, then markers in the text; otherwise it is a note. A
// configured model may refine a "note" (refine.ts); the rules never need one.
export const KINDS = ["note", "lesson", "decision", "signal", "milestone"] as const;
export type Kind = (typeof KINDS)[number];

export interface Classification {
  kind: Kind;
  /** What decided it: "frontmatter", "tag:<t>", "marker:@<kind>", "default" or "model". */
  reason: string;
}

const TAG_KINDS: Record<string, Kind> = {
  lesson: "lesson",
  lessons: "lesson",
  "lesson-learned": "lesson",
  til: "lesson",
  decision: "decision",
  decisions: "decision",
  adr: "decision",
  signal: "signal",
  alert: "signal",
  emergency: "signal",
  incident: "signal",
  milestone: "milestone",
  milestones: "milestone",
  shipped: "milestone",
  release: "milestone",
  note: "note",
};

const isKind = (v: string): v is Kind => (KINDS as readonly string[]).includes(v);

/** `@lesson` at the start of a line, or an inline marker `<!-- @lesson … -->`. */
const MARKER = /(?:^|\n)\s*(?:<!--\s*)?@(lesson|decision|signal|milestone)\b/i;

export function classify(input: { tags: string[]; frontmatter: Record<string, unknown>; body: string }): Classification {
  const declared = input.frontmatter.type ?? input.frontmatter.kind;
  if (typeof declared === "string") {
    const k = declared.trim().toLowerCase().replace(/^@/, "");
    if (isKind(k)) return { kind: k, reason: "frontmatter" };
  }
  for (const tag of input.tags) {
    const kind = TAG_KINDS[tag.trim().toLowerCase().replace(/^[@#]/, "")];
    if (kind) return { kind, reason: `tag:${tag}` };
  }
  const m = MARKER.exec(input.body);
  if (m?.[1]) return { kind: m[1].toLowerCase() as Kind, reason: `marker:@${m[1].toLowerCase()}` };
  return { kind: "note", reason: "default" };
}

export function parseKind(text: string): Kind | undefined {
  const word = text
    .trim()
    .toLowerCase()
    .replace(/[^a-z]/g, "");
  return isKind(word) ? word : undefined;
}
