// Shapes a store's row into the SearchHit both stores return, so they cannot drift apart.
import type { Producer, SearchHit } from "./types.ts";

/** Snippet length for hits found without text (filter-only and vector hits). */
const PLAIN_SNIPPET_CHARS = 200;

export interface HitRow {
  path: string;
  seq: number;
  producer: Producer;
  title: string;
  tags: string[];
  updatedAt: Date;
  score: number;
  snippet: string;
}

export function toHit(row: HitRow): SearchHit {
  return {
    id: `${row.path}#${row.seq}`,
    path: row.path,
    producer: row.producer,
    title: row.title,
    snippet: collapse(row.snippet),
    score: row.score,
    tags: row.tags,
    updated_at: row.updatedAt.toISOString(),
  };
}

/** The opening of a chunk, for hits that matched no words. */
export function plainSnippet(text: string): string {
  const flat = collapse(text);
  if (flat.length <= PLAIN_SNIPPET_CHARS) return flat;
  const cut = flat.lastIndexOf(" ", PLAIN_SNIPPET_CHARS);
  return `${flat.slice(0, cut > PLAIN_SNIPPET_CHARS / 2 ? cut : PLAIN_SNIPPET_CHARS)}…`;
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
