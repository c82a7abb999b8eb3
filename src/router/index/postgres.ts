// The IndexStore on PostgreSQL (DATABASE_URL): a tsvector per document (title weight A, body
// weight B) under GIN, ranked with ts_rank; each hit's best chunk (its own tsvector) gives the
// snippet, its words marked where its tsvector holds the query's lexemes (snippet.ts); pgvector
// for embeddings when a dimension is configured. Tables live in one schema (default public), so tests isolate.
import { availableParallelism } from "node:os";
import postgres, { type PendingQuery, type Row, type Sql, type TransactionSql } from "postgres";
import { type Chunk, chunkDocument, embeddingInputs } from "./chunk.ts";
import { checkVector, resolveEmbeddings } from "./embeddings.ts";
import { VectorsUnavailableError } from "./errors.ts";
import { hitSnippet, plainSnippet, toHit } from "./hit.ts";
import { type DocLink, extractLinks, noteName } from "./links.ts";
import { deferredIndexes, dropIndexStatements, migrate, quoteSchema } from "./migrate.ts";
import { CopyRows, copyIn, type LexedDoc } from "./pg-copy.ts";
import { literalOf, NOT_ASCII, PgLexicon, salientOf, searchable } from "./pg-lexicon.ts";
import { clauses, clauseWeights, hasText, type ParsedQuery, queryCoverage } from "./query.ts";
import { anyScore, closeness, type Occurrence } from "./rank.ts";
import { markedSnippet, markPositions, wordsMaybeSplit } from "./snippet.ts";
import {
  type Fingerprint,
  type HitSnippet,
  type IndexDoc,
  type IndexStore,
  type LinkCounts,
  type MatchMode,
  type NoteMeta,
  PRODUCERS,
  type Producer,
  type RecentQuery,
  type SearchFilters,
  type SearchHit,
  type SearchOptions,
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

/**
 * A "match any" search of several clauses weighs the best of the documents holding any of
 * them again by coverage and closeness (rank.ts): this many per hit asked for, at least
 * CANDIDATES_MIN, and the best `limit` holding all of them — as the SQLite store does.
 */
const CANDIDATES_PER_HIT = 3;
const CANDIDATES_MIN = 30;
/** Candidates read from each tier of a search at most (see match()), and at least `limit` × CANDIDATES_PER_HIT. */
const DEPTH = 40;
/** Ids a first build takes from index_docs' sequence at a time (see takeIds). */
const ID_BLOCK = 1024;
/** Batches of fewer documents do not ask the server for words the lexicon lacks (see lex()). */
const LEARN_MIN_DOCS = 16;
/** Connections building a first load's deferred indexes side by side, and each one's sort memory. */
const BUILD_CONNECTIONS = 2;
const BUILD_MEMORY = "256MB";
/** gin_fuzzy_search_limit of an unfiltered "match any" search (see search()). */
const SAMPLE_LIMIT = 50_000;
/**
 * The sessions of unfiltered "match any" searches (see search()): their GIN scans capped at
 * SAMPLE_LIMIT, and their statements run on generic plans. The words reach a plan only through
 * the CTE `q`, so a plan made for each search's values (Postgres' default for a statement's
 * first five runs, and then whenever it guesses that pays) comes out the same, and planning the
 * statement again each time cost more of the server's time than running it.
 */
const SAMPLED_SETTINGS = { gin_fuzzy_search_limit: String(SAMPLE_LIMIT), plan_cache_mode: "force_generic_plan" } as const;

/**
 * The searches' own pool (see `searchPool`): as many connections as this machine has cores, at
 * least 2 and at most the pool's size. A pool larger than the searches running at once, handing
 * each statement to the connection idle longest (as the postgres package does), turns even one
 * client's searches through every backend it has opened, each with cold CPU caches; and more
 * searches at once than cores only queue inside Postgres.
 */
function sampledPoolSize(max: number): number {
  return Math.min(max, Math.max(2, availableParallelism()));
}

/**
 * The searches' pool is Bun's own Postgres client (Bun.SQL), the rest of the store's the
 * `postgres` package: a search's statements build the same way on both (tagged templates,
 * nested fragments, `unsafe` names), and Bun's client reads their rows natively, where the
 * package parses them in JavaScript over node:net — about half the router's CPU a statement.
 * Only the searches use it: the writes stream COPY, which Bun.SQL does not speak.
 */
function searchPool(url: string, max: number, connection: Record<string, string>): Sql {
  return new Bun.SQL(url, { max, connectionTimeout: 10, connection }) as unknown as Sql;
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

interface MetaRow {
  path: string;
  producer: Producer;
  title: string;
  tags: string[];
  updated_at: Date;
  hash: string;
}

interface OldRow {
  id: string;
  path: string;
  hash: string;
  title: string;
  producer: string;
  tags: string[];
  mtime_ms: number;
  name: string | null;
}

/** A document upsertMany writes: prepared, chunked, its texts as Postgres will tokenize them. */
interface Changed {
  p: { doc: IndexDoc; title: string; tags: string[]; mtimeMs: number };
  chunks: Chunk[];
  /** Each chunk's text as stored (clean). */
  bodies: string[];
  links: DocLink[];
  embeddings: number[][] | undefined;
  old?: OldRow;
}

interface HitRow {
  seq: number;
  score: number;
  coverage?: number;
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

export class PostgresIndexStore implements IndexStore {
  readonly kind = "postgres";
  readonly embeddingDim: number | undefined;
  readonly schema: string;
  private readonly sql: Sql;
  /**
   * The connections of unfiltered "match any" searches (see search()): the same server, each
   * session set up for them once. Opened as searches need them; none with a single-session
   * server (max 1), where a search sets the same in a transaction of its own.
   */
  private readonly searchPool: (() => Sql) | undefined;
  private pool: Sql | undefined;
  private readonly docs: string;
  private readonly chunks: string;
  private readonly links: string;
  private readonly titleWords: string;
  private readonly tsvectorCat: string;
  private readonly salientLexemes: string;
  /** Schema of the pgvector extension, once migrate() has seen it. */
  private vectorSchema: string | undefined;
  /** A first build is running (bulkLoad): its batches commit without waiting for the disk. */
  private bulk = 0;
  /** Ids a first build took from index_docs' sequence and has not used yet (takeIds). */
  private ids: string[] = [];
  /** Words' lexemes learned from the server: most texts are written as tsvector literals. */
  private readonly lexicon = new PgLexicon();

  constructor(opts: PostgresIndexOptions) {
    this.schema = opts.schema ?? "public";
    const s = quoteSchema(this.schema);
    this.docs = `${s}.index_docs`;
    this.chunks = `${s}.index_chunks`;
    this.links = `${s}.index_links`;
    this.titleWords = `${s}.index_title_words`;
    this.tsvectorCat = `${s}.tsvector_cat`;
    this.salientLexemes = `${s}.salient_lexemes`;
    this.embeddingDim = opts.embeddingDim;
    const max = opts.max ?? 10;
    const options = {
      max,
      connect_timeout: 10,
      onnotice: () => {}, // e.g. "query contains only stop words": an empty result says as much
    };
    // A search is a few short statements; JIT compiling one (when a misestimate pushes its
    // cost over jit_above_cost) would take longer than running it.
    this.sql = postgres(opts.url, { ...options, connection: { jit: "off" } });
    // Named in pg_stat_activity (application_name), with the index's schema.
    const searches = { jit: "off", application_name: `brain-stack search (${this.schema})`.slice(0, 63), ...SAMPLED_SETTINGS };
    // Made at the first such search: a router that serves none (the build's, a CLI's) never loads Bun's client.
    this.searchPool = max > 1 ? () => (this.pool ??= searchPool(opts.url, sampledPoolSize(max), searches)) : undefined;
  }

  get hasVectors(): boolean {
    return this.vectorSchema !== undefined;
  }

  async migrate(): Promise<void> {
    const result = await migrate(this.sql, { schema: this.schema, embeddingDim: this.embeddingDim });
    this.vectorSchema = result.vectorSchema;
  }

  /**
   * A first build: on an empty index, `load` runs without the text index and the listing
   * indexes (migrate.ts DEFERRED_INDEXES), which are then built once, sorted, at the end,
   * instead of updated note by note. Meanwhile searches scan the table; a crash before the
   * end leaves them to migrate(), which makes them at the next open. Otherwise: just `load`.
   */
  async bulkLoad<T>(load: () => Promise<T>): Promise<T> {
    const sql = this.sql;
    const [row] = await sql`SELECT EXISTS (SELECT 1 FROM ${sql.unsafe(this.docs)}) AS found`;
    if (row?.found) return load();
    for (const statement of dropIndexStatements(this.schema)) await sql.unsafe(statement);
    this.bulk++;
    try {
      return await load();
    } finally {
      this.bulk--;
      this.ids = [];
      await this.buildIndexes();
    }
  }

  /**
   * The deferred indexes, sorted in one pass each, BUILD_CONNECTIONS at a time (a GIN build
   * runs on one core: two of them side by side take the time of the longer), largest first,
   * and the planner's statistics of the new rows. ANALYZE waits for any index being built on
   * its table (their locks conflict), so index_docs' comes first, beside the other tables'
   * indexes and statistics, and its own indexes after it. index_chunks is only ever read by
   * document: its statistics are those columns', not its texts'.
   */
  private async buildIndexes(): Promise<void> {
    const indexes = deferredIndexes(this.schema);
    const onDocs = indexes.filter((i) => i.table === this.docs).map((i) => i.statement);
    const chunkColumns = `doc_id, seq${this.hasVectors ? ", embedding" : ""}`;
    const statements = [
      `ANALYZE ${this.docs}`,
      ...indexes.filter((i) => i.table !== this.docs).map((i) => i.statement),
      `ANALYZE ${this.chunks} (${chunkColumns})`,
      ...onDocs,
    ];
    const work = async () => {
      const conn = await this.sql.reserve();
      try {
        // Index builds sort in memory up to this (a session setting, for this connection only).
        await conn.unsafe(`SET maintenance_work_mem = '${BUILD_MEMORY}'`);
        for (let next = statements.shift(); next !== undefined; next = statements.shift()) await conn.unsafe(next);
      } finally {
        await conn.unsafe("RESET maintenance_work_mem").catch(() => {});
        conn.release();
      }
    };
    await Promise.all(Array.from({ length: BUILD_CONNECTIONS }, work));
  }

  async upsert(doc: IndexDoc, opts: UpsertOptions = {}): Promise<boolean> {
    return (await this.upsertMany([doc], opts))[0]!;
  }

  /**
   * Many documents in one transaction: one lookup of what is stored, then each table written
   * by one multi-row statement (arrays unnested server-side), so a build costs a few round
   * trips per batch instead of several per note. `opts` applies to every document
   * (`embeddings` only with a single document).
   */
  async upsertMany(docs: IndexDoc[], opts: UpsertOptions = {}): Promise<boolean[]> {
    if (docs.length === 0) return [];
    if (opts.embeddings && docs.length > 1) throw new RangeError("embeddings are given per document: upsert one document at a time");
    const sql = this.sql;
    // The last of two documents with one path wins, as two upserts in a row would.
    const last = new Map(docs.map((d, i) => [d.path, i]));
    const prepared = docs.map((doc) => ({
      doc,
      title: clean(doc.title),
      tags: doc.tags.map(clean),
      mtimeMs: doc.mtimeMs ?? doc.updatedAt.getTime(),
    }));
    const olds = await sql<OldRow[]>`
      SELECT id, path, hash, title, producer, tags, mtime_ms, name FROM ${sql.unsafe(this.docs)} WHERE path = ANY(${[...last.keys()]}::text[])`;
    const byPath = new Map(olds.map((o) => [o.path, o]));
    const wrote = docs.map(() => false);
    const touched: { id: string; mtimeMs: number }[] = [];
    const relinked: { id: string; mtimeMs: number; name: string; links: DocLink[] }[] = [];
    const changed: Changed[] = [];
    for (const [i, p] of prepared.entries()) {
      if (last.get(p.doc.path) !== i) continue;
      const old = byPath.get(p.doc.path);
      if (old && old.hash === p.doc.hash && old.title === p.title && old.producer === p.doc.producer && sameList(old.tags, p.tags)) {
        // Indexed before links were kept (name NULL): record them now, the text stays as it is.
        if (old.name === null) relinked.push({ id: old.id, mtimeMs: p.mtimeMs, name: noteName(p.doc.path), links: extractLinks(p.doc.path, p.doc.body) });
        else if (old.mtime_ms !== p.mtimeMs) touched.push({ id: old.id, mtimeMs: p.mtimeMs });
        continue;
      }
      wrote[i] = true;
      const chunks = chunkDocument(p.doc);
      changed.push({
        p,
        chunks,
        bodies: chunks.map((k) => clean(k.text)),
        links: extractLinks(p.doc.path, p.doc.body),
        embeddings: undefined,
        old,
      });
    }
    const dim = this.hasVectors ? this.embeddingDim : undefined;
    await Promise.all(
      changed.map(async (c) => {
        c.embeddings = await resolveEmbeddings(opts, c.chunks.length, dim, () => embeddingInputs(c.p.doc));
      }),
    );
    if (changed.length === 0 && touched.length === 0 && relinked.length === 0) return wrote;
    const lexed = await this.lex(changed);
    const withVectors = changed.some((c) => c.embeddings?.some((e) => e));
    // A first build's new documents, lexed here, are copied in (COPY, binary): no statement to
    // parse, no tsvector literal to read, and nothing for the server to join.
    const copy = this.bulk > 0 && !withVectors ? await this.copyRows(changed, lexed) : undefined;
    const write = (copy: CopyRows | undefined) =>
      sql.begin(async (tx) => {
        // A first build's batch need not wait for its commit to reach the disk: a crash loses
        // at most the last few batches, which the next refresh finds missing and writes again.
        // Sent and not awaited: the next statements follow it on the connection, and fail with
        // the transaction if it fails; awaited at the end all the same.
        const setting = this.bulk > 0 ? tx`SET LOCAL synchronous_commit = off`.execute() : undefined;
        setting?.catch(() => {});
        if (touched.length > 0 || relinked.length > 0) {
          const rows = [...touched.map((t) => ({ ...t, name: null as string | null })), ...relinked];
          await tx`
            UPDATE ${tx.unsafe(this.docs)} d SET mtime_ms = u.mtime_ms, name = coalesce(u.name, d.name)
              FROM unnest(${rows.map((r) => r.id)}::bigint[], ${rows.map((r) => r.mtimeMs)}::float8[], ${rows.map((r) => r.name)}::text[]) AS u(id, mtime_ms, name)
             WHERE d.id = u.id`;
          await this.insertLinks(
            tx,
            relinked.flatMap((r) => r.links.map((l) => ({ docId: r.id, link: l }))),
          );
        }
        if (changed.length === 0) return void (await setting);
        const replaced = changed.filter((c) => c.old).map((c) => c.old!.id);
        if (replaced.length > 0) {
          await tx`DELETE FROM ${tx.unsafe(this.chunks)} WHERE doc_id = ANY(${replaced}::bigint[])`;
          await tx`DELETE FROM ${tx.unsafe(this.links)} WHERE doc_id = ANY(${replaced}::bigint[])`;
          // Their title words' rows, found by their salient "t:" entries (the table has no doc_id index).
          await tx`
            DELETE FROM ${tx.unsafe(this.titleWords)} w USING ${tx.unsafe(this.docs)} d, unnest(d.salient) AS e
             WHERE d.id = ANY(${replaced}::bigint[]) AND starts_with(e, 't:') AND w.lexeme = substr(e, 3) AND w.doc_id = d.id`;
        }
        const ids = new Map<string, string>();
        if (copy) {
          // The documents' title words are their salient "t:" entries, read back by the statement
          // that follows their COPY (one round trip, where a COPY of their own took two).
          const titleWords = tx`
            INSERT INTO ${tx.unsafe(this.titleWords)} (lexeme, doc_id)
            SELECT substr(e, 3), d.id FROM ${tx.unsafe(this.docs)} d, unnest(d.salient) AS e
             WHERE d.id = ANY(${[...copy.ids.values()]}::bigint[]) AND starts_with(e, 't:')`;
          await copyIn(tx, `COPY ${this.docs} (${CopyRows.DOC_COLUMNS}) FROM STDIN (FORMAT binary)`, copy.docs, titleWords);
          await copyIn(tx, `COPY ${this.chunks} (${CopyRows.CHUNK_COLUMNS}) FROM STDIN (FORMAT binary)`, copy.chunks);
          for (const [path, id] of copy.ids) ids.set(path, id);
        }
        const rest = copy ? changed.filter((c) => !copy.ids.has(c.p.doc.path)) : changed;
        const restLexed = copy ? lexed.filter((_, i) => !copy.ids.has(changed[i]!.p.doc.path)) : lexed;
        if (rest.length > 0) for (const r of await this.insertChanged(tx, rest, restLexed)) ids.set(r.path, r.id);
        await this.insertLinks(
          tx,
          changed.flatMap((c) => c.links.map((l) => ({ docId: ids.get(c.p.doc.path)!, link: l }))),
        );
        await setting;
      });
    try {
      await write(copy);
    } catch (err) {
      // A path written meanwhile by another writer fails a COPY, which cannot skip a conflict:
      // the batch is written again the ordinary way.
      if (!copy) throw err;
      await write(undefined);
    } finally {
      copy?.release();
    }
    return wrote;
  }

  /**
   * The rows of a first build's new documents that COPY can write: those lexed here whose
   * tsvectors the router can join exactly (tsvectorBinary) and whose tags lower-case the same in
   * JavaScript and Postgres (ASCII), in COPY's binary format, with ids taken from the table's
   * sequence. Undefined when there are none.
   */
  private async copyRows(changed: Changed[], lexed: LexedDoc[]): Promise<CopyRows | undefined> {
    const can = changed.map((c, i) => !c.old && lexed[i]?.salient !== undefined && c.p.tags.every((t) => !NOT_ASCII.test(t)));
    const n = can.filter(Boolean).length;
    if (n === 0) return undefined;
    const seq = await this.takeIds(n);
    const rows = new CopyRows();
    let next = 0;
    for (const [i, c] of changed.entries()) {
      if (!can[i]) continue;
      if (next > 0 && next % YIELD_DOCS === 0) await yieldToIO();
      if (rows.add(seq[next]!, c, lexed[i]!)) next++;
    }
    // Ids a batch did not use go back to the pool.
    this.ids.unshift(...seq.slice(next));
    if (rows.ids.size > 0) return rows.finish();
    rows.release();
    return undefined;
  }

  /** `n` ids from index_docs' sequence: taken ID_BLOCK at a time by a first build, one round trip a block. */
  private async takeIds(n: number): Promise<string[]> {
    if (this.ids.length < n) {
      const rows = await this.sql<{ id: string }[]>`
        SELECT nextval(pg_get_serial_sequence(${this.docs}, 'id')) AS id FROM generate_series(1, ${Math.max(ID_BLOCK, n - this.ids.length)})`;
      for (const r of rows) this.ids.push(r.id);
    }
    return this.ids.splice(0, n);
  }

  /**
   * Writes `changed` (and their chunks) by one statement, arrays unnested server-side; returns
   * each document's id.
   */
  private async insertChanged(tx: TransactionSql, changed: Changed[], lexed: LexedDoc[]): Promise<{ id: string; path: string }[]> {
    const chunkRows = changed.flatMap((c, i) =>
      c.chunks.map((k, j) => {
        const lex = lexed[i]?.chunks[j];
        return {
          i: i + 1,
          seq: k.seq,
          body: c.bodies[j]!,
          words: lex ? null : searchable(c.bodies[j]!),
          literal: lex ? literalOf(lex) : undefined,
          embedding: c.embeddings?.[j],
        };
      }),
    );
    const withVectors = chunkRows.some((r) => r.embedding);
    const vector = withVectors ? tx.unsafe(`, c.emb::${quoteSchema(this.vectorSchema!)}.vector`) : tx``;
    const vectorCol = withVectors ? tx.unsafe(", embedding") : tx``;
    const vectorArg = withVectors ? tx`, ${chunkRows.map((r) => (r.embedding ? JSON.stringify(r.embedding) : null))}::text[]` : tx``;
    const vectorName = withVectors ? tx.unsafe(", emb") : tx``;
    // Each text is parsed once: a chunk's vector is the title's (weight A) and its own words'
    // (B); the document's is the title's and its chunks' words joined (tsvector_cat). A text
    // lexed here (pg-lexicon.ts) arrives as its tsvector's literal, else as words to parse.
    return tx<{ id: string; path: string }[]>`
        WITH d AS (
          SELECT u.*, CASE WHEN u.title_lit IS NOT NULL THEN u.title_lit::tsvector
                           ELSE setweight(to_tsvector('english', u.title_words), 'A') END AS ttsv
            FROM unnest(${changed.map((c) => c.p.doc.path)}::text[], ${changed.map((c) => c.p.doc.producer)}::text[],
                        ${changed.map((c) => c.p.title)}::text[], ${changed.map((c) => JSON.stringify(c.p.tags))}::text[],
                        ${changed.map((c) => c.p.doc.updatedAt.toISOString())}::timestamptz[], ${changed.map((c) => c.p.doc.hash)}::text[],
                        ${changed.map((c) => c.p.mtimeMs)}::float8[], ${changed.map((c) => noteName(c.p.doc.path))}::text[],
                        ${changed.map((c, i) => (lexed[i] ? null : searchable(c.p.title)))}::text[], ${changed.map((_, i) => {
                          const l = lexed[i];
                          return l ? literalOf(l.title) : null;
                        })}::text[],
                        ${changed.map((_, i) => lexed[i]?.salient?.join(" ") ?? null)}::text[])
                 WITH ORDINALITY AS u(path, producer, title, tags, updated_at, hash, mtime_ms, name, title_words, title_lit, salient, i)
        ), c AS MATERIALIZED (
          SELECT k.i, k.seq, k.body, CASE WHEN k.lit IS NOT NULL THEN k.lit::tsvector ELSE setweight(to_tsvector('english', k.words), 'B') END AS btsv${vectorName}
            FROM unnest(${chunkRows.map((r) => r.i)}::bigint[], ${chunkRows.map((r) => r.seq)}::int[], ${textArray(
              tx,
              chunkRows.map((r) => r.body),
            )},
                        ${textArray(
                          tx,
                          chunkRows.map((r) => (r.literal === undefined ? r.words : null)),
                        )}, ${textArray(
                          tx,
                          chunkRows.map((r) => r.literal ?? null),
                        )}${vectorArg})
                 AS k(i, seq, body, words, lit${vectorName})
        ), body AS (
          SELECT c.i, ${tx.unsafe(this.tsvectorCat)}(c.btsv ORDER BY c.seq) AS tsv FROM c GROUP BY c.i
        ), ins AS (
          INSERT INTO ${tx.unsafe(this.docs)} (path, producer, title, tags, tag_keys, updated_at, hash, mtime_ms, name, tsv, salient)
          SELECT d.path, d.producer, d.title, ARRAY(SELECT jsonb_array_elements_text(d.tags::jsonb)),
                 ARRAY(SELECT lower(t) FROM jsonb_array_elements_text(d.tags::jsonb) AS t),
                 d.updated_at, d.hash, d.mtime_ms, d.name, d.ttsv || coalesce(body.tsv, ''),
                 coalesce(string_to_array(d.salient, ' '), ${tx.unsafe(this.salientLexemes)}(d.ttsv, coalesce(body.tsv, '')))
            FROM d LEFT JOIN body ON body.i = d.i
          ON CONFLICT (path) DO UPDATE SET producer = excluded.producer, title = excluded.title, tags = excluded.tags,
            tag_keys = excluded.tag_keys, updated_at = excluded.updated_at, hash = excluded.hash, mtime_ms = excluded.mtime_ms,
            name = excluded.name, tsv = excluded.tsv, salient = excluded.salient
          RETURNING id, path, salient
        ), title_words AS (
          INSERT INTO ${tx.unsafe(this.titleWords)} (lexeme, doc_id)
          SELECT DISTINCT substr(e, 3), ins.id FROM ins, unnest(ins.salient) AS e WHERE starts_with(e, 't:')
        ), chunks AS (
          INSERT INTO ${tx.unsafe(this.chunks)} (doc_id, seq, body, tsv${vectorCol})
          SELECT ins.id, c.seq, c.body, d.ttsv || c.btsv${vector}
            FROM c JOIN d ON d.i = c.i JOIN ins ON ins.path = d.path
        )
        SELECT id, path FROM ins`;
  }

  /**
   * Each changed document's title and chunks as tsvector literals, when the lexicon can tell
   * every one of them (after learning their new words in one query); undefined where Postgres
   * must parse the document. Its salient lexemes too, when they can be told.
   */
  private async lex(changed: Changed[]): Promise<LexedDoc[]> {
    const lexDoc = (c: Changed, unknown?: Set<string>) => {
      const title = this.lexicon.lex(c.p.title, "A", unknown);
      const chunks = c.bodies.map((body) => this.lexicon.lex(body, "B", unknown));
      if (!title || !chunks.every((l) => l !== undefined)) return undefined;
      return { title, chunks, salient: salientOf(title, chunks) };
    };
    const unknown = new Set<string>();
    const lexed: LexedDoc[] = [];
    for (const [i, c] of changed.entries()) {
      if (i > 0 && i % YIELD_DOCS === 0) await yieldToIO();
      lexed.push(lexDoc(c, unknown));
    }
    // A few documents (an ingest) are not worth a round trip to learn their new words: Postgres parses those.
    if (unknown.size === 0 || changed.length < LEARN_MIN_DOCS) return lexed;
    await this.lexicon.learn(this.sql, unknown);
    return lexed.map((l, i) => l ?? lexDoc(changed[i]!));
  }

  async remove(path: string): Promise<boolean> {
    const sql = this.sql;
    const rows = await sql`
      WITH d AS (DELETE FROM ${sql.unsafe(this.docs)} WHERE path = ${path} RETURNING id, salient),
      gone AS (DELETE FROM ${sql.unsafe(this.titleWords)} w USING d, unnest(d.salient) AS e
                WHERE starts_with(e, 't:') AND w.lexeme = substr(e, 3) AND w.doc_id = d.id)
      SELECT id FROM d`;
    return rows.length > 0;
  }

  async search(query: ParsedQuery, limit: number, opts: SearchOptions = {}): Promise<SearchHit[]> {
    if (!hasText(query)) return this.browse(query, limit);
    const mode = opts.match ?? "any";
    const snippets = opts.snippets ?? true;
    // Unfiltered "match any": each GIN scan may stop at SAMPLE_LIMIT (Postgres' fuzzy limit),
    // so a word held by half a million notes costs what one held by SAMPLE_LIMIT does; the
    // tiers take any DEPTH of a tier's notes anyway (the every-word list's last tier, words
    // each held by more than SAMPLE_LIMIT notes, then reads a sample of their intersection).
    // Not with filters or "match all", whose answers are an intersection and must be whole.
    if (mode === "all" || query.tags.length > 0 || query.producers.length > 0) return this.match(this.sql, query, mode, limit, snippets);
    // On connections of their own, whose sessions hold SAMPLED_SETTINGS: two round trips, no transaction to open and close.
    if (this.searchPool) return this.match(this.searchPool(), query, mode, limit, snippets);
    return this.sql.begin(async (tx) => {
      // Sent now (execute()) and not awaited before the search's statements, which follow it on
      // the connection in order: one round trip fewer. A failure fails the transaction, and so the search.
      const settings = Object.entries(SAMPLED_SETTINGS).map(([name, value]) => `set_config('${name}', '${value}', true)`);
      const setting = tx.unsafe(`SELECT ${settings.join(", ")}`).execute();
      const [, hits] = await Promise.all([setting, this.match(tx as unknown as Sql, query, mode, limit, snippets)]);
      return hits;
    });
  }

  async snippets(query: ParsedQuery, paths: string[]): Promise<Map<string, HitSnippet>> {
    const out = new Map<string, HitSnippet>();
    if (!hasText(query) || paths.length === 0) return out;
    const sql = this.sql;
    // OR: marks every clause a document holds, as search() marks them in either match mode.
    const parts = clauses(query);
    const rows = await sql<(ChunkRow & { path: string })[]>`
      WITH ${this.queries(parts, "OR")}
      SELECT d.path, b.seq, b.body, b.at
        FROM ${sql.unsafe(this.docs)} d, q, ${this.bestChunk(sql`d.id`, parts)}
       WHERE d.path = ANY(${paths}::text[]) AND d.tsv @@ q.any`;
    const marked = await this.chunkSnippets(rows);
    for (const [i, r] of rows.entries()) out.set(r.path, hitSnippet(r.path, r.seq, marked[i]!));
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

  async fingerprintsAfter(producer: Producer, after: string, limit: number): Promise<Array<Fingerprint & { path: string }>> {
    // The order of UTF-8 bytes (COLLATE "C"), which index_docs_producer_path holds whatever the
    // database's own collation: a page is read off the index, never sorted.
    const rows = await this.sql<{ path: string; hash: string; mtime_ms: number }[]>`
      SELECT path, hash, mtime_ms FROM ${this.sql.unsafe(this.docs)}
       WHERE producer = ${producer} AND path COLLATE "C" > ${after} ORDER BY path COLLATE "C" LIMIT ${limit}`;
    return rows.map((r) => ({ path: r.path, hash: r.hash, mtimeMs: r.mtime_ms }));
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
    await Promise.all([this.sql.end({ timeout: 5 }), this.pool?.end({ timeout: 5 })]);
  }

  /**
   * Ranked hits, one per document, by the rule both stores share (rank.ts), over a bounded
   * set of candidates so that a search costs about the same whatever the vault's size:
   * instead of ranking every document that holds a common word, it ranks at most DEPTH of
   * them from each of these tiers, in order, each read from a GIN index: documents holding
   * a query word in their title, then holding one strongly (in the title or at least twice in
   * the body: the salient column), then holding one anywhere; and at most DEPTH holding every
   * word — holding each strongly and one in the title, then each strongly, then anywhere.
   * ts_rank puts a title word ten times a body word and a repeated word above a passing
   * mention, so the best matches are in the first tiers; a vault where fewer than DEPTH
   * documents hold the words gets all of them ranked, exactly.
   *
   * "all" (or a single clause): the best `limit` candidates holding every clause, by ts_rank.
   * "any" with several clauses: the best CANDIDATES by ts_rank over the clauses OR-ed, and the
   * best `limit` holding all; for those alone, which clauses each holds and where (its
   * lexemes' positions), ordered by anyScore(). Filters sit in each tier's WHERE. Then, for
   * the hits alone and only when `snippets`, each one's best chunk and where the query's lexemes stand in it. Every
   * word reaches Postgres as a bound parameter of phraseto_tsquery, which has no syntax to break.
   */
  private async match(sql: Sql, query: ParsedQuery, mode: MatchMode, limit: number, snippets: boolean): Promise<SearchHit[]> {
    const parts = clauses(query);
    const meta = sql`d.path, d.producer, d.title, d.tags, d.updated_at`;
    const docs = sql.unsafe(this.docs);
    const f = this.filters(sql, query);
    const depth = Math.max(DEPTH, limit * CANDIDATES_PER_HIT);
    // The tiers read the salient index alone: "t:" a word in the title, "s:" a word held
    // strongly (in the title, or twice in the body). Holding every word strongly is one
    // containment (@>) there; a phrase, whose lexemes may stand apart, is then checked row by
    // row (a CASE, which the planner cannot turn into a scan of the tsv index: that would
    // intersect every match of each word, which for common words costs what the vault's size
    // does). Only the last tiers scan the tsv index, for the notes the others cannot hold, and
    // only when those fell short of `depth`: a vault where fewer than `depth` notes hold the
    // words gets all of them.
    const phrase = (q: PendingQuery<Row[]>) => (query.phrases.length > 0 ? sql`AND CASE WHEN d.tsv @@ ${q} THEN true END` : sql``);
    // One word: its title entry implies its strong one (a title's lexemes are all "s:").
    const oneWord = parts.length === 1 && query.phrases.length === 0;
    const t = sql`(SELECT t FROM k)`;
    const s = sql`(SELECT s FROM k)`;
    // Without filters or phrases, the title tier reads index_title_words (migration 0006): each
    // word's rows until the tier has its notes, instead of each word's whole posting list.
    const filtered = query.tags.length > 0 || query.producers.length > 0;
    const inTitle = filtered || query.phrases.length > 0 ? undefined : this.titleTier(sql, depth, depth);
    const ctes = sql`
      ${this.queries(parts, "AND", sql)},
      ql AS (SELECT x.i, t.lexeme, t.positions FROM unnest(${parts.map((p) => p.join(" "))}::text[]) WITH ORDINALITY AS x(words, i),
                    unnest(to_tsvector('english', x.words)) AS t),
      k AS (SELECT ARRAY(SELECT DISTINCT 't:' || lexeme FROM ql) AS t, ARRAY(SELECT DISTINCT 's:' || lexeme FROM ql) AS s),
      allc AS (${
        oneWord && inTitle
          ? inTitle
          : sql`(SELECT d.id FROM ${docs} d, q WHERE d.salient && ${t} ${oneWord ? sql`` : sql`AND d.salient @> ${s}`} ${phrase(sql`q.q`)} ${f} LIMIT ${depth})`
      }
               UNION ALL
               (SELECT d.id FROM ${docs} d, q WHERE d.salient @> ${s} AND ${s} <> '{}' AND NOT d.salient && ${t} ${phrase(sql`q.q`)} ${f} LIMIT ${depth})
               UNION ALL
               (SELECT d.id FROM ${docs} d, q WHERE d.tsv @@ q.q AND NOT d.salient @> ${s} ${f} LIMIT ${depth})
               LIMIT ${depth})`;
    if (mode === "all" || parts.length === 1) {
      const top = sql`
        top AS (SELECT d.id, ${this.rankOf(sql`q.q`, sql)} AS score FROM allc c JOIN ${docs} d ON d.id = c.id, q
                 ORDER BY score DESC, d.path LIMIT ${limit})`;
      if (!snippets) {
        const rows = await sql<HitRow[]>`
          WITH ${ctes}, ${top}
          SELECT 0 AS seq, t.score, 1 AS coverage, ${meta}, '' AS snippet FROM top t JOIN ${docs} d ON d.id = t.id`;
        return rows.map(rowHit).sort(byScore);
      }
      const rows = await sql<(HitRow & ChunkRow)[]>`
        WITH ${ctes}, ${top}
        SELECT b.seq, t.score, 1 AS coverage, ${meta}, b.body, b.at, '' AS snippet
          FROM top t JOIN ${docs} d ON d.id = t.id, q, ${this.bestChunk(sql`t.id`, parts, sql)}`;
      const marked = await this.chunkSnippets(rows);
      return rows.map((r, i) => rowHit({ ...r, snippet: marked[i]! })).sort(byScore);
    }
    const k = Math.max(CANDIDATES_MIN, limit * CANDIDATES_PER_HIT);
    // With snippets, the hits' own columns come with their snippets (the statement after this
    // one, for the hits alone): this one returns what ranking reads, for every candidate it
    // returns, and the clauses' lexemes once.
    const scoredMeta = snippets ? sql`d.path` : meta;
    const rows = await sql<(HitRow & { id: string; tsv: string; clause_lexemes: [number, string, number[]][] })[]>`
      WITH ${ctes},
      anyc AS (${inTitle ?? sql`(SELECT d.id FROM ${docs} d, q WHERE d.salient && ${t} ${phrase(sql`q.any`)} ${f} LIMIT ${depth})`}
               UNION ALL
               (SELECT d.id FROM ${docs} d, q WHERE d.salient && ${s} AND NOT d.salient && ${t} ${phrase(sql`q.any`)} ${f} LIMIT ${depth})
               UNION ALL
               (SELECT d.id FROM ${docs} d, q WHERE d.tsv @@ q.any AND NOT d.salient && ${s} ${f} LIMIT ${depth})
               LIMIT ${depth}),
      -- Each candidate's tsvector read out of TOAST once, into a copy of its own (ts_delete of no
      -- lexeme; OFFSET 0 keeps the planner from folding it into the uses below, which would each
      -- read it again).
      scored AS MATERIALIZED (
        SELECT d.id, ${this.rankOf(sql`q.any`, sql)} AS score, d.tsv @@ q.q AS holds_all, d.tsv, ${scoredMeta}
          FROM (SELECT d.id, ts_delete(d.tsv, '{}'::text[]) AS tsv, ${scoredMeta} FROM (SELECT id FROM anyc UNION SELECT id FROM allc) c JOIN ${docs} d ON d.id = c.id OFFSET 0) d, q),
      top AS ((SELECT id FROM scored ORDER BY score DESC, path LIMIT ${k})
              UNION
              (SELECT id FROM scored WHERE holds_all ORDER BY score DESC, path LIMIT ${limit}))
      SELECT d.id, d.score, ${snippets ? sql`d.path` : sql`d.path, d.producer, d.title, d.tags, d.updated_at`}, 0 AS seq, '' AS snippet,
             ts_delete(d.tsv, tsvector_to_array(ts_delete(d.tsv, ARRAY(SELECT lexeme FROM ql))))::text AS tsv,
             CASE WHEN d.id = (SELECT min(id) FROM top) THEN (SELECT json_agg(json_build_array(ql.i, ql.lexeme, ql.positions)) FROM ql) END AS clause_lexemes
        FROM top t JOIN scored d ON d.id = t.id`;
    if (rows.length === 0) return [];
    const shapes = clauseShapes(parts.length, rows.find((r) => r.clause_lexemes !== null)?.clause_lexemes ?? []);
    const lexemes = [...new Set(shapes.flatMap((shape) => shape.map((l) => l.lexeme)))];
    const weights = clauseWeights(query);
    const scored = rows.map((r) => {
      const { held, occurrences } = clausesHeld(shapes, tsvEntries(r.tsv, lexemes));
      const coverage = queryCoverage(weights, held);
      return { ...r, coverage, score: anyScore(clauseScore(occurrences), coverage, closeness(occurrences)) };
    });
    const ranked = scored
      .filter((r) => r.coverage > 0)
      .sort(byScore)
      .slice(0, limit);
    if (!snippets || ranked.length === 0) return ranked.map(rowHit);
    const marked = await sql<(ChunkRow & Omit<HitRow, "seq" | "score" | "snippet"> & { id: string })[]>`
      WITH ${this.queries(parts, "OR", sql)}
      SELECT d.id, ${meta}, b.seq, b.body, b.at
        FROM ${docs} d, q, ${this.bestChunk(sql`d.id`, parts, sql)}
       WHERE d.id = ANY(${ranked.map((r) => r.id)}::bigint[])`;
    const texts = await this.chunkSnippets(marked);
    const byId = new Map(marked.map((m, i) => [m.id, { ...m, snippet: texts[i]! }]));
    // A document always has a chunk; one deleted between the two statements is no hit any more.
    return ranked.flatMap((r) => {
      const m = byId.get(r.id);
      return m ? [rowHit({ ...r, ...m, score: r.score, coverage: r.coverage })] : [];
    });
  }

  /**
   * Each best chunk's snippet: the words where the query's lexemes stand marked (their
   * positions counted as to_tsvector counted them: a word the parser may split is looked up in
   * the lexicon, learned first when it is new), cut as the SQLite store cuts one (snippet.ts).
   */
  private async chunkSnippets(rows: ChunkRow[]): Promise<string[]> {
    const unknown = new Set<string>();
    for (const r of rows) if (r.at?.length) for (const w of wordsMaybeSplit(r.body)) if (this.lexicon.tokens(w) === undefined) unknown.add(w);
    await this.lexicon.learn(this.sql, unknown);
    const tokens = (word: string) => this.lexicon.tokens(word);
    return rows.map((r) => markedSnippet(markPositions(r.body, r.at ?? [], tokens)));
  }

  /**
   * The title tier from index_title_words: the first `total` notes (in doc_id order, as a GIN
   * bitmap would give them) holding one of the query's lexemes (ql) in the title, from the
   * first `each` of each lexeme's.
   */
  private titleTier(sql: Sql, each: number, total: number): PendingQuery<Row[]> {
    return sql`(SELECT DISTINCT w.id FROM (SELECT DISTINCT lexeme FROM ql) l,
                     LATERAL (SELECT doc_id AS id FROM ${sql.unsafe(this.titleWords)} WHERE lexeme = l.lexeme ORDER BY doc_id LIMIT ${each}) w
                 ORDER BY w.id LIMIT ${total})`;
  }

  /** A document's text score for `q`: ts_rank, title ten times body. */
  private rankOf(q: PendingQuery<Row[]>, sql: Sql = this.sql): PendingQuery<Row[]> {
    return sql`ts_rank(${RANK_WEIGHTS}::float4[], d.tsv, ${q}, ${RANK_NORMALIZATION})`;
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

  private async insertLinks(tx: TransactionSql, rows: { docId: string; link: DocLink }[]): Promise<void> {
    if (rows.length === 0) return;
    await tx`
      INSERT INTO ${tx.unsafe(this.links)} (doc_id, kind, target, name)
      SELECT u.doc_id, u.kind, u.target, u.name
        FROM unnest(${rows.map((r) => r.docId)}::bigint[], ${rows.map((r) => r.link.kind)}::text[],
                    ${rows.map((r) => clean(r.link.target))}::text[], ${rows.map((r) => clean(r.link.name))}::text[]) AS u(doc_id, kind, target, name)
      ON CONFLICT DO NOTHING`;
  }

  /** The CTE `q`: q.q the clauses joined by `op`, q.any joined by OR. */
  private queries(parts: string[][], op: "AND" | "OR", sql: Sql = this.sql): PendingQuery<Row[]> {
    const phrases = parts.map((words) => sql`phraseto_tsquery('english', ${words.join(" ")})`);
    const join = (how: "AND" | "OR") => phrases.reduce((a, b) => (how === "AND" ? sql`${a} && ${b}` : sql`${a} || ${b}`));
    // Computed once: a statement that reads it once (the snippets') would otherwise have it
    // inlined, and every chunk it ranks would parse the words into tsqueries again.
    return sql`q AS MATERIALIZED (SELECT ${join(op)} AS q, ${join("OR")} AS any)`;
  }

  /**
   * LATERAL `b` (seq, body, at): document `docId`'s best chunk — one matching q.q when there
   * is one, else one matching q.any, then the best ranked, then the first — and where the
   * lexemes of the clauses `parts` stand in its text (`at`: positions counted in the body's
   * words, for markPositions; the chunk's tsvector holds the title's words first, weight A,
   * and the body's after them).
   */
  private bestChunk(docId: PendingQuery<Row[]>, parts: string[][], sql: Sql = this.sql): PendingQuery<Row[]> {
    return sql`LATERAL (
               SELECT s.seq, s.body,
                      (SELECT array_agg(p.pos - coalesce((SELECT max(a) FROM unnest(ts_filter(s.tsv, '{a}')) t, unnest(t.positions) a), 0))
                         FROM unnest(s.tsv) u, unnest(u.positions, u.weights) AS p(pos, w)
                        WHERE p.w <> 'A' AND u.lexeme = ANY(ARRAY(SELECT t.lexeme FROM unnest(${parts.map((p) => p.join(" "))}::text[]) AS x(words),
                                                                              unnest(to_tsvector('english', x.words)) AS t))) AS at
                 FROM (SELECT c.seq, c.body, c.tsv
                         FROM ${sql.unsafe(this.chunks)} c
                        WHERE c.doc_id = ${docId}
                        ORDER BY c.tsv @@ q.q DESC, c.tsv @@ q.any DESC,
                                 ts_rank(${RANK_WEIGHTS}::float4[], c.tsv, CASE WHEN c.tsv @@ q.q THEN q.q ELSE q.any END, ${RANK_NORMALIZATION}) DESC, c.seq
                        LIMIT 1) s
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

/** Documents lexed or encoded between two turns of the event loop (see yieldToIO). */
const YIELD_DOCS = 16;

/**
 * Lets the event loop run. Two batches are written at once, and the one in Postgres moves on
 * (its next statement, its COPY's next piece) only when the router's thread is free: a batch
 * lexed and encoded in turns between them keeps the other one going, where one long run over
 * every document would leave it waiting.
 */
function yieldToIO(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Separators of textArray(): control characters, which no lexed text or searchable words hold. */
const ITEM = "\x1e";
const NULL_ITEM = "\x1f";

/**
 * A text[] parameter, sent as one text split by the server (string_to_array scans for one
 * byte; the array literal the client otherwise sends is parsed character by character, a
 * large part of a batch's server time), or as an array when an item holds a separator.
 */
function textArray(tx: TransactionSql, values: (string | null)[]): PendingQuery<Row[]> {
  // One item joined is itself, and string_to_array('') is no item at all: an array then.
  if (values.length < 2 || values.some((v) => v !== null && (v.includes(ITEM) || v.includes(NULL_ITEM)))) return tx`${values}::text[]`;
  return tx`string_to_array(${values.map((v) => v ?? NULL_ITEM).join(ITEM)}, ${ITEM}, ${NULL_ITEM})`;
}

/** Postgres text cannot hold NUL. */
function clean(text: string): string {
  return text.replaceAll("\0", "");
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** A hit's best chunk: its text and where the query's lexemes stand in its words. */
interface ChunkRow {
  seq: number;
  body: string;
  at: number[] | null;
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
    coverage: r.coverage === undefined ? undefined : Number(r.coverage),
    snippet: r.snippet,
  });
}

/** Best first, then by path (a stable order for equal scores). */
function byScore(a: { score: number; path: string }, b: { score: number; path: string }): number {
  return Number(b.score) - Number(a.score) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

/** bm25's term-frequency saturation: a clause held once scores 1, held often at most K1 + 1. */
const K1 = 1.2;
/** A title occurrence counts as this many body ones (the ten-to-one of RANK_WEIGHTS and of SQLite's bm25). */
const TITLE_WEIGHT = 10;

/**
 * A "match any" candidate's text score, from where it holds each clause: per clause, its
 * occurrences (a title one counting TITLE_WEIGHT) saturated as bm25 does, summed. ts_rank
 * chose the candidates; it is not used here because it lets one word held in a title outweigh
 * two words held in the body, where bm25's saturation ranks the note holding more words higher.
 */
function clauseScore(occurrences: Occurrence[]): number {
  const tf = new Map<number, number>();
  for (const o of occurrences) tf.set(o.clause, (tf.get(o.clause) ?? 0) + (o.field === 0 ? TITLE_WEIGHT : 1));
  let score = 0;
  for (const x of tf.values()) score += (x * (K1 + 1)) / (x + K1);
  return score;
}

/**
 * The entries of `lexemes` in a tsvector's text ('lexeme':1A,5 …, sorted by lexeme): each one's
 * positions and weights (D where the text gives none), as unnest(tsvector) gives them. Read from
 * the text because unnest builds a row and two arrays for every lexeme of the document.
 */
export function tsvEntries(text: string, lexemes: string[]): [string, number[], string[]][] {
  const out: [string, number[], string[]][] = [];
  for (const lexeme of lexemes) {
    const key = tsvKey(lexeme);
    let at = text.startsWith(key) ? 0 : text.indexOf(` ${key}`);
    if (at === -1) continue;
    if (at > 0) at++;
    const positions: number[] = [];
    const weights: string[] = [];
    let pos = 0;
    for (let i = at + key.length; ; i++) {
      const c = i < text.length ? text.charCodeAt(i) : 32;
      if (c >= 48 && c <= 57) pos = pos * 10 + c - 48;
      else if (c >= 65 && c <= 68) weights.push(text[i]!);
      else {
        if (weights.length === positions.length) weights.push("D");
        positions.push(pos);
        pos = 0;
        if (c !== 44) break; // ","
      }
    }
    out.push([lexeme, positions, weights]);
  }
  return out;
}

/** How a tsvector's text opens `lexeme`'s entry: quoted (quotes and backslashes doubled), then ":". */
function tsvKey(lexeme: string): string {
  return `'${lexeme.replaceAll("\\", "\\\\").replaceAll("'", "''")}':`;
}

/** A clause as lexemes at offsets from its first (a phrase's stop words keep their places). */
type ClauseShape = { lexeme: string; offset: number }[];

/** Each clause's shape, from to_tsvector of its words: [clause number (1-based), lexeme, positions]. */
function clauseShapes(count: number, rows: [number, string, number[]][]): ClauseShape[] {
  const at: { lexeme: string; pos: number }[][] = Array.from({ length: count }, () => []);
  for (const [i, lexeme, positions] of rows) for (const pos of positions) at[i - 1]?.push({ lexeme, pos });
  return at.map((list) => {
    list.sort((a, b) => a.pos - b.pos);
    const first = list[0]?.pos ?? 0;
    return list.map((l) => ({ lexeme: l.lexeme, offset: l.pos - first }));
  });
}

/**
 * Which clauses a document holds and where, from its tsvector's entries for the query's
 * lexemes ([lexeme, positions, weights]): a word wherever its lexeme stands, a phrase where
 * its lexemes stand at its offsets. Weight A is the title, anything else the body.
 */
function clausesHeld(shapes: ClauseShape[], entries: [string, number[], string[]][]): { held: boolean[]; occurrences: Occurrence[] } {
  const positions = new Map<string, Map<number, string>>();
  for (const [lexeme, pos, weights] of entries) positions.set(lexeme, new Map(pos.map((p, i) => [p, weights[i] ?? "D"])));
  const held = shapes.map(() => false);
  const occurrences: Occurrence[] = [];
  shapes.forEach((shape, clause) => {
    const [first, ...rest] = shape;
    if (!first) return;
    const len = (shape[shape.length - 1]?.offset ?? 0) + 1;
    for (const [start, weight] of positions.get(first.lexeme) ?? []) {
      if (!rest.every((l) => positions.get(l.lexeme)?.has(start + l.offset))) continue;
      held[clause] = true;
      occurrences.push({ field: weight === "A" ? 0 : 1, at: start, clause, len });
    }
  });
  return { held, occurrences };
}

function noteMeta(r: MetaRow): NoteMeta {
  return { path: r.path, producer: r.producer, title: r.title, tags: r.tags, updatedAt: r.updated_at, hash: r.hash };
}
