// Applies the Postgres index migrations (migrations/*.sql, in order) and, when embeddings are
// configured, the pgvector column. Idempotent and safe when several processes start at once:
// everything runs on one connection holding a per-schema advisory lock.
import type { ReservedSql, Sql } from "postgres";
import { DimensionMismatchError, VectorsUnavailableError } from "./errors.ts";
import { MIGRATIONS } from "./migrations/index.ts";

export interface MigrateOptions {
  /** The schema holding the index's tables (created if missing). Default "public". */
  schema?: string;
  /** Embedding dimension: adds (or checks) the pgvector column. */
  embeddingDim?: number;
}

export interface MigrateResult {
  /** Versions this call applied (empty when the schema was up to date). */
  applied: string[];
  /** Schema of the pgvector extension, when vectors are configured. */
  vectorSchema?: string;
}

/**
 * Indexes a first build drops and makes once at its end (bulkLoad), each sorted in one pass
 * instead of updated a row at a time; migrate() puts back any that a build stopped before
 * making.
 */
const DEFERRED_INDEXES = [
  // Largest first: bulkLoad builds them side by side, and a long one started last would end alone.
  { name: "index_docs_tsv", table: "index_docs", def: "USING gin (tsv)" },
  { name: "index_docs_salient", table: "index_docs", def: "USING gin (salient)" },
  // A search's title tier (migrations/0006_title_words.sql), in (lexeme, doc_id) order.
  { name: "index_title_words_lexeme", table: "index_title_words", def: "(lexeme, doc_id)" },
  { name: "index_docs_producer", table: "index_docs", def: "(producer, updated_at DESC)" },
  { name: "index_docs_tag_keys", table: "index_docs", def: "USING gin (tag_keys)" },
  { name: "index_docs_name", table: "index_docs", def: "(name)" },
  { name: "index_docs_updated", table: "index_docs", def: "(updated_at DESC, path DESC)" },
  // A producer's rows in byte order, whatever the database's collation: a refresh reads the index a page at a time beside the walk.
  { name: "index_docs_producer_path", table: "index_docs", def: '(producer, path COLLATE "C")' },
  { name: "index_links_name", table: "index_links", def: "(name)" },
  // A hit's chunks, read by document (migrations/0001_init.sql made it; the same definition).
  { name: "index_chunks_doc", table: "index_chunks", def: "(doc_id, seq)" },
] as const;

/** The CREATE INDEX statements of the deferred indexes, IF NOT EXISTS. */
export function indexStatements(schema: string): string[] {
  return deferredIndexes(schema).map((i) => i.statement);
}

/** The deferred indexes' CREATE INDEX statements (IF NOT EXISTS), largest first, each with its table. */
export function deferredIndexes(schema: string): { table: string; statement: string }[] {
  const s = quoteSchema(schema);
  return DEFERRED_INDEXES.map((i) => ({ table: `${s}.${i.table}`, statement: `CREATE INDEX IF NOT EXISTS ${i.name} ON ${s}.${i.table} ${i.def}` }));
}

/** DROP INDEX statements for what bulkLoad defers. */
export function dropIndexStatements(schema: string): string[] {
  const s = quoteSchema(schema);
  return DEFERRED_INDEXES.map((i) => `DROP INDEX IF EXISTS ${s}.${i.name}`);
}

/** pgvector's HNSW index takes at most 2,000 dimensions; beyond that searches scan. */
const HNSW_MAX_DIM = 2_000;
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A schema name as an SQL identifier; only plain names are accepted, so quoting is exact. */
export function quoteSchema(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) throw new RangeError(`schema must be a plain SQL name (letters, digits, _), got "${schema}"`);
  return `"${schema}"`;
}

