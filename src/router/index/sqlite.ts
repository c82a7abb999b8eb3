// The embedded IndexStore: bun:sqlite with FTS5 (BM25, title weighted 10× the body) in one
// WAL-mode file under the data directory. Vectors, when a dimension is configured, live in
// the same file (sqlite-vec-vectors.ts).
import { Database, type SQLQueryBindings } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chunkDocument, embeddingInputs } from "./chunk.ts";
import { DimensionMismatchError } from "./errors.ts";
import { hitSnippet, plainSnippet, toHit } from "./hit.ts";
import { extractLinks, noteName, type DocLink } from "./links.ts";
import { clauses, hasText, type ParsedQuery } from "./query.ts";
import { GroupCommit } from "./sqlite-group-commit.ts";
import { SCHEMA } from "./sqlite-schema.ts";
import { SqliteVectors } from "./sqlite-vectors.ts";
import { resolveEmbeddings } from "./embeddings.ts";
import {
  PRODUCERS,
  SNIPPET_MARK,
  type Fingerprint,
  type HitSnippet,
  type IndexDoc,
  type IndexStore,
  type LinkCounts,
  type NoteMeta,
  type Producer,
  type RecentQuery,
  type SearchFilters,
  type SearchHit,
  type SearchOptions,
  type StoredLink,
  type UpsertOptions,
} from "./types.ts";

export interface SqliteIndexOptions {
  /** The data directory; the index is `index.sqlite` inside it (created if missing). */
  dataDir: string;
  /** Embedding dimension; unset = no vectors. Must match what the file already holds. */
  embeddingDim?: number;
  /** Load sqlite-vec for vector distances (default true); false forces the JS scan. */
  sqliteVec?: boolean;
}

export const SQLITE_INDEX_FILE = "index.sqlite";

/** Tokens of context in a snippet (FTS5 allows at most 64). */
const SNIPPET_TOKENS = 24;
/** highlight()'s marks, private-use characters no note holds (SNIPPET_MARK only in the answer). */
const MARK_OPEN = "\uE001";
const MARK_CLOSE = "\uE002";
/** bm25 with the title weighted ten times the body (and the filters column not at all). */
const DOC_RANK = "bm25(docs_fts, 10.0, 1.0, 0.0)";

interface DocRow {
  id: number;
  path: string;
  producer: Producer;
  title: string;
  tags: string;
  updated_at: number;
  hash: string;
  mtime_ms: number;
  /** noteName(path); null until the document's links are extracted (schema v4). */
  name: string | null;
}

type MetaRow = Pick<DocRow, "path" | "producer" | "title" | "tags" | "updated_at" | "hash">;
const META_COLUMNS = "d.path, d.producer, d.title, d.tags, d.updated_at, d.hash";
/** Above every character: `prefix` ≤ path < prefix + MAX_CHAR is "path starts with prefix". */
const MAX_CHAR = "\u{10FFFF}";

