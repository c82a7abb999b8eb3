-- The salient entries compared as bytes (COLLATE "C"), as index_title_words' lexemes already
-- are: the salient GIN index sorts every entry of every note when a first build makes it, and
-- under the database's own collation (C.UTF-8, en_US…) each comparison goes through the C
-- library's strcoll. Entries are ASCII-prefixed lexemes matched only by equality (&&, @>,
-- starts_with), which no deterministic collation changes: searches find the same notes. The
-- table is not rewritten; the salient index is rebuilt.
ALTER TABLE index_docs ALTER COLUMN salient TYPE text[] COLLATE "C";
