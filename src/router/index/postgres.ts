// The IndexStore on PostgreSQL (DATABASE_URL): a tsvector per document (title weight A, body
// weight B) under GIN, ranked with ts_rank; each hit's best chunk (its own tsvector) gives the
// snippet, from ts_headline; pgvector for embeddings when a
// dimension is configured. Tables live in one schema (default public), so tests isolate.
import postgres, { type PendingQuery, type Row, type Sql, type TransactionSql } from "postgres";
import { chunkDocument, embeddingInputs } from "./chunk.ts";
import { checkVector, resolveEmbeddings } from "./embeddings.ts";
import { VectorsUnavailableError } from "./errors.ts";
import { hitSnippet, plainSnippet, toHit } from "./hit.ts";
import { type DocLink, extractLinks, noteName } from "./links.ts";
import { migrate, quoteSchema } from "./migrate.ts";
import { clauses, hasText, type ParsedQuery } from "./query.ts";
import {
  type Fingerprint,
  type HitSnippet,
  type IndexDoc,
  type IndexStore,
  type LinkCounts,
  type NoteMeta,
  PRODUCERS,
  type Producer,
  type RecentQuery,
  type SearchFilters,
  type SearchHit,
  type SearchOptions,
  SNIPPET_MARK,
  type StoredLink,
  type UpsertOptions,
} from "./types.ts";

export interface PostgresIndexOptions {
  /** A postgres:// URL (DATABASE_URL). */
  url: string;
  /** Embedding dimension; unset = no vectors. Must match the stored column. */
  embeddingDim?: number;
  /** Schema for the index's tables; default "public". */
  schema?: string;
  /** Connection pool size; default 10. Use 1 for single-session servers (PGlite). */
  max?: number;
}

/** ts_rank weights {D, C, B, A}: a title (A) match counts ten times a body (B) match, as in SQLite. */
const RANK_WEIGHTS = "{0.1, 0.1, 0.1, 1.0}";
/**
 * ts_rank normalization 32 (rank / (rank + 1)): a score in 0..1 and no length penalty — on
 * the relevance set (scripts/bench/relevance.ts) adding one (flags 1, 2, 8, 16) ranked documents
 * worse. ts_rank (frequency) rather than ts_rank_cd (proximity): on the parity corpus it
 * orders hits as SQLite's BM25 does, which ts_rank_cd does not.
 */
const RANK_NORMALIZATION = 32;
const HEADLINE = `StartSel=${SNIPPET_MARK.open}, StopSel=${SNIPPET_MARK.close}, MinWords=12, MaxWords=24, ShortWord=2`;

interface MetaRow {
  path: string;
  producer: Producer;
  title: string;
  tags: string[];
  updated_at: Date;
  hash: string;
}

interface HitRow {
  seq: number;
  score: number;
  path: string;
  producer: Producer;
  title: string;
  tags: string[];
  updated_at: Date;
  snippet: string;
}