export async function openSqliteIndex(opts: SqliteIndexOptions): Promise<SqliteIndexStore> {
  const store = new SqliteIndexStore(opts);
  try {
    await store.migrate();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

export class SqliteIndexStore implements IndexStore {
  readonly kind = "sqlite";
  readonly file: string;
  readonly embeddingDim: number | undefined;
  private readonly db: Database;
  private readonly sqliteVec: boolean;
  private vectors: SqliteVectors | undefined;
  private readonly writes: GroupCommit;

  constructor(opts: SqliteIndexOptions) {
    mkdirSync(opts.dataDir, { recursive: true });
    this.file = join(opts.dataDir, SQLITE_INDEX_FILE);
    this.embeddingDim = opts.embeddingDim;
    this.sqliteVec = opts.sqliteVec ?? true;
    this.db = new Database(this.file, { create: true, strict: true });
    this.db.run("PRAGMA journal_mode = WAL");
    this.db.run("PRAGMA synchronous = NORMAL");
    this.db.run("PRAGMA foreign_keys = ON");
    this.db.run("PRAGMA busy_timeout = 5000");
    // 64 MiB of page cache (default 2 MiB; it fills only as pages are read): a search touches
    // the doclists of its words across the index, and with queries that change from one
    // request to the next the default cache re-reads them from the OS. Measured at 100k notes
    // over the search bench's rotating queries: p50 −5–10 %, p99 −15 %; mmap did not help.
    this.db.run("PRAGMA cache_size = -65536");
    this.writes = new GroupCommit(this.db);
  }

  get hasVectors(): boolean {
    return this.vectors !== undefined;
  }

  /** "sqlite-vec" when the extension loaded, "js" for the brute-force fallback, or null. */
  get vectorEngine(): "sqlite-vec" | "js" | null {
    return this.vectors?.engine ?? null;
  }

  async migrate(): Promise<void> {
    const { user_version: version } = this.db.query<{ user_version: number }, []>("PRAGMA user_version").get()!;
    this.db.transaction(() => {
      for (let v = version; v < SCHEMA.length; v++) {
        this.db.run(SCHEMA[v] as string);
        this.db.run(`PRAGMA user_version = ${v + 1}`);
      }
    }).immediate();
    this.configureVectors();
  }

  /** Records the dimension on first use; refuses a file that holds another one. */
  private configureVectors(): void {
    const dim = this.embeddingDim;
    if (dim === undefined) return;
    if (!Number.isInteger(dim) || dim < 1) throw new RangeError(`embedding dimension must be a positive integer, got ${dim}`);
    const row = this.db.query<{ value: string }, [string]>("SELECT value FROM index_meta WHERE key = ?").get("embedding_dim");
    if (row && Number(row.value) !== dim) {
      throw new DimensionMismatchError(
        Number(row.value),
        dim,
        `set EMBEDDINGS_DIM=${row.value} (the model the index was built with), or delete ${this.file} and let the next refresh rebuild it`,
      );
    }
    if (!row) this.db.query("INSERT INTO index_meta (key, value) VALUES ('embedding_dim', ?)").run(String(dim));
    this.vectors = new SqliteVectors(this.db, dim, this.sqliteVec);
  }

  async upsert(doc: IndexDoc, opts: UpsertOptions = {}): Promise<boolean> {
    const mtimeMs = doc.mtimeMs ?? doc.updatedAt.getTime();
    const tagsJson = JSON.stringify(doc.tags);
    const old = this.db.query<DocRow, [string]>("SELECT * FROM docs WHERE path = ?").get(doc.path);
    if (old && old.hash === doc.hash && old.title === doc.title && old.producer === doc.producer && old.tags === tagsJson) {
      // Indexed before links were kept (name null): record them now, the text stays as it is.
      const links = old.name === null ? extractLinks(doc.path, doc.body) : undefined;
      if (old.mtime_ms !== mtimeMs || links) {
        await this.writes.run(() => {
          this.db.query("UPDATE docs SET mtime_ms = ?, name = ? WHERE id = ?").run(mtimeMs, noteName(doc.path), old.id);
          if (links) this.insertLinks(old.id, links);
        });
      }
      return false;
    }
    const links = extractLinks(doc.path, doc.body);
    const chunks = chunkDocument(doc);
    const embeddings = await resolveEmbeddings(opts, chunks.length, this.embeddingDim, () => embeddingInputs(doc));
    return this.writes.run(() => {
      const existing = this.db.query<{ id: number }, [string]>("SELECT id FROM docs WHERE path = ?").get(doc.path);
      if (existing) this.deleteDoc(existing.id);
      const { id } = this.db
        .query<{ id: number }, SQLQueryBindings[]>(
          "INSERT INTO docs (path, producer, title, tags, updated_at, hash, mtime_ms, name) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .get(doc.path, doc.producer, doc.title, tagsJson, doc.updatedAt.getTime(), doc.hash, mtimeMs, noteName(doc.path))!;
      this.insertLinks(id, links);
      const tag = this.db.query("INSERT OR IGNORE INTO doc_tags (tag, doc_id) VALUES (?, ?)");
      for (const t of doc.tags) tag.run(t.toLowerCase(), id);
      const insert = this.db.query<{ id: number }, SQLQueryBindings[]>(
        "INSERT INTO chunks (doc_id, seq, title, body) VALUES (?, ?, ?, ?) RETURNING id",
      );
      chunks.forEach((chunk, i) => {
        const { id: chunkId } = insert.get(id, chunk.seq, doc.title, chunk.text)!;
        const vector = embeddings?.[i];
        if (vector) this.vectors?.put(chunkId, vector);
      });
      this.db.query("INSERT INTO docs_fts (rowid, title, body, filters) SELECT id, title, body, filters FROM docs_text WHERE id = ?").run(id);
      return true;
    });
  }

  async remove(path: string): Promise<boolean> {
    return this.writes.run(() => {
      const row = this.db.query<{ id: number }, [string]>("SELECT id FROM docs WHERE path = ?").get(path);
      if (row) this.deleteDoc(row.id);
      return row !== null;
    });
  }

  async search(query: ParsedQuery, limit: number, opts: SearchOptions = {}): Promise<SearchHit[]> {
    if (!hasText(query)) return this.browse(query, limit);
    const parts = clauses(query);
    const snippets = opts.snippets ?? true;
    let hits = this.match(ftsExpression(parts, "AND"), query, limit, snippets);
    if (hits.length === 0 && parts.length > 1) hits = this.match(ftsExpression(parts, "OR"), query, limit, snippets);
    return hits;
  }

  async snippets(query: ParsedQuery, paths: string[]): Promise<Map<string, HitSnippet>> {
    const out = new Map<string, HitSnippet>();
    if (!hasText(query) || paths.length === 0) return out;
    const docs = this.db
      .query<{ id: number; path: string }, [string]>("SELECT id, path FROM docs WHERE path IN (SELECT value FROM json_each(?))")
      .all(JSON.stringify(paths));
    // OR: marks every clause a document holds, which for a document holding all of them is
    // exactly what the AND search marked; and it also covers hits of search()'s OR fallback.
    const best = this.bestChunks(ftsExpression(clauses(query), "OR"), docs.map((d) => d.id));
    for (const d of docs) {
      const chunk = best.get(d.id);
      if (chunk) out.set(d.path, hitSnippet(d.path, chunk.seq, chunk.snippet));
    }
    return out;
  }

  async vectorSearch(vector: number[], limit: number, filters: Partial<SearchFilters> = {}): Promise<SearchHit[]> {
    const vectors = this.requireVectors();
    const filter = filterSql(filters);
    const best = vectors.nearest(vector, limit, filter.sql, filter.params);
    const texts = this.db.query<{ id: number; body: string }, SQLQueryBindings[]>(
      `SELECT id, body FROM chunks WHERE id IN (${best.map(() => "?").join(",")})`,
    );
    const bodies = new Map(best.length ? texts.all(...best.map((b) => b.cid)).map((r) => [r.id, r.body]) : []);
    return best.map((row) => docHit(row, 1 - row.distance, plainSnippet(bodies.get(row.cid) ?? "")));
  }

  async fingerprints(producer: Producer): Promise<Map<string, Fingerprint>> {
    // values(): arrays, not objects, for the 100k rows of a big vault.
    const rows = this.db.query("SELECT path, hash, mtime_ms FROM docs WHERE producer = ?").values(producer) as [string, string, number][];
    const out = new Map<string, Fingerprint>();
    for (const [path, hash, mtimeMs] of rows) out.set(path, { hash, mtimeMs });
    return out;
  }

  async notes(paths: string[]): Promise<NoteMeta[]> {
    return this.metaWhere("d.path", paths);
  }

  async notesNamed(names: string[]): Promise<NoteMeta[]> {
    return this.metaWhere("d.name", names);
  }

  async linksFrom(paths: string[]): Promise<StoredLink[]> {
    return this.linksWhere("d.path", paths);
  }

  async linksNamed(names: string[]): Promise<StoredLink[]> {
    return this.linksWhere("l.name", names);
  }

  async recent(q: RecentQuery): Promise<NoteMeta[]> {
    let where = "1 = 1";
    const params: SQLQueryBindings[] = [];
    if (q.since) [where, params[params.length]] = [`${where} AND d.updated_at >= ?`, q.since.getTime()];
    if (q.producer) [where, params[params.length]] = [`${where} AND d.producer = ?`, q.producer];
    if (q.tag) [where, params[params.length]] = [`${where} AND d.id IN (SELECT doc_id FROM doc_tags WHERE tag = ?)`, q.tag.toLowerCase()];
    if (q.prefix) {
      where += " AND d.path >= ? AND d.path < ?";
      params.push(q.prefix, q.prefix + MAX_CHAR);
    }
    if (q.after) {
      where += " AND (d.updated_at < ? OR (d.updated_at = ? AND d.path < ?))";
      params.push(q.after.updatedAt.getTime(), q.after.updatedAt.getTime(), q.after.path);
    }
    return this.db
      .query<MetaRow, SQLQueryBindings[]>(`SELECT ${META_COLUMNS} FROM docs d WHERE ${where} ORDER BY d.updated_at DESC, d.path DESC LIMIT ?`)
      .all(...params, q.limit)
      .map(noteMeta);
  }

  async pathsUnder(prefix: string, limit: number): Promise<string[]> {
    const rows = this.db.query("SELECT path FROM docs WHERE path >= ? AND path < ? ORDER BY path LIMIT ?").values(prefix, prefix + MAX_CHAR, limit);
    return rows.map((r) => r[0] as string);
  }

  async linkCounts(): Promise<LinkCounts> {
    const { n } = this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM doc_links").get()!;
    const dangling = `FROM doc_links l JOIN docs d ON d.id = l.doc_id
      WHERE CASE l.kind WHEN 'path' THEN NOT EXISTS (SELECT 1 FROM docs t WHERE t.path = l.target)
                        ELSE NOT EXISTS (SELECT 1 FROM docs t WHERE t.name = l.name) END`;
    const { m } = this.db.query<{ m: number }, []>(`SELECT count(*) AS m ${dangling}`).get()!;
    const examples = this.db.query<{ source: string; target: string }, []>(`SELECT d.path AS source, l.target ${dangling} ORDER BY d.path LIMIT 5`).all();
    return { links: n, dangling: m, examples };
  }

  async countByProducer(): Promise<Record<Producer, number>> {
    const counts = Object.fromEntries(PRODUCERS.map((p) => [p, 0])) as Record<Producer, number>;
    const rows = this.db.query<{ producer: Producer; n: number }, []>("SELECT producer, count(*) AS n FROM docs GROUP BY producer").all();
    for (const r of rows) if (r.producer in counts) counts[r.producer] = r.n;
    return counts;
  }

  async close(): Promise<void> {
    this.writes.flush();
    this.db.close();
  }

  private requireVectors(): SqliteVectors {
    if (this.vectors) return this.vectors;
    return SqliteVectors.unavailable();
  }

  /** Documents whose `column` is one of `values`. */
  private metaWhere(column: "d.path" | "d.name", values: string[]): NoteMeta[] {
    if (values.length === 0) return [];
    return this.db
      .query<MetaRow, [string]>(`SELECT ${META_COLUMNS} FROM docs d WHERE ${column} IN (SELECT value FROM json_each(?))`)
      .all(JSON.stringify([...new Set(values)]))
      .map(noteMeta);
  }

  /** Stored links (with their document's path) whose `column` is one of `values`. */
  private linksWhere(column: "d.path" | "l.name", values: string[]): StoredLink[] {
    if (values.length === 0) return [];
    return this.db
      .query<StoredLink, [string]>(
        `SELECT d.path AS source, l.kind, l.target, l.name FROM doc_links l JOIN docs d ON d.id = l.doc_id
          WHERE ${column} IN (SELECT value FROM json_each(?))`,
      )
      .all(JSON.stringify([...new Set(values)]));
  }

  private insertLinks(docId: number, links: DocLink[]): void {
    if (links.length === 0) return;
    const insert = this.db.query("INSERT OR IGNORE INTO doc_links (doc_id, kind, target, name) VALUES (?, ?, ?, ?)");
    for (const l of links) insert.run(docId, l.kind, l.target, l.name);
  }

  private deleteDoc(id: number): void {
    // External content: FTS5 is told the words to forget, read from docs_text while its rows still hold them.
    this.db
      .query("INSERT INTO docs_fts (docs_fts, rowid, title, body, filters) SELECT 'delete', id, title, body, filters FROM docs_text WHERE id = ?")
      .run(id);
    this.db.query("DELETE FROM chunks WHERE doc_id = ?").run(id);
    this.db.query("DELETE FROM docs WHERE id = ?").run(id);
  }

  /**
   * Ranked hits, one per document. docs_fts ranks documents: the filters are part of its MATCH,
   * so FTS5 intersects them with the words before anything is scored, and the core's
   * ORDER BY … LIMIT keeps only the best `limit`. Then, for those documents alone (and only
   * when `snippets`), each hit's best chunk and snippet (bestChunks).
   */
  private match(text: string, filters: SearchFilters, limit: number, snippets: boolean): SearchHit[] {
    const ranked = this.db
      .query<{ id: number; rank: number }, [string, number]>(
        `SELECT rowid AS id, ${DOC_RANK} AS rank FROM docs_fts WHERE docs_fts MATCH ? ORDER BY rank LIMIT ?`,
      )
      .all(docExpression(text, filters), limit);
    if (ranked.length === 0) return [];
    const ids = ranked.map((r) => r.id);
    const docs = new Map(
      this.db
        .query<DocRow, [string]>("SELECT * FROM docs WHERE id IN (SELECT value FROM json_each(?))")
        .all(JSON.stringify(ids))
        .map((d) => [d.id, d]),
    );
    const best = snippets ? this.bestChunks(text, ids) : new Map<number, { seq: number; snippet: string }>();
    const hits: Array<{ doc: DocRow; rank: number; seq: number; snippet: string }> = [];
    for (const r of ranked) {
      const doc = docs.get(r.id);
      if (!doc) continue;
      const chunk = best.get(r.id);
      hits.push({ doc, rank: r.rank, seq: chunk?.seq ?? 0, snippet: chunk?.snippet ?? "" });
    }
    // bm25() is lower-is-better and negative; the API's score is higher-is-better.
    return hits
      .sort((a, b) => a.rank - b.rank || (a.doc.path < b.doc.path ? -1 : a.doc.path > b.doc.path ? 1 : 0))
      .map((h) => docHit({ ...h.doc, seq: h.seq }, -h.rank, h.snippet));
  }

  /**
   * Each document's best chunk for `text` (an ftsExpression) and its snippet: one highlight()
   * of each document's body, the chunk holding the most distinct matched words (then the most
   * matches, then the first) is the hit's, and its snippet is cut from the same text. A
   * document that does not match `text` is left out.
   */
  private bestChunks(text: string, docIds: number[]): Map<number, { seq: number; snippet: string }> {
    const out = new Map<number, { seq: number; snippet: string }>();
    if (docIds.length === 0) return out;
    const ids = JSON.stringify(docIds);
    // The chunks' lengths, to find them again in the highlighted body (joined by "\n\n").
    const lengths = new Map<number, number[]>();
    for (const [doc, body] of this.db
      .query("SELECT doc_id, body FROM chunks WHERE doc_id IN (SELECT value FROM json_each(?)) ORDER BY doc_id, seq")
      .values(ids) as [number, string][]) {
      const list = lengths.get(doc);
      if (list) list.push(body.length);
      else lengths.set(doc, [body.length]);
    }
    const marked = this.db
      .query<[number, string], [string, string]>(
        `SELECT rowid, highlight(docs_fts, 1, '${MARK_OPEN}', '${MARK_CLOSE}') FROM docs_fts
          WHERE docs_fts MATCH ? AND rowid IN (SELECT value FROM json_each(?))`,
      )
      .values(text, ids) as [number, string][];
    for (const [id, body] of marked) {
      const chunk = bestChunk(splitMarked(body, lengths.get(id) ?? []));
      out.set(id, { seq: chunk.seq, snippet: markedSnippet(chunk.marked) });
    }
    return out;
  }

  /** Filter-only queries (e.g. `tag:deploy`): newest documents first. */
  private browse(filters: SearchFilters, limit: number): SearchHit[] {
    if (filters.tags.length === 0 && filters.producers.length === 0) return [];
    const filter = filterSql(filters);
    const rows = this.db
      .query<DocRow & { cid: number; seq: number; body: string }, SQLQueryBindings[]>(
        `SELECT c.id AS cid, c.seq AS seq, c.body AS body, d.*
           FROM docs d JOIN chunks c ON c.doc_id = d.id AND c.seq = 0
          WHERE 1 = 1${filter.sql}
          ORDER BY d.updated_at DESC, d.path LIMIT ?`,
      )
      .all(...filter.params, limit);
    return rows.map((r) => docHit(r, 0, plainSnippet(r.body)));
  }
}

/** Every word double-quoted (inner quotes doubled): FTS5 then reads it as a string, never as syntax. */
export function ftsExpression(parts: string[][], op: "AND" | "OR"): string {
  return parts.map((words) => `"${words.join(" ").replaceAll('"', '""')}"`).join(` ${op} `);
}

/**
 * A tag or producer as one opaque token of docs_fts's `filters` column: U+E000, a letter (t,
 * p) and the value's UTF-8 in hex, A–F spelled g h j k m n. unicode61 keeps it whole (a
 * private-use character is a token character to it); the porter stemmer leaves it alone (no
 * vowel, s or y); and no query word can equal it, since the query parser keeps only letters,
 * digits and marks — so words never match a filter, nor filters a word.
 */
export function filterToken(kind: "t" | "p", value: string): string {
  const hex = Buffer.from(value, "utf8").toString("hex");
  return FILTER_PREFIX + kind + hex.replace(/[a-f]/g, (c) => FILTER_HEX[c as keyof typeof FILTER_HEX]);
}

const FILTER_PREFIX = "\uE000";
const FILTER_HEX = { a: "g", b: "h", c: "j", d: "k", e: "m", f: "n" } as const;

/** The words (an ftsExpression) and every filter required. */
function docExpression(text: string, filters: SearchFilters): string {
  let expr = text;
  for (const tag of filters.tags) expr += ` AND filters : "${filterToken("t", tag.toLowerCase())}"`;
  if (filters.producers.length) expr += ` AND filters : (${filters.producers.map((p) => `"${filterToken("p", p)}"`).join(" OR ")})`;
  return expr;
}

/** WHERE fragments (each starting with " AND") over `d` (docs) for tag and producer filters. */
function filterSql(filters: Partial<SearchFilters>): { sql: string; params: string[] } {
  let sql = "";
  const params: string[] = [];
  const producers = filters.producers ?? [];
  if (producers.length) {
    sql += ` AND d.producer IN (${producers.map(() => "?").join(",")})`;
    params.push(...producers);
  }
  for (const tag of filters.tags ?? []) {
    sql += " AND d.id IN (SELECT doc_id FROM doc_tags WHERE tag = ?)";
    params.push(tag.toLowerCase());
  }
  return { sql, params };
}

/**
 * A document's highlighted body cut back into its chunks (`lengths`: each chunk's text, in
 * order; the body joins them with "\n\n"). A mark open across a cut is closed and reopened.
 */
export function splitMarked(marked: string, lengths: number[]): string[] {
  if (lengths.length <= 1) return [marked];
  const out: string[] = [];
  let at = 0; // in `marked`
  let open = false;
  let nextOpen = marked.indexOf(MARK_OPEN);
  let nextClose = marked.indexOf(MARK_CLOSE);
  /** Moves `at` past `count` characters of text, and past the marks among them. */
  const advance = (count: number) => {
    for (;;) {
      const mark = Math.min(nextOpen === -1 ? Infinity : nextOpen, nextClose === -1 ? Infinity : nextClose);
      if (mark - at >= count || mark === Infinity) {
        at = Math.min(marked.length, at + count);
        return;
      }
      count -= mark - at;
      open = mark === nextOpen;
      at = mark + 1;
      if (open) nextOpen = marked.indexOf(MARK_OPEN, at);
      else nextClose = marked.indexOf(MARK_CLOSE, at);
    }
  };
  lengths.forEach((length, i) => {
    const start = at;
    const opened = open;
    advance(length);
    // A mark closing right at the chunk's end is the chunk's.
    while (at < marked.length && at === nextClose) {
      open = false;
      at++;
      nextClose = marked.indexOf(MARK_CLOSE, at);
    }
    out.push((opened ? MARK_OPEN : "") + marked.slice(start, at) + (open ? MARK_CLOSE : ""));
    if (i < lengths.length - 1) advance(2); // the "\n\n" between chunks
  });
  return out;
}

/** The chunk holding the most distinct matched words, then the most matches, then the first. */
function bestChunk(chunks: string[]): { seq: number; marked: string } {
  let best = { seq: 0, marked: chunks[0] ?? "", score: -1 };
  chunks.forEach((marked, seq) => {
    const terms = new Set<string>();
    let count = 0;
    for (let i = marked.indexOf(MARK_OPEN); i !== -1; i = marked.indexOf(MARK_OPEN, i + 1)) {
      const end = marked.indexOf(MARK_CLOSE, i);
      terms.add(marked.slice(i + 1, end === -1 ? undefined : end).toLowerCase());
      count++;
    }
    const score = terms.size * 1_000_000 + count;
    if (score > best.score) best = { seq, marked, score };
  });
  return best;
}

/**
 * A snippet of a highlighted chunk, cut the way FTS5's snippet() cuts one: the window of
 * SNIPPET_TOKENS words holding the most distinct matched terms (then the most matches, then
 * the earliest), its matches centred, "…" where text was cut, marks as SNIPPET_MARK.
 */
export function markedSnippet(marked: string): string {
  const words = marked.split(/\s+/).filter((w) => w !== "");
  const n = words.length;
  const width = Math.min(SNIPPET_TOKENS, n);
  const opened: boolean[] = []; // a mark is open where the word starts
  const matched: string[][] = []; // terms whose mark closes in the word
  const hits: number[] = []; // marks the word opens
  let open = false;
  let term = "";
  for (const word of words) {
    opened.push(open);
    if (!open && !word.includes(MARK_OPEN)) {
      matched.push(NONE);
      hits.push(0);
      continue;
    }
    const closed: string[] = [];
    let count = 0;
    for (const ch of word) {
      if (ch === MARK_OPEN) [open, term, count] = [true, "", count + 1];
      else if (ch === MARK_CLOSE) [open, closed[closed.length]] = [false, term.toLowerCase()];
      else if (open) term += ch;
    }
    if (open) term += " ";
    matched.push(closed);
    hits.push(count);
  }
  // Slide the window, keeping each matched term's count inside it.
  const inWindow = new Map<string, number>();
  const enter = (i: number, by: number) => {
    for (const t of matched[i]!) {
      const c = (inWindow.get(t) ?? 0) + by;
      if (c === 0) inWindow.delete(t);
      else inWindow.set(t, c);
    }
  };
  let count = 0;
  for (let i = 0; i < width; i++) {
    enter(i, 1);
    count += hits[i]!;
  }
  let start = 0;
  let bestScore = inWindow.size * 1_000 + count;
  for (let s = 1; s + width <= n; s++) {
    enter(s - 1, -1);
    count -= hits[s - 1]!;
    enter(s + width - 1, 1);
    count += hits[s + width - 1]!;
    const score = inWindow.size * 1_000 + count;
    if (score > bestScore) [start, bestScore] = [s, score];
  }
  // Centre what the window matched, so a match is not its first or last word.
  let first = -1;
  let last = -1;
  for (let i = start; i < start + width; i++) {
    if (hits[i]! > 0 || opened[i]) {
      if (first === -1) first = i;
      last = i;
    }
  }
  if (first !== -1) start = Math.max(0, Math.min(n - width, first - Math.floor((width - (last - first + 1)) / 2)));
  let text = words.slice(start, start + width).join(" ");
  if (start < n && opened[start]) text = MARK_OPEN + text;
  if (start + width < n ? opened[start + width] : open) text += MARK_CLOSE;
  if (start > 0) text = `…${text}`;
  if (start + width < n) text += "…";
  return text.replaceAll(MARK_OPEN, SNIPPET_MARK.open).replaceAll(MARK_CLOSE, SNIPPET_MARK.close);
}

const NONE: string[] = [];

function docHit(row: Omit<DocRow, "name"> & { seq: number }, score: number, snippet: string): SearchHit {
  return toHit({
    path: row.path,
    seq: row.seq,
    producer: row.producer,
    title: row.title,
    tags: JSON.parse(row.tags) as string[],
    updatedAt: new Date(row.updated_at),
    score,
    snippet,
  });
}

function noteMeta(row: MetaRow): NoteMeta {
  return {
    path: row.path,
    producer: row.producer,
    title: row.title,
    tags: JSON.parse(row.tags) as string[],
    updatedAt: new Date(row.updated_at),
    hash: row.hash,
  };
}
