-- Links between notes (links.ts) and each document's name (what wikilinks name), and a listing
-- index for GET /notes (newest first). A NULL name marks a document whose links were never
-- extracted: mtime_ms -1 makes the next refresh read every file again, and upsert then records
-- the links of an unchanged document without re-indexing its text.
ALTER TABLE index_docs ADD COLUMN name text;
CREATE INDEX index_docs_name ON index_docs (name);
CREATE INDEX index_docs_updated ON index_docs (updated_at DESC, path DESC);

CREATE TABLE index_links (
  doc_id bigint NOT NULL REFERENCES index_docs (id) ON DELETE CASCADE,
  kind text NOT NULL, -- wiki | path
  target text NOT NULL,
  name text NOT NULL,
  PRIMARY KEY (doc_id, kind, target)
);
CREATE INDEX index_links_name ON index_links (name);

UPDATE index_docs SET mtime_ms = -1;