export async function migrate(sql: Sql, opts: MigrateOptions = {}): Promise<MigrateResult> {
  const schema = opts.schema ?? "public";
  const s = quoteSchema(schema);
  const conn = await sql.reserve();
  try {
    await conn`SELECT pg_advisory_lock(hashtext(${`brain-stack index migrations ${schema}`}))`;
    try {
      await conn.unsafe(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await conn.unsafe(`CREATE TABLE IF NOT EXISTS ${s}.index_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      const done = new Set((await conn.unsafe<{ version: string }[]>(`SELECT version FROM ${s}.index_migrations`)).map((r) => r.version));
      const applied: string[] = [];
      for (const m of MIGRATIONS) {
        if (done.has(m.version)) continue;
        await inTransaction(conn, async () => {
          await conn.unsafe(`SET LOCAL search_path TO ${s}, public`);
          await conn.unsafe(m.sql).simple();
          await conn.unsafe(`INSERT INTO ${s}.index_migrations (version) VALUES ($1)`, [m.version]);
        });
        applied.push(m.version);
      }
      const vectorSchema = opts.embeddingDim === undefined ? undefined : await ensureVectorColumn(conn, schema, opts.embeddingDim);
      // A first build that stopped before it made its deferred indexes (bulkLoad).
      for (const statement of indexStatements(schema)) await conn.unsafe(statement);
      await preferLz4(conn, schema);
      return { applied, vectorSchema };
    } finally {
      await conn`SELECT pg_advisory_unlock(hashtext(${`brain-stack index migrations ${schema}`}))`;
    }
  } finally {
    conn.release();
  }
}

/** The stored embedding dimension of a schema's index, or undefined when it has no vectors. */
export async function storedDimension(sql: Sql | ReservedSql, schema: string): Promise<number | undefined> {
  const [row] = await sql<{ dim: number }[]>`
    SELECT a.atttypmod AS dim FROM pg_attribute a
     WHERE a.attrelid = to_regclass(${`${quoteSchema(schema)}.index_chunks`})
       AND a.attname = 'embedding' AND NOT a.attisdropped`;
  return row ? row.dim : undefined;
}

async function ensureVectorColumn(conn: ReservedSql, schema: string, dim: number): Promise<string> {
  if (!Number.isInteger(dim) || dim < 1 || dim > 16_000) {
    throw new RangeError(`embedding dimension must be an integer from 1 to 16000 (pgvector's limit), got ${dim}`);
  }
  const s = quoteSchema(schema);
  const stored = await storedDimension(conn, schema);
  if (stored !== undefined && stored !== dim) {
    throw new DimensionMismatchError(
      stored,
      dim,
      `set EMBEDDINGS_DIM=${stored} (the model the index was built with), or run ALTER TABLE ${s}.index_chunks DROP COLUMN embedding and re-index`,
    );
  }
  const vectorSchema = await vectorExtensionSchema(conn);
  if (stored === undefined) {
    const v = quoteSchema(vectorSchema);
    await inTransaction(conn, async () => {
      await conn.unsafe(`ALTER TABLE ${s}.index_chunks ADD COLUMN embedding ${v}.vector(${dim})`);
      if (dim <= HNSW_MAX_DIM) {
        await conn.unsafe(`CREATE INDEX index_chunks_embedding ON ${s}.index_chunks USING hnsw (embedding ${v}.vector_cosine_ops)`);
      }
    });
  }
  return vectorSchema;
}

/**
 * The text, tsvector and salient-lexeme columns compressed with lz4 where the server has it (a build option):
 * several times faster than the default pglz to compress as notes are written and to
 * decompress as a search ranks them. Rows written before keep theirs; both read the same.
 */
async function preferLz4(conn: ReservedSql, schema: string): Promise<void> {
  const [lz4] = await conn`SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)`;
  if (!lz4) return;
  const s = quoteSchema(schema);
  await conn.unsafe(`ALTER TABLE ${s}.index_docs ALTER COLUMN tsv SET COMPRESSION lz4, ALTER COLUMN salient SET COMPRESSION lz4`);
  await conn.unsafe(`ALTER TABLE ${s}.index_chunks ALTER COLUMN body SET COMPRESSION lz4, ALTER COLUMN tsv SET COMPRESSION lz4`);
}

/** Where pgvector lives, creating it (in public) when the server has it but the database does not. */
async function vectorExtensionSchema(conn: ReservedSql): Promise<string> {
  const find = () => conn<{ schema: string }[]>`
    SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'`;
  let [row] = await find();
  if (!row) {
    const [available] = await conn`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`;
    if (!available) {
      throw new VectorsUnavailableError(
        "embeddings are configured (EMBEDDINGS_DIM) but this PostgreSQL server has no pgvector extension: install pgvector, or unset EMBEDDINGS_DIM to search by full text only",
      );
    }
    // Another schema's migrator may create it at the same moment; then theirs is as good.
    const created = await conn.unsafe("CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public").catch((err: Error) => err);
    [row] = await find();
    if (!row) throw created;
  }
  return row!.schema;
}

async function inTransaction(conn: ReservedSql, body: () => Promise<void>): Promise<void> {
  await conn.unsafe("BEGIN");
  try {
    await body();
    await conn.unsafe("COMMIT");
  } catch (err) {
    await conn.unsafe("ROLLBACK");
    throw err;
  }
}
