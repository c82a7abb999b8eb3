// The SQLite index's schema, one entry per version, applied in order under PRAGMA user_version
// (a step SQL cannot express alone is a function of the open database).
import type { Database } from "bun:sqlite";

/** FTS5's rank: bm25 with per-column weights (title, body), a title match ten times a body match. */
const BM25_RANK = "bm25(10.0, 1.0)";

/** filterToken() (text.ts) in SQL, after its U+E000 and letter: hex with A–F spelled g h j k m n. */
const filterHex = (x: string) => `replace(replace(replace(replace(replace(replace(hex(${x}), 'A', 'g'), 'B', 'h'), 'C', 'j'), 'D', 'k'), 'E', 'm'), 'F', 'n')`;

/**
 * The docs b-trees that take a scattered insert per note, which a first build defers to its end
 * (SqliteIndexStore.bulkLoad): the definitions v4 below creates, kept equal to them.
 */
export const DEFERRED_INDEXES = [
  { name: "docs_name", create: "CREATE INDEX IF NOT EXISTS docs_name ON docs (name);" },
  { name: "docs_updated", create: "CREATE INDEX IF NOT EXISTS docs_updated ON docs (updated_at, path);" },
] as const;

export const SCHEMA: Array<string | ((db: Database) => void)> = [
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
  // path; fingerprints() reads a covering index instead of the table's rows.
  `INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('rank', '${BM25_RANK}');
   CREATE INDEX docs_fingerprint ON docs (producer, path, hash, mtime_ms);`,
  // v3: one full-text row per document instead of one per chunk. docs_text (a view) is each
  // document's title, its chunks' text joined, and its producer and tags as opaque tokens
  // (filterToken() in text.ts); docs_fts indexes it as external content. A search then
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
  // v5: the text stored once, in docs_fts itself (an FTS5 table holding its content), one row
  // per document. The chunks table goes: a chunk is a slice of that body, and docs.chunk_lengths
  // says where each ends (each chunk's length in UTF-16 code units, the body joining them with
  // "\n\n"; NULL for a one-chunk document). Vectors are keyed by (document, chunk). An index
  // build then writes one docs row and one FTS5 row per note (plus its tags and links), not a
  // chunk row each, a body in two tables and a view re-assembling it for FTS5. And fewer
  // b-trees take a random insert per note — after FTS5, what a build pays for most (each
  // commit writes every page it dirtied): the names a note links to become tokens of its
  // `filters` column (backlinks find their notes through FTS5, which writes sorted segments),
  // so doc_links, keyed by document, only ever appends and its name index goes; docs_producer
  // goes too (docs_fingerprint starts with the producer).
  (db) => {
    db.run("ALTER TABLE docs ADD COLUMN chunk_lengths TEXT");
    const set = db.query("UPDATE docs SET chunk_lengths = ? WHERE id = ?");
    let doc = -1;
    let lengths: number[] = [];
    const flush = () => {
      if (lengths.length > 1) set.run(JSON.stringify(lengths), doc);
    };
    for (const [id, body] of db.query("SELECT doc_id, body FROM chunks ORDER BY doc_id, seq").values() as [number, string][]) {
      if (id !== doc) {
        flush();
        [doc, lengths] = [id, []];
      }
      lengths.push(body.length);
    }
    flush();
    db.run(`CREATE VIRTUAL TABLE docs_fts_v5 USING fts5 (title, body, filters, tokenize = 'porter unicode61 remove_diacritics 2');
      INSERT INTO docs_fts_v5 (rowid, title, body, filters)
        SELECT t.id, t.title, t.body, t.filters ||
               coalesce((SELECT group_concat(' ' || char(57344) || 'l' || ${filterHex("n.name")}, '')
                           FROM (SELECT DISTINCT name FROM doc_links l WHERE l.doc_id = t.id ORDER BY name) n), '')
          FROM docs_text t;
      CREATE TABLE doc_vectors (
        doc_id INTEGER NOT NULL REFERENCES docs (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        embedding BLOB NOT NULL,      -- float32, little-endian
        PRIMARY KEY (doc_id, seq)
      ) WITHOUT ROWID;
      INSERT INTO doc_vectors (doc_id, seq, embedding) SELECT c.doc_id, c.seq, v.embedding FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_id;
      DROP TABLE chunk_vectors;
      DROP TABLE docs_fts;
      DROP VIEW docs_text;
      DROP TABLE chunks;
      ALTER TABLE docs_fts_v5 RENAME TO docs_fts;
      DROP INDEX docs_producer;
      DROP INDEX doc_links_name;`);
  },
  // v6: doc_tags goes. Tag filters read each document's tag tokens in docs_fts's `filters`
  // column (v3), which every search's MATCH already used; doc_tags and its doc_id index only
  // served listings by tag, and cost every write a random b-tree insert per tag plus one in
  // the index.
  "DROP TABLE doc_tags;",
  // v7: docs_fingerprint goes. It served fingerprints() (a refresh's "what does the index hold
  // for this producer") as a covering index, and the by-producer counts and listings by its
  // prefix; each note's row in it (producer, path and the 64-hex hash) was one more b-tree page
  // in every commit. Without it those read the docs table, whose rows are small (the text
  // lives in docs_fts): still small beside a no-change refresh, and every commit is cheaper.
  "DROP INDEX IF EXISTS docs_fingerprint;",
];
