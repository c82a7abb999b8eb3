// What an ingest may carry besides its content (POST /ingest and the MCP ingest tool); the
// content's own limit is INGEST_MAX_BYTES (config).

/** Tags per ingest, and characters per tag. */
export const INGEST_TAGS = { max: 32, maxChars: 64 } as const;
/** Longest title, in characters. */
export const INGEST_TITLE_MAX_CHARS = 300;
/** Longest source (who sent it), in characters. */
export const INGEST_SOURCE_MAX_CHARS = 200;
