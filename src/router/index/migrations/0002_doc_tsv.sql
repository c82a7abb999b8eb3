-- Ranking at document level: one tsvector per document (title weight A, the chunks' words
-- weight B) under GIN, so a search ranks each matching document once instead of every
-- matching chunk before de-duplicating, as the SQLite index does (its docs_fts). Chunks keep
-- their own tsvector, unindexed: it picks a hit's best chunk for the snippet.
ALTER TABLE index_docs ADD COLUMN tsv tsvector;

-- Existing rows: the chunks' vectors joined (chunk 0 whole, then the body words of the
-- others), so every lexeme and weight is the one the chunks were indexed with. Only the
-- positions past the first chunk sit a title's length further on than a fresh upsert puts
-- them, which nudges ts_rank's proximity term for AND queries a little; a document's next
-- change rewrites its vector exactly.
CREATE AGGREGATE pg_temp.tsvector_cat (tsvector) (SFUNC = pg_catalog.tsvector_concat, STYPE = tsvector, INITCOND = '');
UPDATE index_docs d SET tsv = coalesce(
  (SELECT pg_temp.tsvector_cat(CASE WHEN c.seq = 0 THEN c.tsv ELSE ts_filter(c.tsv, '{b}') END ORDER BY c.seq)
     FROM index_chunks c WHERE c.doc_id = d.id),
  ''::tsvector);
DROP AGGREGATE pg_temp.tsvector_cat (tsvector);

ALTER TABLE index_docs ALTER COLUMN tsv SET NOT NULL;
CREATE INDEX index_docs_tsv ON index_docs USING gin (tsv);
DROP INDEX index_chunks_tsv;
