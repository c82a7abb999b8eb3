// Shapes a store's row into the SearchHit both stores return, so they cannot drift apart.
import type { HitSnippet, Producer, SearchHit } from "./types.ts";

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
  /** SearchHit.coverage; 0 when left out (hits found without words). */
  coverage?: number;
  snippet: string;
}

export function toHit(row: HitRow): SearchHit {
  return {
    ...hitSnippet(row.path, row.seq, row.snippet),
    path: row.path,
    producer: row.producer,
    title: row.title,
    score: row.score,
    coverage: row.coverage ?? 0,
    tags: row.tags,
    updated_at: row.updatedAt.toISOString(),
  };
}

/** A hit's id and snippet, shaped as toHit() shapes them (IndexStore.snippets). */
export function hitSnippet(path: string, seq: number, snippet: string): HitSnippet {
  return { id: `${path}#${seq}`, snippet: collapse(snippet) };
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
