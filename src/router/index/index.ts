// The search index's public surface. main.ts calls openIndexStore() once with the config;
// everything else takes the IndexStore it returns.
import { openPostgresIndex } from "./postgres.ts";
import { openSqliteIndex } from "./sqlite.ts";
import type { IndexStore } from "./types.ts";

export interface IndexStoreConfig {
  /** DATABASE_URL: Postgres when set, else the embedded SQLite file under dataDir. */
  databaseUrl?: string;
  dataDir: string;
  /** EMBEDDINGS_DIM: vectors (sqlite-vec / pgvector) when set. */
  embeddingDim?: number;
  /** Postgres schema for the index's tables; default public. */
  schema?: string;
}

export function openIndexStore(config: IndexStoreConfig): Promise<IndexStore> {
  const { databaseUrl, dataDir, embeddingDim, schema } = config;
  return databaseUrl ? openPostgresIndex({ url: databaseUrl, embeddingDim, schema }) : openSqliteIndex({ dataDir, embeddingDim });
}

export { chunkDocument, chunkText, embeddingInputs, TARGET_CHUNK_CHARS, type Chunk } from "./chunk.ts";
export { documentFromFile, hashContent, splitFrontmatter, deriveTitle, frontmatterTags, type FileInput } from "./document.ts";
export { DimensionMismatchError, QueryError, VectorsUnavailableError } from "./errors.ts";
export { migrate, type MigrateOptions, type MigrateResult } from "./migrate.ts";
export { openPostgresIndex, PostgresIndexStore, type PostgresIndexOptions } from "./postgres.ts";
export { clauses, hasText, parseQuery, MAX_QUERY_WORDS, type ParsedQuery } from "./query.ts";
export { refreshFolder, MAX_INDEXED_FILE_BYTES, type RefreshCounts, type RefreshOptions } from "./refresh.ts";
export { openSqliteIndex, SqliteIndexStore, SQLITE_INDEX_FILE, type SqliteIndexOptions } from "./sqlite.ts";
export * from "./types.ts";
