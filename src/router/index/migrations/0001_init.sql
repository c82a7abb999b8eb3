-- The search index: one row per document, its chunks with a weighted tsvector
-- (title weight A, body weight B) under a GIN index. Unqualified names: migrate() runs
-- each file with search_path set to the index's schema.
CREATE TABLE index_docs (
  id bigserial PRIMARY KEY,
  path text NOT NULL UNIQUE,
  producer text NOT NULL,
  title text NOT NULL,
  tags text[] NOT NULL DEFAULT '{}',
  tag_keys text[] NOT NULL DEFAULT '{}', -- lower-cased tags, for case-insensitive filters
  updated_at timestamptz NOT NULL,
  hash text NOT NULL,
  mtime_ms double precision NOT NULL
);
CREATE INDEX index_docs_producer ON index_docs (producer, updated_at DESC);
CREATE INDEX index_docs_tag_keys ON index_docs USING gin (tag_keys);

CREATE TABLE index_chunks (
  id bigserial PRIMARY KEY,
  doc_id bigint NOT NULL REFERENCES index_docs (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  body text NOT NULL,
  tsv tsvector NOT NULL
);
CREATE INDEX index_chunks_doc ON index_chunks (doc_id, seq);
CREATE INDEX index_chunks_tsv ON index_chunks USING gin (tsv);
