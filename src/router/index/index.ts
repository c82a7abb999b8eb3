// The index module's public surface. main.ts calls openIndexStore() once with the config
// (Postgres when DATABASE_URL is set, else SQLite); everything else takes the IndexStore it
// returns. Re-exported here, what a caller needs around it: a file turned into a document (and
// the chunks and links an upsert makes of it), a folder brought in step with the index, a query
// parsed for IndexStore.search, and the types. Code outside the router (scripts/bench) imports
// the index through this module only (.dependency-cruiser.cjs).
import { openPostgresIndex } from "./postgres.ts";
import { openSqliteIndex } from "./sqlite/store.ts";
import type { FirstPass, IndexStore } from "./types.ts";
import { withConnectionErrors } from "./unavailable.ts";

export { chunkDocument } from "./chunk.ts";
export { documentFromFile, type FileInput, frontmatterTags, splitFrontmatter } from "./document.ts";
export { type DocLink, extractLinks } from "./links.ts";
export { parseQuery } from "./query.ts";
export { type RefreshCounts, type RefreshOptions, refreshFolder } from "./refresh.ts";
export { STOP_WORDS } from "./stopwords.ts";
export type { IndexDoc, IndexStore, ParsedQuery, SearchHit } from "./types.ts";

export interface IndexStoreConfig {
  /** DATABASE_URL: Postgres when set, else the embedded SQLite file under dataDir. */
  databaseUrl?: string;
  dataDir: string;
  /** EMBEDDINGS_DIM: vectors (sqlite-vec / pgvector) when set. */
  embeddingDim?: number;
  /** Postgres schema for the index's tables; default public. */
  schema?: string;
  /** Postgres: the connection pool's size; default 10. */
  poolSize?: number;
  /** SQLite: checkpoint the WAL in a worker thread (the router's index; see sqlite/accelerators/checkpoints). */
  backgroundCheckpoints?: boolean;
  /** SQLite: hold a write transaction open this long for the writes that follow (INDEX_COMMIT_HOLD_MS). */
  holdCommitMs?: number;
  /**
   * SQLite: the searches' first pass (champion lists): built at a clause's first use in the
   * calling thread ("inline", the default), in a worker thread ("background", the router's), or
   * none ("off": every search runs the plain ranking query).
   */
  firstPass?: FirstPass;
}

export function openIndexStore(config: IndexStoreConfig): Promise<IndexStore> {
  const { databaseUrl, dataDir, embeddingDim, schema, poolSize, backgroundCheckpoints, holdCommitMs, firstPass } = config;
  return databaseUrl
    ? openPostgresIndex({ url: databaseUrl, embeddingDim, schema, max: poolSize }).then(withConnectionErrors)
    : openSqliteIndex({
        dataDir,
        embeddingDim,
        backgroundCheckpoints,
        holdCommitMs,
        champions: firstPass === "off" ? { depth: 0 } : undefined,
        backgroundListBuilds: firstPass === "background",
      });
}