export async function openPostgresIndex(opts: PostgresIndexOptions): Promise<PostgresIndexStore> {
  const store = new PostgresIndexStore(opts);
  try {
    await store.migrate();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

class PostgresIndexStore implements IndexStore {
  readonly kind = "postgres";
  readonly embeddingDim: number | undefined;
  readonly schema: string;
  private readonly sql: Sql;
  private readonly docs: string;
  private readonly chunks: string;
  private readonly links: string;
  /** Schema of the pgvector extension, once migrate() has seen it. */
  private vectorSchema: string | undefined;

  constructor(opts: PostgresIndexOptions) {
    this.schema = opts.schema ?? "public";
    const s = quoteSchema(this.schema);
    this.docs = `${s}.index_docs`;
    this.chunks = `${s}.index_chunks`;
    this.links = `${s}.index_links`;
    this.embeddingDim = opts.embeddingDim;
    this.sql = postgres(opts.url, {
      max: opts.max ?? 10,
      connect_timeout: 10,
      onnotice: () => {}, // e.g. "query contains only stop words": an empty result says as much
    });
  }

  get hasVectors(): boolean {
    return this.vectorSchema !== undefined;
  }

  async migrate(): Promise<void> {
    const result = await migrate(this.sql, { schema: this.schema, embeddingDim: this.embeddingDim });
    this.vectorSchema = result.vectorSchema;
  }

  async upsert(doc: IndexDoc, opts: UpsertOptions = {}): Promise<boolean> {
    const sql = this.sql;
    const mtimeMs = doc.mtimeMs ?? doc.updatedAt.getTime();
    const title = clean(doc.title);
    const tags = doc.tags.map(clean);
    const [old] = await sql<{ id: string; hash: string; title: string; producer: string; tags: string[]; mtime_ms: number; name: string | null }[]>`
      SELECT id, hash, title, producer, tags, mtime_ms, name FROM ${sql.unsafe(this.docs)} WHERE path = ${doc.path}`;
    if (old && old.hash === doc.hash && old.title === title && old.producer === doc.producer && sameList(old.tags, tags)) {
      if (old.name === null) {
        // Indexed before links were kept: record them now, the text stays as it is.
        const links = extractLinks(doc.path, doc.body);
        await sql.begin(async (tx) => {
          await tx`UPDATE ${tx.unsafe(this.docs)} SET mtime_ms = ${mtimeMs}, name = ${noteName(doc.path)} WHERE id = ${old.id}`;
          await this.insertLinks(tx, old.id, links);
        });
      } else if (old.mtime_ms !== mtimeMs) await sql`UPDATE ${sql.unsafe(this.docs)} SET mtime_ms = ${mtimeMs} WHERE id = ${old.id}`;
      return false;
    }
    const links = extractLinks(doc.path, doc.body);
    const chunks = chunkDocument(doc);
    const embeddings = await resolveEmbeddings(opts, chunks.length, this.hasVectors ? this.embeddingDim : undefined, () => embeddingInputs(doc));
    await sql.begin(async (tx) => {
      const bodies = chunks.map((c) => clean(c.text));
      const [row] = await tx<{ id: string }[]>`
        INSERT INTO ${tx.unsafe(this.docs)} (path, producer, title, tags, tag_keys, updated_at, hash, mtime_ms, name, tsv)
        VALUES (${doc.path}, ${doc.producer}, ${title}, ${tags}, ${tags.map((t) => t.toLowerCase())},
                ${doc.updatedAt}, ${doc.hash}, ${mtimeMs}, ${noteName(doc.path)},
                setweight(to_tsvector('english', ${searchable(title)}), 'A') ||
                  setweight(to_tsvector('english', ${searchable(bodies.join("\n\n"))}), 'B'))
        ON CONFLICT (path) DO UPDATE SET producer = excluded.producer, title = excluded.title, tags = excluded.tags,
          tag_keys = excluded.tag_keys, updated_at = excluded.updated_at, hash = excluded.hash, mtime_ms = excluded.mtime_ms,
          name = excluded.name, tsv = excluded.tsv
        RETURNING id`;
      const id = row!.id;
      await tx`DELETE FROM ${tx.unsafe(this.chunks)} WHERE doc_id = ${id}`;
      await tx`DELETE FROM ${tx.unsafe(this.links)} WHERE doc_id = ${id}`;
      await this.insertLinks(tx, id, links);
      const vector = embeddings ? tx.unsafe(`, u.emb::${quoteSchema(this.vectorSchema!)}.vector`) : tx``;
      const vectorCol = embeddings ? tx.unsafe(", embedding") : tx``;
      const vectorArg = embeddings ? tx`, ${embeddings.map((e) => JSON.stringify(e))}::text[]` : tx``;
      const vectorName = embeddings ? tx.unsafe(", emb") : tx``;
      await tx`
        INSERT INTO ${tx.unsafe(this.chunks)} (doc_id, seq, body, tsv${vectorCol})
        SELECT ${id}, u.seq, u.body,
               setweight(to_tsvector('english', ${searchable(title)}), 'A') || setweight(to_tsvector('english', u.words), 'B')
               ${vector}
          FROM unnest(${chunks.map((c) => c.seq)}::int[], ${bodies}::text[], ${bodies.map(searchable)}::text[]${vectorArg})
            AS u(seq, body, words${vectorName})`;
    });
    return true;
  }

  async remove(path: string): Promise<boolean> {
    const rows = await this.sql`DELETE FROM ${this.sql.unsafe(this.docs)} WHERE path = ${path} RETURNING id`;
    return rows.length > 0;
  }

  async search(query: ParsedQuery, limit: number, opts: SearchOptions = {}): Promise<SearchHit[]> {
    if (!hasText(query)) return this.browse(query, limit);
    const parts = clauses(query);
    const snippets = opts.snippets ?? true;
    let hits = await this.match(parts, "AND", query, limit, snippets);
    if (hits.length === 0 && parts.length > 1) hits = await this.match(parts, "OR", query, limit, snippets);
    return hits;
  }

  async snippets(query: ParsedQuery, paths: string[]): Promise<Map<string, HitSnippet>> {
    const out = new Map<string, HitSnippet>();
    if (!hasText(query) || paths.length === 0) return out;
    const sql = this.sql;
    const rows = await sql<{ path: string; seq: number; snippet: string }[]>`
      WITH ${this.queries(clauses(query), "AND")}
      SELECT d.path, b.seq, ts_headline('english', b.body, b.hq, ${HEADLINE}) AS snippet
        FROM ${sql.unsafe(this.docs)} d, q, ${this.bestChunk(sql`d.id`)}
       WHERE d.path = ANY(${paths}::text[]) AND d.tsv @@ q.any`;
    for (const r of rows) out.set(r.path, hitSnippet(r.path, r.seq, r.snippet));
    return out;
  }

  async vectorSearch(vector: number[], limit: number, filters: Partial<SearchFilters> = {}): Promise<SearchHit[]> {
    if (!this.vectorSchema || this.embeddingDim === undefined) {
      throw new VectorsUnavailableError("vector search needs an embedding dimension (EMBEDDINGS_DIM) configured for the index");
    }
    checkVector(vector, this.embeddingDim);
    if (vector.every((x) => x === 0)) return [];
    const v = quoteSchema(this.vectorSchema);
    // Over-fetch chunks, then keep each document's nearest. HNSW returns at most ef_search rows.
    const k = Math.min(1_000, Math.max(40, limit * 10));
    const rows = await this.sql.begin(async (tx) => {
      await tx.unsafe(`SET LOCAL hnsw.ef_search = ${k}`);
      const q = tx`${JSON.stringify(vector)}::${tx.unsafe(`${v}.vector`)}`;
      const op = tx.unsafe(`OPERATOR(${v}.<=>)`);
      return tx<(HitRow & { body: string })[]>`
        WITH nn AS (
          SELECT c.doc_id, c.seq, c.body, c.embedding ${op} ${q} AS distance
            FROM ${tx.unsafe(this.chunks)} c JOIN ${tx.unsafe(this.docs)} d ON d.id = c.doc_id
           WHERE c.embedding IS NOT NULL ${this.filters(tx, filters)}
           ORDER BY c.embedding ${op} ${q} LIMIT ${k}
        ), best AS (
          SELECT DISTINCT ON (doc_id) * FROM nn ORDER BY doc_id, distance, seq
        )
        SELECT b.seq, 1 - b.distance AS score, b.body, d.path, d.producer, d.title, d.tags, d.updated_at, '' AS snippet
          FROM best b JOIN ${tx.unsafe(this.docs)} d ON d.id = b.doc_id
         ORDER BY b.distance, d.path LIMIT ${limit}`;
    });
    return rows.map((r) => rowHit({ ...r, snippet: plainSnippet(r.body) }));
  }

  async fingerprints(producer: Producer): Promise<Map<string, Fingerprint>> {
    const rows = await this.sql<{ path: string; hash: string; mtime_ms: number }[]>`
      SELECT path, hash, mtime_ms FROM ${this.sql.unsafe(this.docs)} WHERE producer = ${producer}`;
    return new Map(rows.map((r) => [r.path, { hash: r.hash, mtimeMs: r.mtime_ms }]));
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
    const sql = this.sql;
    const since = q.since ? sql`AND d.updated_at >= ${q.since}` : sql``;
    const producer = q.producer ? sql`AND d.producer = ${q.producer}` : sql``;
    const tag = q.tag ? sql`AND d.tag_keys @> ${[clean(q.tag).toLowerCase()]}::text[]` : sql``;
    const prefix = q.prefix ? sql`AND starts_with(d.path, ${clean(q.prefix)})` : sql``;
    const after = q.after ? sql`AND (d.updated_at, d.path) < (${q.after.updatedAt}, ${q.after.path})` : sql``;
    const rows = await sql<MetaRow[]>`
      SELECT ${this.metaColumns()} FROM ${sql.unsafe(this.docs)} d
       WHERE true ${since} ${producer} ${tag} ${prefix} ${after}
       ORDER BY d.updated_at DESC, d.path DESC LIMIT ${q.limit}`;
    return rows.map(noteMeta);
  }

  async pathsUnder(prefix: string, limit: number): Promise<string[]> {
    const sql = this.sql;
    const rows = await sql<{ path: string }[]>`
      SELECT path FROM ${sql.unsafe(this.docs)} WHERE starts_with(path, ${clean(prefix)}) ORDER BY path COLLATE "C" LIMIT ${limit}`;
    return rows.map((r) => r.path);
  }

  async linkCounts(): Promise<LinkCounts> {
    const sql = this.sql;
    const dangling = sql`
      FROM ${sql.unsafe(this.links)} l JOIN ${sql.unsafe(this.docs)} d ON d.id = l.doc_id
     WHERE CASE l.kind WHEN 'path' THEN NOT EXISTS (SELECT 1 FROM ${sql.unsafe(this.docs)} t WHERE t.path = l.target)
                       ELSE NOT EXISTS (SELECT 1 FROM ${sql.unsafe(this.docs)} t WHERE t.name = l.name) END`;
    const [[{ n }], [{ m }], examples] = (await Promise.all([
      sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ${sql.unsafe(this.links)}`,
      sql<{ m: number }[]>`SELECT count(*)::int AS m ${dangling}`,
      sql<{ source: string; target: string }[]>`SELECT d.path AS source, l.target ${dangling} ORDER BY d.path COLLATE "C" LIMIT 5`,
    ])) as unknown as [[{ n: number }], [{ m: number }], Array<{ source: string; target: string }>];
    return { links: n, dangling: m, examples: [...examples] };
  }

  async holdsProducer(producer: Producer): Promise<boolean> {
    const [row] = await this.sql<{ found: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM ${this.sql.unsafe(this.docs)} WHERE producer = ${producer}) AS found`;
    return row?.found === true;
  }

  async countByProducer(): Promise<Record<Producer, number>> {
    const counts = Object.fromEntries(PRODUCERS.map((p) => [p, 0])) as Record<Producer, number>;
    const rows = await this.sql<{ producer: Producer; n: number }[]>`
      SELECT producer, count(*)::int AS n FROM ${this.sql.unsafe(this.docs)} GROUP BY producer`;
    for (const r of rows) if (r.producer in counts) counts[r.producer] = r.n;
    return counts;
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 5 });
  }

  /**
   * One hit per document, as in SQLite: documents are ranked on their own tsvector (filters in
   * the same WHERE, so only documents that pass them are scored) and only the best `limit`
   * are kept; then, for those alone and only when `snippets`, the best chunk (bestChunk) gives
   * the hit its id and its ts_headline (costly, so run for the returned rows only). Every word
   * reaches Postgres as a bound parameter of phraseto_tsquery, which has no syntax to break.
   */
  private async match(parts: string[][], op: "AND" | "OR", filters: SearchFilters, limit: number, snippets: boolean): Promise<SearchHit[]> {
    const sql = this.sql;
    const top = sql`
      top AS (
        SELECT d.id, d.path, ts_rank(${RANK_WEIGHTS}::float4[], d.tsv, q.q, ${RANK_NORMALIZATION}) AS score
          FROM ${sql.unsafe(this.docs)} d, q
         WHERE d.tsv @@ q.q ${this.filters(sql, filters)}
         ORDER BY score DESC, d.path LIMIT ${limit}
      )`;
    const rows = snippets
      ? await sql<HitRow[]>`
          WITH ${this.queries(parts, op)}, ${top}
          SELECT b.seq, t.score, d.path, d.producer, d.title, d.tags, d.updated_at,
                 ts_headline('english', b.body, b.hq, ${HEADLINE}) AS snippet
            FROM top t JOIN ${sql.unsafe(this.docs)} d ON d.id = t.id, q, ${this.bestChunk(sql`t.id`)}
           ORDER BY t.score DESC, d.path`
      : await sql<HitRow[]>`
          WITH ${this.queries(parts, op)}, ${top}
          SELECT 0 AS seq, t.score, d.path, d.producer, d.title, d.tags, d.updated_at, '' AS snippet
            FROM top t JOIN ${sql.unsafe(this.docs)} d ON d.id = t.id
           ORDER BY t.score DESC, d.path`;
    return rows.map(rowHit);
  }

  private metaColumns(): PendingQuery<Row[]> {
    return this.sql`d.path, d.producer, d.title, d.tags, d.updated_at, d.hash`;
  }

  /** Documents whose `column` is one of `values`. */
  private async metaWhere(column: "d.path" | "d.name", values: string[]): Promise<NoteMeta[]> {
    if (values.length === 0) return [];
    const sql = this.sql;
    const rows = await sql<MetaRow[]>`
      SELECT ${this.metaColumns()} FROM ${sql.unsafe(this.docs)} d WHERE ${sql.unsafe(column)} = ANY(${[...new Set(values)]}::text[])`;
    return rows.map(noteMeta);
  }

  /** Stored links (with their document's path) whose `column` is one of `values`. */
  private async linksWhere(column: "d.path" | "l.name", values: string[]): Promise<StoredLink[]> {
    if (values.length === 0) return [];
    const sql = this.sql;
    return [
      ...(await sql<StoredLink[]>`
        SELECT d.path AS source, l.kind, l.target, l.name FROM ${sql.unsafe(this.links)} l JOIN ${sql.unsafe(this.docs)} d ON d.id = l.doc_id
         WHERE ${sql.unsafe(column)} = ANY(${[...new Set(values)]}::text[])`),
    ];
  }

  private async insertLinks(tx: TransactionSql, docId: string, links: DocLink[]): Promise<void> {
    if (links.length === 0) return;
    await tx`
      INSERT INTO ${tx.unsafe(this.links)} (doc_id, kind, target, name)
      SELECT ${docId}, u.kind, u.target, u.name
        FROM unnest(${links.map((l) => l.kind)}::text[], ${links.map((l) => clean(l.target))}::text[], ${links.map((l) => clean(l.name))}::text[]) AS u(kind, target, name)
      ON CONFLICT DO NOTHING`;
  }

  /** The CTE `q`: q.q the clauses joined by `op`, q.any joined by OR. */
  private queries(parts: string[][], op: "AND" | "OR"): PendingQuery<Row[]> {
    const sql = this.sql;
    const phrases = parts.map((words) => sql`phraseto_tsquery('english', ${words.join(" ")})`);
    const join = (how: "AND" | "OR") => phrases.reduce((a, b) => (how === "AND" ? sql`${a} && ${b}` : sql`${a} || ${b}`));
    return sql`q AS (SELECT ${join(op)} AS q, ${join("OR")} AS any)`;
  }

  /**
   * LATERAL `b` (seq, body, hq): document `docId`'s best chunk — one matching q.q when there
   * is one, else one matching q.any, then the best ranked, then the first — and the query
   * (hq) its headline marks.
   */
  private bestChunk(docId: PendingQuery<Row[]>): PendingQuery<Row[]> {
    const sql = this.sql;
    return sql`LATERAL (
               SELECT c.seq, c.body, m.hq
                 FROM ${sql.unsafe(this.chunks)} c,
                      LATERAL (SELECT CASE WHEN c.tsv @@ q.q THEN q.q ELSE q.any END AS hq) m
                WHERE c.doc_id = ${docId}
                ORDER BY c.tsv @@ q.q DESC, c.tsv @@ q.any DESC, ts_rank(${RANK_WEIGHTS}::float4[], c.tsv, m.hq, ${RANK_NORMALIZATION}) DESC, c.seq
                LIMIT 1
             ) b`;
  }

  /** Filter-only queries (e.g. `tag:deploy`): newest documents first. */
  private async browse(filters: SearchFilters, limit: number): Promise<SearchHit[]> {
    if (filters.tags.length === 0 && filters.producers.length === 0) return [];
    const sql = this.sql;
    const rows = await sql<(HitRow & { body: string })[]>`
      SELECT c.seq, 0 AS score, c.body, d.path, d.producer, d.title, d.tags, d.updated_at, '' AS snippet
        FROM ${sql.unsafe(this.docs)} d JOIN ${sql.unsafe(this.chunks)} c ON c.doc_id = d.id AND c.seq = 0
       WHERE true ${this.filters(sql, filters)}
       ORDER BY d.updated_at DESC, d.path LIMIT ${limit}`;
    return rows.map((r) => rowHit({ ...r, snippet: plainSnippet(r.body) }));
  }

  private filters(on: Sql | TransactionSql, filters: Partial<SearchFilters>): PendingQuery<Row[]> {
    const sql = on as Sql; // a transaction's tag builds fragments the same way
    const producers = filters.producers ?? [];
    const tags = (filters.tags ?? []).map((t) => clean(t).toLowerCase());
    const byProducer = producers.length ? sql`AND d.producer = ANY(${producers}::text[])` : sql``;
    const byTags = tags.length ? sql`AND d.tag_keys @> ${tags}::text[]` : sql``;
    return sql`${byProducer} ${byTags}`;
  }
}

/**
 * What Postgres tokenizes: words only, as FTS5's unicode61 sees them. Its own parser would keep
 * "v1.2", "a.b.com" or "/usr/bin" whole, so the word "usr" would find nothing there.
 */
function searchable(text: string): string {
  return text.normalize("NFC").replace(/[^\p{L}\p{N}\p{M}]+/gu, " ");
}

/** Postgres text cannot hold NUL. */
function clean(text: string): string {
  return text.replaceAll("\0", "");
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function rowHit(r: HitRow): SearchHit {
  return toHit({
    path: r.path,
    seq: r.seq,
    producer: r.producer,
    title: r.title,
    tags: r.tags,
    updatedAt: r.updated_at,
    score: Number(r.score),
    snippet: r.snippet,
  });
}

function noteMeta(r: MetaRow): NoteMeta {
  return { path: r.path, producer: r.producer, title: r.title, tags: r.tags, updatedAt: r.updated_at, hash: r.hash };
}
