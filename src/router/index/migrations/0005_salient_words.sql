-- The salient column's body entries become "s:" entries: each lexeme a document holds
-- strongly, in its title or at least twice in its body ("t:" entries stay: its title's). A
-- search then finds the notes holding every query word strongly with one containment (@>) on
-- the salient index, instead of intersecting each word's every match in the tsv index. The
-- tiers keep their meaning: "s:" and not "t:" is what "b:" and not "t:" was.
CREATE OR REPLACE FUNCTION salient_lexemes(title tsvector, body tsvector) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT ARRAY(SELECT 't:' || lexeme FROM unnest(title))
            || ARRAY(SELECT 's:' || lexeme FROM unnest(title) UNION SELECT 's:' || lexeme FROM unnest(body) WHERE cardinality(positions) >= 2) $$;

UPDATE index_docs SET salient = salient_lexemes(ts_filter(tsv, '{a}'), ts_filter(tsv, '{b,c,d}'));
