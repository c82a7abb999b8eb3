// The tag and producer filters (and the names a note links to), in one place. Each is an opaque
// token of docs_fts's `filters` column (filterToken) written with the note, and asked for in
// the form the caller's query can use cheaply: inside the ranking query's own MATCH
// (docExpression), where FTS5 intersects it with the words before anything is scored; as SQL
// over the docs table for listings and vectors (filterSql: the producer from its column, which
// a listing by time walks without reading every match of a common producer); and for the first
// pass's candidates, from their rows (passingFilters).
import type { DocLink } from "../links.ts";
import type { IndexDoc, Producer, SearchFilters } from "../types.ts";
import type { Reader } from "./text-rows.ts";

/**
 * A tag, producer or linked name as one opaque token of docs_fts's `filters` column: U+E000,
 * a letter (t, p, l) and the value's UTF-8 in hex, A–F spelled g h j k m n. unicode61 keeps it whole (a
 * private-use character is a token character to it); the porter stemmer leaves it alone (no
 * vowel, s or y); and no query word can equal it, since the query parser keeps only letters,
 * digits and marks — so words never match a filter, nor filters a word.
 */
export function filterToken(kind: "t" | "p" | "l", value: string): string {
  const hex = Buffer.from(value, "utf8").toString("hex");
  return FILTER_PREFIX + kind + hex.replace(/[a-f]/g, (c) => FILTER_HEX[c as keyof typeof FILTER_HEX]);
}

const FILTER_PREFIX = "\uE000";
const FILTER_HEX = { a: "g", b: "h", c: "j", d: "k", e: "m", f: "n" } as const;

/** A document's tags as its filter tokens hold them: lower-cased, once each. */
export function tagsOf(doc: Pick<IndexDoc, "tags">): string[] {
  return [...new Set(doc.tags.map((t) => t.toLowerCase()))].sort();
}

/** docs_fts's `filters` column: the producer, each tag and each name the note links to, as filterToken()s. */
export function docFilters(producer: Producer, tags: string[], links: DocLink[]): string {
  const names = [...new Set(links.map((l) => l.name))].sort();
  return [filterToken("p", producer), ...tags.map((t) => filterToken("t", t)), ...names.map((n) => filterToken("l", n))].join(" ");
}

/** A MATCH expression for the documents carrying every one of `tags` (case-insensitive). */
export function tagExpression(tags: string[]): string {
  return tags.map((tag) => `filters : "${filterToken("t", tag.toLowerCase())}"`).join(" AND ");
}

/** A MATCH expression for the documents of any of `producers`. */
export function producerExpression(producers: readonly Producer[]): string {
  return `filters : (${producers.map((p) => `"${filterToken("p", p)}"`).join(" OR ")})`;
}

/** A MATCH expression for the documents linking to any of `names`. */
export function linkExpression(names: string[]): string {
  return `filters : (${names.map((n) => `"${filterToken("l", n)}"`).join(" OR ")})`;
}

/** Every filter required, as one MATCH expression (undefined: no filter). */
function filterExpression(filters: SearchFilters): string | undefined {
  const parts: string[] = [];
  if (filters.tags.length) parts.push(tagExpression(filters.tags));
  if (filters.producers.length) parts.push(producerExpression(filters.producers));
  return parts.length ? parts.join(" AND ") : undefined;
}

/** The words (an ftsExpression) and every filter required, in one MATCH. */
export function docExpression(text: string, filters: SearchFilters): string {
  const filter = filterExpression(filters);
  return filter ? `${text} AND ${filter}` : text;
}

/**
 * The filters as WHERE fragments (each starting with " AND") over `d` (docs): the producer
 * from its column, the tags from their tokens in docs_fts.
 */
export function filterSql(filters: Partial<SearchFilters>): { sql: string; params: string[] } {
  let sql = "";
  const params: string[] = [];
  const producers = filters.producers ?? [];
  if (producers.length) {
    sql += ` AND d.producer IN (${producers.map(() => "?").join(",")})`;
    params.push(...producers);
  }
  if (filters.tags?.length) {
    sql += " AND d.id IN (SELECT rowid FROM docs_fts WHERE docs_fts MATCH ?)";
    params.push(tagExpression(filters.tags));
  }
  return { sql, params };
}

/**
 * Which of these documents pass the filters, from their docs rows (read by key): the first
 * pass checks its candidates a batch at a time, where a MATCH of the filters would read each
 * filter token's whole doclist once per batch. Tags compare as their tokens do (tagsOf).
 */
export function passingFilters(read: Reader, ids: number[], filters: SearchFilters): Set<number> {
  const producers = new Set<string>(filters.producers);
  const wanted = tagsOf({ tags: filters.tags });
  const rows = read("SELECT id, producer, tags FROM docs WHERE id IN (SELECT value FROM json_each(?))").values(JSON.stringify(ids)) as [
    number,
    string,
    string,
  ][];
  const out = new Set<number>();
  for (const [id, producer, tagsJson] of rows) {
    if (producers.size && !producers.has(producer)) continue;
    const has = new Set(tagsOf({ tags: JSON.parse(tagsJson) as string[] }));
    if (wanted.every((t) => has.has(t))) out.add(id);
  }
  return out;
}
