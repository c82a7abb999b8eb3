-- index_title_words: each document's title lexemes (its salient "t:" entries) as rows of a
-- b-tree on (lexeme, doc_id). A search's first candidate tier — notes holding a query word in
-- the title — reads each word's rows in doc_id order and stops at the tier's depth: it costs
-- the rows read, where a GIN bitmap reads the word's whole posting list first. Only titles: a
-- tier that intersects words (holding every one) stays on the salient GIN index, which reads
-- a sparse intersection several times faster than a merge join of b-tree rows. The b-tree
-- (index_title_words_lexeme) is one of migrate.ts's deferred indexes: made after this fills
-- the table, and after a first build's load.
CREATE TABLE IF NOT EXISTS index_title_words (lexeme text COLLATE "C" NOT NULL, doc_id bigint NOT NULL);
INSERT INTO index_title_words (lexeme, doc_id)
SELECT DISTINCT substr(e, 3), d.id FROM index_docs d, unnest(d.salient) AS e WHERE e LIKE 't:%';
