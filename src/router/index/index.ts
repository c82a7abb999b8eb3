// Opens the search index: main.ts calls openIndexStore() once with the config (Postgres when
// DATABASE_URL is set, else SQLite); everything else takes the IndexStore it returns.
import { openPostgresIndex } from "./postgres.ts";
import { openSqliteIndex } from "./sqlite/store.ts";
import type { FirstPass, IndexStore } from "./types.ts";
import { withConnectionErrors } from "./unavailable.ts";

export interface IndexStoreConfig {
  /** DATABASE_URL: Postgres when set, else the embedded SQLite file under dataDir. */
  databaseUrl?: string;
  dataDir: string;
  /** EMBEDDINGS_DIM: vectors (sqlite-vec / pgvector) when set. */
  embeddingDim?: number;
  /** Postgres schema for the index's tables; default public. */
  schema?: string;
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
  const { databaseUrl, dataDir, embeddingDim, schema, backgroundCheckpoints, holdCommitMs, firstPass } = config;
  return databaseUrl
    ? openPostgresIndex({ url: databaseUrl, embeddingDim, schema }).then(withConnectionErrors)
    : openSqliteIndex({
        dataDir,
        embeddingDim,
        backgroundCheckpoints,
        holdCommitMs,
        champions: firstPass === "off" ? { depth: 0 } : undefined,
        backgroundListBuilds: firstPass === "background",
      });
}
