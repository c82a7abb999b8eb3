// The SQLite index's schema, one entry per version, applied in order under PRAGMA user_version.

/** FTS5's rank: bm25 with per-column weights (title, body), a title match ten times a body match. */
const BM25_RANK = "bm25(10.0, 1.0)";

/** filterToken() (sqlite-text.ts) in SQL, after its U+E000 and letter: hex with A–F spelled g h j k m n. */
const filterHex = (x: string) =>
  `replace(replace(replace(replace(replace(replace(hex(${x}), 'A', 'g'), 'B', 'h'), 'C', 'j'), 'D', 'k'), 'E', 'm'), 'F', 'n')`;

export const SCHEMA: string[] = [
  `CREATE TABLE index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE docs (
     id INTEGER PRIMARY KEY,
     path TEXT NOT NULL UNIQUE,
     producer TEXT NOT NULL,
     title TEXT NOT NULL,
     tags TEXT NOT NULL,            -- JSON array, as given
     updated_at INTEGER NOT NULL,   -- ms since the epoch
     hash TEXT NOT NULL,
     mtime_ms REAL NOT NULL
   );
   CREATE INDEX docs_producer ON docs (producer, updated_at);
   CREATE TABLE doc_tags (
     tag TEXT NOT NULL,             -- lower-cased, for case-insensitive filters
     doc_id INTEGER NOT NULL REFERENCES docs (id) ON DELETE CASCADE,
     PRIMARY KEY (tag, doc_id)
   ) WITHOUT ROWID;
   CREATE INDEX doc_tags_doc ON doc_tags (doc_id);
   CREATE TABLE chunks (
     id INTEGER PRIMARY KEY,
     doc_id INTEGER NOT NULL REFERENCES docs (id) ON DELETE CASCADE,
     seq INTEGER NOT NULL,
     title TEXT NOT NULL,           -- the document's, so every chunk ranks on it
     body TEXT NOT NULL
   );
   CREATE INDEX chunks_doc ON chunks (doc_id, seq);
   CREATE VIRTUAL TABLE chunks_fts USING fts5 (
     title, body, content = 'chunks', content_rowid = 'id',
     tokenize = 'porter unicode61 remove_diacritics 2'
   );
   CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
     INSERT INTO chunks_fts (rowid, title, body) VALUES (new.id, new.title, new.body);
   END;
   CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
     INSERT INTO chunks_fts (chunks_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
   END;
   CREATE TABLE chunk_vectors (
     chunk_id INTEGER PRIMARY KEY REFERENCES chunks (id) ON DELETE CASCADE,
     embedding BLOB NOT NULL        -- float32, little-endian
   );`,
  // v2: FTS5's own rank column is the weighted bm25, so ORDER BY rank LIMIT takes its fast
  // path; fingerprints() reads a covering index instead of 100k table rows.
  `INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('rank', '${BM25_RANK}');
   CREATE INDEX docs_fingerprint ON docs (producer, path, hash, mtime_ms);`,
  // v3: one full-text row per document instead of one per chunk. docs_text (a view) is each
  // document's title, its chunks' text joined, and its producer and tags as opaque tokens
  // (filterToken() in sqlite-text.ts); docs_fts indexes it as external content. A search then
  // scores each matching document once, not every matching chunk before de-duplicating; its
  // tag and producer filters narrow the MATCH inside FTS5 before anything is scored; and a
  // hit's best chunk is found in the highlighted text of its document. chunks_fts goes: every
  // note was indexed twice over (its title once per chunk).
  `DROP TRIGGER chunks_ai;
   DROP TRIGGER chunks_ad;
   DROP TABLE chunks_fts;
   CREATE VIEW docs_text (id, title, body, filters) AS
     SELECT d.id, d.title,
            coalesce((SELECT group_concat(c.body, char(10) || char(10) ORDER BY c.seq) FROM chunks c WHERE c.doc_id = d.id), ''),
            char(57344) || 'p' || ${filterHex("d.producer")} ||
              coalesce((SELECT group_concat(' ' || char(57344) || 't' || ${filterHex("t.tag")}, '' ORDER BY t.tag)
                          FROM doc_tags t WHERE t.doc_id = d.id), '')
       FROM docs d;
   CREATE VIRTUAL TABLE docs_fts USING fts5 (
     title, body, filters, content = 'docs_text', content_rowid = 'id',
     tokenize = 'porter unicode61 remove_diacritics 2'
   );
   INSERT INTO docs_fts (docs_fts) VALUES ('rebuild');`,
  // v4: links between notes (links.ts) and each document's name (what wikilinks name), a
  // listing index for GET /notes (newest first). A NULL name marks a document whose links were
  // never extracted: mtime_ms -1 makes the next refresh read every file again, and upsert then
  // records the links of an unchanged document without re-indexing its text.
  `ALTER TABLE docs ADD COLUMN name TEXT;
   CREATE INDEX docs_name ON docs (name);
   CREATE INDEX docs_updated ON docs (updated_at, path);
   CREATE TABLE doc_links (
     doc_id INTEGER NOT NULL REFERENCES docs (id) ON DELETE CASCADE,
     kind TEXT NOT NULL,            -- wiki | path
     target TEXT NOT NULL,
     name TEXT NOT NULL,
     PRIMARY KEY (doc_id, kind, target)
   ) WITHOUT ROWID;
   CREATE INDEX doc_links_name ON doc_links (name);
   UPDATE docs SET mtime_ms = -1;`,
];
