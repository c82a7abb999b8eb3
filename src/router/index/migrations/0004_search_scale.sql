-- A document's tsvector is its title's joined with its chunks' (tsvector_concat shifts each
-- one's positions past the last), so a write parses its text once, not once for the document
-- and again for its chunks.
CREATE AGGREGATE tsvector_cat (tsvector) (SFUNC = pg_catalog.tsvector_concat, STYPE = tsvector, INITCOND = '');

-- The lexemes a document holds strongly, for a search's first candidates: "t:" each lexeme of
-- its title, "b:" each body lexeme it holds at least twice. ts_rank ranks a title word ten
-- times a body word, and a repeated word above a passing mention, so the best matches of a
-- common word are among these. GIN-indexed (migrate.ts makes the index).
CREATE FUNCTION salient_lexemes(title tsvector, body tsvector) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT ARRAY(SELECT 't:' || lexeme FROM unnest(title)) || ARRAY(SELECT 'b:' || lexeme FROM unnest(body) WHERE cardinality(positions) >= 2) $$;

ALTER TABLE index_docs ADD COLUMN salient text[] NOT NULL DEFAULT '{}';
UPDATE index_docs SET salient = salient_lexemes(ts_filter(tsv, '{a}'), ts_filter(tsv, '{b,c,d}'));
