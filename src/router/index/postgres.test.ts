import { afterAll, afterEach, beforeAll, describe, expect, it } from "bun:test";
import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { corpus, PARITY_QUERIES } from "../../../test/fixtures/index-corpus.ts";
import { describeLinkStore } from "../../../test/support/index-links-suite.ts";
import { describeWithPostgres, PG_URL, postgresLab, randomSchema } from "../../../test/support/index-postgres.ts";
import { describeIndexStore } from "../../../test/support/index-search-suite.ts";
import { chunkDocument } from "./chunk.ts";
import { documentFromFile } from "./document.ts";
import { VectorsUnavailableError } from "./errors.ts";
import { migrate } from "./migrate.ts";
import { MIGRATIONS } from "./migrations/index.ts";
import { openPostgresIndex, type PostgresIndexStore, tsvEntries } from "./postgres.ts";
import { parseQuery } from "./query.ts";
import { refreshFolder } from "./refresh.ts";
import { openSqliteIndex } from "./sqlite/store.ts";
import { type IndexDoc, type IndexStore, type SearchHit, SNIPPET_MARK } from "./types.ts";

describeWithPostgres("Postgres index", () => {
  describeIndexStore("Postgres index (tsvector + GIN)", async () => postgresLab(), { vectors: false });
  describeLinkStore("Postgres index: links and listings", async () => postgresLab());

  describe("migrate", () => {
    const sql = postgres(PG_URL, { max: 4, onnotice: () => {} });
    const schemas: string[] = [];
    const fresh = () => {
      const s = randomSchema();
      schemas.push(s);
      return s;
    };
    afterEach(async () => {
      for (const s of schemas.splice(0)) await sql.unsafe(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    });
    afterAll(() => sql.end());

    it("applies every migration once, and nothing on a second run", async () => {
      const schema = fresh();
      expect((await migrate(sql, { schema })).applied).toEqual(MIGRATIONS.map((m) => m.version));
      expect((await migrate(sql, { schema })).applied).toEqual([]);
      const rows = await sql.unsafe(`SELECT version FROM "${schema}".index_migrations ORDER BY version`);
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
    });

    it("is safe when several processes start at once", async () => {
      const schema = fresh();
      const clients = Array.from({ length: 4 }, () => postgres(PG_URL, { max: 1, onnotice: () => {} }));
      try {
        const results = await Promise.all(clients.map((c) => migrate(c, { schema })));
        expect(results.flatMap((r) => r.applied)).toEqual(MIGRATIONS.map((m) => m.version));
      } finally {
        await Promise.all(clients.map((c) => c.end()));
      }
    });

    it("lists every .sql file of migrations/, in order", () => {
      const files = readdirSync(join(import.meta.dir, "migrations"))
        .filter((f) => f.endsWith(".sql"))
        .sort();
      expect(MIGRATIONS.map((m) => `${m.version}.sql`)).toEqual(files);
    });

    it("upgrades an index of 0001 (chunk vectors only) to document vectors in place", async () => {
      // The 0001 layout, filled the way the store then wrote it: a tsvector per chunk only.
      const schema = fresh();
      await sql.unsafe(`CREATE SCHEMA "${schema}"`);
      await sql.unsafe(`CREATE TABLE "${schema}".index_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      await sql.begin(async (tx) => {
        await tx.unsafe(`SET LOCAL search_path TO "${schema}", public`);
        await tx.unsafe(MIGRATIONS[0]!.sql).simple();
        await tx.unsafe(`INSERT INTO index_migrations (version) VALUES ('0001_init')`);
        const words = (t: string) => t.normalize("NFC").replace(/[^\p{L}\p{N}\p{M}]+/gu, " ");
        for (const doc of corpus()) {
          const [row] = await tx<{ id: string }[]>`
            INSERT INTO index_docs (path, producer, title, tags, tag_keys, updated_at, hash, mtime_ms)
            VALUES (${doc.path}, ${doc.producer}, ${doc.title}, ${doc.tags}, ${doc.tags.map((t) => t.toLowerCase())}, ${doc.updatedAt}, ${doc.hash}, 0)
            RETURNING id`;
          for (const c of chunkDocument(doc)) {
            await tx`INSERT INTO index_chunks (doc_id, seq, body, tsv) VALUES (${row!.id}, ${c.seq}, ${c.text},
              setweight(to_tsvector('english', ${words(doc.title)}), 'A') || setweight(to_tsvector('english', ${words(c.text)}), 'B'))`;
          }
        }
      });
      const freshLab = postgresLab();
      const migrated = await openPostgresIndex({ url: PG_URL, schema });
      const upserted = await freshLab.open();
      try {
        for (const doc of corpus()) await upserted.upsert(doc);
        // Every document's lexemes and weights are those an upsert writes.
        const vectors = (s: string) =>
          sql.unsafe<{ path: string; a: string; b: string; salient: string[] }[]>(
            `SELECT path, strip(ts_filter(tsv, '{a}'))::text AS a, strip(ts_filter(tsv, '{b}'))::text AS b, salient FROM "${s}".index_docs ORDER BY path`,
          );
        expect(await vectors(schema)).toEqual(await vectors(freshLab.schema));
        for (const q of PARITY_QUERIES) {
          const [a, b] = await Promise.all([migrated.search(parseQuery(q), 10), upserted.search(parseQuery(q), 10)]);
          expect(a.map((h) => h.id)).toEqual(b.map((h) => h.id));
        }
      } finally {
        await migrated.close();
        await upserted.close();
        await freshLab.cleanup();
      }
    });

    it("upgrades an index of 0002 to links: its rows wait for a link pass, which an unchanged upsert makes", async () => {
      const schema = fresh();
      await sql.unsafe(`CREATE SCHEMA "${schema}"`);
      await sql.unsafe(`CREATE TABLE "${schema}".index_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      await sql.begin(async (tx) => {
        await tx.unsafe(`SET LOCAL search_path TO "${schema}", public`);
        for (const m of MIGRATIONS.slice(0, 2)) {
          await tx.unsafe(m.sql).simple();
          await tx`INSERT INTO index_migrations (version) VALUES (${m.version})`;
        }
        await tx`INSERT INTO index_docs (path, producer, title, tags, tag_keys, updated_at, hash, mtime_ms, tsv)
                 VALUES ('raw/a.md', 'raw', 'a', '{}', '{}', now(), ${documentFromFile({ path: "raw/a.md", producer: "raw", content: "see [[b]]", mtimeMs: 5 }).hash}, 5, '')`;
      });
      const store = await openPostgresIndex({ url: PG_URL, schema });
      try {
        expect([...(await sql.unsafe(`SELECT name, mtime_ms FROM "${schema}".index_docs`))]).toEqual([{ name: null, mtime_ms: -1 }] as never);
        await store.upsert(documentFromFile({ path: "raw/b.md", producer: "raw", content: "b", mtimeMs: 5 }));
        expect(await store.upsert(documentFromFile({ path: "raw/a.md", producer: "raw", content: "see [[b]]", mtimeMs: 5 }))).toBe(false);
        expect(await store.linksFrom(["raw/a.md"])).toEqual([{ source: "raw/a.md", kind: "wiki", target: "b", name: "b" }]);
        expect([...(await sql.unsafe(`SELECT name, mtime_ms FROM "${schema}".index_docs WHERE path = 'raw/a.md'`))]).toEqual([
          { name: "a", mtime_ms: 5 },
        ] as never);
      } finally {
        await store.close();
      }
    });

    it("upgrades an index of 0005 to title words: each note's title lexemes become its rows", async () => {
      const schema = fresh();
      await sql.unsafe(`CREATE SCHEMA "${schema}"`);
      await sql.unsafe(`CREATE TABLE "${schema}".index_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      const before = MIGRATIONS.findIndex((m) => m.version === "0006_title_words");
      await sql.begin(async (tx) => {
        await tx.unsafe(`SET LOCAL search_path TO "${schema}", public`);
        for (const m of MIGRATIONS.slice(0, before)) {
          await tx.unsafe(m.sql).simple();
          await tx`INSERT INTO index_migrations (version) VALUES (${m.version})`;
        }
        await tx`INSERT INTO index_docs (path, producer, title, tags, tag_keys, updated_at, hash, mtime_ms, tsv, salient)
                 VALUES ('raw/a.md', 'raw', 'Kafka lag', '{}', '{}', now(), 'h', 5, '', '{t:kafka,t:lag,s:kafka,s:lag,s:consum}')`;
      });
      const store = await openPostgresIndex({ url: PG_URL, schema });
      try {
        expect([...(await sql.unsafe(`SELECT lexeme FROM "${schema}".index_title_words ORDER BY lexeme`))]).toEqual([
          { lexeme: "kafka" },
          { lexeme: "lag" },
        ] as never);
        const indexes = await sql<{ indexname: string }[]>`SELECT indexname FROM pg_indexes WHERE schemaname = ${schema}`;
        expect(indexes.map((i) => i.indexname)).toContain("index_title_words_lexeme");
      } finally {
        await store.close();
      }
    });

    it("upgrades an index of 0006 to salient entries compared as bytes: its notes are found as before, through the rebuilt index", async () => {
      const schema = fresh();
      await sql.unsafe(`CREATE SCHEMA "${schema}"`);
      await sql.unsafe(`CREATE TABLE "${schema}".index_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      const before = MIGRATIONS.findIndex((m) => m.version === "0007_salient_bytes");
      await sql.begin(async (tx) => {
        await tx.unsafe(`SET LOCAL search_path TO "${schema}", public`);
        for (const m of MIGRATIONS.slice(0, before)) {
          await tx.unsafe(m.sql).simple();
          await tx`INSERT INTO index_migrations (version) VALUES (${m.version})`;
        }
        // Two notes as the store wrote them at 0006: the column under the database's collation, the index made under it.
        await tx`
          INSERT INTO index_docs (path, producer, title, tags, tag_keys, updated_at, hash, mtime_ms, name, tsv, salient)
          SELECT v.path, 'raw', v.title, '{}', '{}', now(), 'h', 1, v.name, setweight(to_tsvector('english', v.title), 'A') || setweight(to_tsvector('english', v.body), 'B'),
                 salient_lexemes(setweight(to_tsvector('english', v.title), 'A'), to_tsvector('english', v.body))
            FROM (VALUES ('raw/lag.md', 'lag', 'Kafka consumer lag', 'The consumer fell behind.'),
                         ('raw/pool.md', 'pool', 'Connection pool', 'Kafka consumers share a pool; the pool ran dry, kafka said.')) AS v(path, name, title, body)`;
        await tx`INSERT INTO index_title_words (lexeme, doc_id) SELECT DISTINCT substr(e, 3), d.id FROM index_docs d, unnest(d.salient) AS e WHERE e LIKE 't:%'`;
        await tx.unsafe("CREATE INDEX IF NOT EXISTS index_docs_salient ON index_docs USING gin (salient)");
      });
      const collation = () =>
        sql<{ collation: string }[]>`
          SELECT c.collname AS collation FROM pg_attribute a JOIN pg_collation c ON c.oid = a.attcollation
           WHERE a.attrelid = ${`"${schema}".index_docs`}::regclass AND a.attname = 'salient'`;
      expect((await collation())[0]?.collation).toBe("default");

      const store = await openPostgresIndex({ url: PG_URL, schema });
      try {
        expect((await collation())[0]?.collation).toBe("C");
        // The index a search's salient tiers read, rebuilt under the column's collation (else the planner could not use it).
        const [index] = await sql<{ collation: string }[]>`
          SELECT c.collname AS collation FROM pg_index i JOIN pg_collation c ON c.oid = i.indcollation[0]
           WHERE i.indexrelid = ${`"${schema}".index_docs_salient`}::regclass`;
        expect(index?.collation).toBe("C");
        // A title word, a word held twice in a body, both: the salient tiers' answers.
        const paths = async (q: string) => (await store.search(parseQuery(q), 10, { snippets: false })).map((h) => h.path);
        expect(await paths("lag")).toEqual(["raw/lag.md"]);
        expect(await paths("pool")).toEqual(["raw/pool.md"]);
        expect(await paths("kafka")).toEqual(["raw/lag.md", "raw/pool.md"]);
      } finally {
        await store.close();
      }
    });

    it("refuses a schema name that is not a plain identifier", async () => {
      expect(migrate(sql, { schema: 'x"; DROP TABLE y; --' })).rejects.toThrow("plain SQL name");
    });

    it("says clearly when embeddings are configured but the server lacks pgvector", async () => {
      const [available] = await sql`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`;
      if (available) return; // this server has pgvector: nothing to refuse (pgvector.test.ts covers it)
      const err = await migrate(sql, { schema: fresh(), embeddingDim: 8 }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(VectorsUnavailableError);
      expect((err as Error).message).toContain("no pgvector extension");
    });
  });

  describe("at scale", () => {
    const sql = postgres(PG_URL, { max: 2, onnotice: () => {} });
    let lab: ReturnType<typeof postgresLab>;
    let store: PostgresIndexStore;
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "index-pg-scale-"));
    });
    afterEach(async () => {
      await store?.close();
      await lab?.cleanup();
    });
    afterAll(async () => {
      await sql.end();
      await rm(dir, { recursive: true, force: true });
    });
    const note = (i: number, title: string, body: string): IndexDoc =>
      documentFromFile({ path: `raw/n/${String(i).padStart(5, "0")}.md`, producer: "raw", content: `---\ntitle: ${title}\n---\n${body}\n`, mtimeMs: i });
    const indexNames = async (schema: string) =>
      (await sql<{ indexname: string }[]>`SELECT indexname FROM pg_indexes WHERE schemaname = ${schema} ORDER BY indexname`).map((r) => r.indexname);

    it("takes a thousand writes at once, each in its own transaction, every one of them in (the postgres package's BEGIN at a full pipeline, patched)", async () => {
      // Each upsert reads its old row, then writes in a transaction of its own: with a thousand at
      // once, queries pile up on each connection, and postgres@3.4.9 unpatched let a BEGIN that
      // filled a connection's pipeline go unreserved (UNSAFE_TRANSACTION; tens of failures here).
      lab = postgresLab(PG_URL, { max: 10 });
      store = (await lab.open()) as PostgresIndexStore;
      const failures: string[] = [];
      for (let round = 0; round < 3; round++) {
        await Promise.all(
          Array.from({ length: 1000 }, (_, i) =>
            store.upsert(note(round * 1000 + i, `deploy note ${i}`, `a rollback of the canary ${i} after the incident`)).catch((err) => {
              failures.push((err as { code?: string }).code ?? String(err));
            }),
          ),
        );
      }
      expect(failures).toEqual([]);
      const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ${sql(lab.schema)}.index_docs`;
      expect(row!.n).toBe(3000);
      const [open] = await sql<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`;
      expect(open!.n).toBe(0);
    });

    it("runs unfiltered searches on sessions of their own, no more than the machine's cores (at least 2), with the answers a search alone gets", async () => {
      lab = postgresLab(PG_URL, { max: 10 });
      store = (await lab.open()) as PostgresIndexStore;
      await store.upsertMany(corpus());
      const queries = [...PARITY_QUERIES, ...PARITY_QUERIES];
      const alone: string[][] = [];
      for (const q of queries) alone.push((await store.search(parseQuery(q), 10)).map((h) => h.id));
      const together = await Promise.all(queries.map((q) => store.search(parseQuery(q), 10)));
      expect(together.map((hits) => hits.map((h) => h.id))).toEqual(alone);
      const [row] = await sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ${`brain-stack search (${lab.schema})`.slice(0, 63)}`;
      expect(queries.length).toBeGreaterThan(availableParallelism());
      expect(row!.n).toBeGreaterThanOrEqual(1);
      expect(row!.n).toBeLessThanOrEqual(Math.max(2, availableParallelism()));
      // Those sessions are Bun.SQL's; a single-session store runs the same statements on the
      // postgres package, in a transaction: the same hits, snippets and order.
      const single = postgresLab(PG_URL, { max: 1 });
      const one = await single.open();
      try {
        await one.upsertMany!(corpus());
        const shown = (hits: SearchHit[]) => hits.map((h) => [h.id, h.snippet, h.title, h.tags, h.updated_at]);
        for (const q of PARITY_QUERIES) expect(shown(await one.search(parseQuery(q), 10))).toEqual(shown(await store.search(parseQuery(q), 10)));
      } finally {
        await one.close();
        await single.cleanup();
      }
    });

    it("writes a batch as upsert() would write its documents one by one", async () => {
      lab = postgresLab();
      store = (await lab.open()) as PostgresIndexStore;
      const other = postgresLab();
      const single = await other.open();
      try {
        const docs = corpus();
        const first = await store.upsertMany(docs);
        const one: boolean[] = [];
        for (const d of docs) one.push(await single.upsert(d));
        expect(first).toEqual(one);
        expect(first.every(Boolean)).toBe(true);
        for (const q of PARITY_QUERIES) {
          const [x, y] = [await store.search(parseQuery(q), 10), await single.search(parseQuery(q), 10)];
          expect(x.map((h) => h.id)).toEqual(y.map((h) => h.id));
        }
        // Unchanged, touched (new mtime), changed and twice in one batch (the last one wins).
        const [a, b, c] = docs as [IndexDoc, IndexDoc, IndexDoc];
        const again = await store.upsertMany([
          a,
          { ...b, mtimeMs: 99 },
          { ...c, body: `${c.body}\nrebalanced shards`, hash: "changed" },
          { ...a, body: "zeppelin", hash: "z" },
        ]);
        expect(again).toEqual([false, false, true, true]);
        expect((await store.fingerprints(b.producer)).get(b.path)?.mtimeMs).toBe(99);
        expect((await store.search(parseQuery("rebalanced"), 5)).map((h) => h.path)).toEqual([c.path]);
        expect((await store.search(parseQuery("zeppelin"), 5)).map((h) => h.path)).toEqual([a.path]);
      } finally {
        await single.close();
        await other.cleanup();
      }
    });

    it.each([
      ["by its statement", false],
      ["copied in by a first load", true],
    ])("writes the tsvectors and salient lexemes Postgres' own parser makes, whatever the words (%s)", async (_, firstLoad) => {
      lab = postgresLab();
      store = (await lab.open()) as PostgresIndexStore;
      const long = "x".repeat(2_100);
      const docs = [
        ...corpus(),
        note(1, "The Running of the Nodes", "The nodes were running; RUNNING again and again. 1e5 1e5e5 9e9the a1b2c3 007 0x1f 12e."),
        note(2, "Café déjà vu", "Naïve façade: ünïcode wörds, 東京 and Ελληνικά beside ascii words, words, words."),
        note(3, "Long words", `A ${long} word too long to index, then after it more words.`),
        note(4, "Repeats", `${"alpha ".repeat(300)}and beta beta.`),
        note(8, "As many as kept", "gamma ".repeat(255)),
        note(5, "", ""),
        note(7, "Separators", "A record\x1eseparator and a unit\x1fseparator in the text."),
        note(6, "Big", Array.from({ length: 40 }, (_, i) => `## Part ${i}\n\n${"replica lag and vacuum stalls on shard ".repeat(60)}`).join("\n\n")),
        ...Array.from({ length: 20 }, (_, i) => note(10 + i, `Quotes ${i}`, `It's the owner's "quoted" \\back\\slash and don't-stop words ${i}.`)),
        // Chunks whose joined positions of one lexeme pass what tsvector_concat keeps (256), and a title sharing a chunk's lexeme.
        note(30, "Delta delta", Array.from({ length: 3 }, (_, i) => `## Part ${i}\n\n${"delta ".repeat(120)}epsilon`).join("\n\n")),
        note(33, "Three chunks", Array.from({ length: 3 }, (_, i) => `## Part ${i}\n\n${`kappa lambda the mu ${i} `.repeat(70)}`).join("\n\n")),
        { ...note(31, "Tagged", "Tags lower-cased."), tags: ["Ops", "DB-1"] },
        { ...note(32, "Tagged", "Tags lower-cased by Postgres."), tags: ["Äpfel", "Ops"] },
      ];
      const rows = () =>
        sql.unsafe(
          `SELECT d.path, producer, title, tags, tag_keys, updated_at, hash, mtime_ms, name, tsv::text AS tsv, salient,
                  (SELECT json_agg(json_build_array(c.seq, c.body, c.tsv::text) ORDER BY c.seq) FROM "${lab.schema}".index_chunks c WHERE c.doc_id = d.id) AS chunks,
                  (SELECT array_agg(w.lexeme ORDER BY w.lexeme) FROM "${lab.schema}".index_title_words w WHERE w.doc_id = d.id) AS title_words
             FROM "${lab.schema}".index_docs d ORDER BY d.path`,
        );
      await store.upsertMany(docs);
      if (firstLoad) {
        // Written again by a first load, which knows the words now (lexed here, and copied in):
        // every column as the statement wrote it.
        const before = await rows();
        await sql.unsafe(`TRUNCATE "${lab.schema}".index_docs, "${lab.schema}".index_title_words CASCADE`);
        await store.bulkLoad(() => store.upsertMany(docs));
        expect(await rows()).toEqual(before);
      }
      // What the same texts give when Postgres parses them (as it does for a text the store does not lex itself).
      const words = (t: string) =>
        t
          .replaceAll("\0", "")
          .normalize("NFC")
          .replace(/[^\p{L}\p{N}\p{M}]+/gu, " ");
      const s = `"${lab.schema}"`;
      for (const doc of docs) {
        const chunks = chunkDocument(doc).map((c) => words(c.text));
        const [want] = await sql.unsafe<{ tsv: string; salient: string[] }[]>(
          `WITH t AS (SELECT setweight(to_tsvector('english', $1), 'A') AS ttsv,
                             (SELECT ${s}.tsvector_cat(setweight(to_tsvector('english', w), 'B') ORDER BY i) FROM unnest($2::text[]) WITH ORDINALITY AS u(w, i)) AS btsv)
           SELECT (ttsv || coalesce(btsv, ''))::text AS tsv, ${s}.salient_lexemes(ttsv, coalesce(btsv, '')) AS salient FROM t`,
          [words(doc.title), chunks],
        );
        const [got] = await sql.unsafe<{ tsv: string; salient: string[] }[]>(`SELECT tsv::text AS tsv, salient FROM ${s}.index_docs WHERE path = $1`, [
          doc.path,
        ]);
        // The salient entries are a set (the index reads them by containment): compared sorted.
        const asSet = (r: { tsv: string; salient: string[] }) => ({ path: doc.path, tsv: r.tsv, salient: [...r.salient].sort() });
        expect(asSet(got!)).toEqual(asSet(want!));
        const stored = await sql.unsafe<{ tsv: string }[]>(
          `SELECT c.tsv::text AS tsv FROM ${s}.index_chunks c JOIN ${s}.index_docs d ON d.id = c.doc_id WHERE d.path = $1 ORDER BY c.seq`,
          [doc.path],
        );
        const expected = await sql.unsafe<{ tsv: string }[]>(
          `SELECT (setweight(to_tsvector('english', $1), 'A') || setweight(to_tsvector('english', w), 'B'))::text AS tsv FROM unnest($2::text[]) WITH ORDINALITY AS u(w, i) ORDER BY i`,
          [words(doc.title), chunks],
        );
        expect(stored).toEqual(expected);
      }
      expect((await store.search(parseQuery("running"), 3))[0]?.path).toBe("raw/n/00001.md");
      expect((await store.search(parseQuery("façade"), 3))[0]?.path).toBe("raw/n/00002.md");
      const [controls] = await sql.unsafe<{ body: string }[]>(
        `SELECT c.body FROM ${s}.index_chunks c JOIN ${s}.index_docs d ON d.id = c.doc_id WHERE d.path = 'raw/n/00007.md'`,
      );
      expect(controls?.body).toContain("record\x1eseparator and a unit\x1fseparator");
    });

    it("reads a tsvector's entries from its text as unnest() gives them", async () => {
      // A lexeme holding a quote and one holding a backslash, as the tsvector's text escapes them.
      const literal = String.raw`'it''s':1A,7 'back\\slash':2 'plain':4B,5C,9 'plai':3 'x':8D`;
      const wanted = ["plain", "it's", String.raw`back\slash`, "x", "absent"];
      const [row] = await sql.unsafe<{ text: string; entries: [string, number[], string[]][] }[]>(
        `SELECT $1::tsvector::text AS text, (SELECT json_agg(json_build_array(u.lexeme, u.positions, u.weights)) FROM unnest($1::tsvector) u
                                             WHERE u.lexeme = ANY($2::text[])) AS entries`,
        [literal, wanted],
      );
      expect(row!.entries.map((e) => e[0])).toContain(String.raw`back\slash`);
      const got = tsvEntries(row!.text, wanted);
      const byLexeme = (a: [string, ...unknown[]], b: [string, ...unknown[]]) => (a[0] < b[0] ? -1 : 1);
      expect(got.sort(byLexeme)).toEqual(row!.entries.sort(byLexeme));
      expect(got.map((e) => e[0])).not.toContain("plai");
    });

    it("marks in a snippet the words where the query's words stand, after a title and past a word the parser splits", async () => {
      lab = postgresLab();
      store = (await lab.open()) as PostgresIndexStore;
      const mark = (w: string) => `${SNIPPET_MARK.open}${w}${SNIPPET_MARK.close}`;
      await store.upsertMany([
        // The title ends in stop words (its last position is 1, not 3); "9e9the" is two tokens.
        note(1, "Rollbacks of the", "Before 9e9the canary the rollback of checkout failed, and the next rollback worked."),
        note(2, "A title", "Nothing here but words about canary builds."),
      ]);
      for (const opts of [{ match: "any" as const }, { match: "all" as const }]) {
        const [hit] = await store.search(parseQuery("rollback checkout"), 5, opts);
        expect(hit?.path).toBe("raw/n/00001.md");
        expect(hit?.snippet).toBe(`Before 9e9the canary the ${mark("rollback")} of ${mark("checkout")} failed, and the next ${mark("rollback")} worked.`);
      }
      const one = await store.snippets(parseQuery("canary"), ["raw/n/00001.md"]);
      expect(one.get("raw/n/00001.md")?.snippet).toBe(`Before 9e9the ${mark("canary")} the rollback of checkout failed, and the next rollback worked.`);
    });

    it("keeps the title words' rows in step with the notes' titles as notes are written, rewritten and removed", async () => {
      lab = postgresLab();
      store = (await lab.open()) as PostgresIndexStore;
      const s = `"${lab.schema}"`;
      // The rows the table holds, and the rows the notes' salient "t:" entries say it should hold.
      const rows = async () =>
        (
          await sql.unsafe<{ row: string }[]>(
            `SELECT lexeme || ' ' || d.path AS row FROM ${s}.index_title_words w JOIN ${s}.index_docs d ON d.id = w.doc_id ORDER BY 1`,
          )
        ).map((r) => r.row);
      const expected = async () =>
        (
          await sql.unsafe<{ row: string }[]>(
            `SELECT DISTINCT substr(e, 3) || ' ' || d.path AS row FROM ${s}.index_docs d, unnest(d.salient) e WHERE e LIKE 't:%' ORDER BY 1`,
          )
        ).map((r) => r.row);
      await store.upsertMany([note(1, "Kafka consumer lag", "Body."), note(2, "Deploy rollback", "Body."), note(3, "Kafka deploy", "Body.")]);
      expect(await rows()).toEqual([
        "consum raw/n/00001.md",
        "deploy raw/n/00002.md",
        "deploy raw/n/00003.md",
        "kafka raw/n/00001.md",
        "kafka raw/n/00003.md",
        "lag raw/n/00001.md",
        "rollback raw/n/00002.md",
      ]);
      await store.upsertMany([note(2, "Canary release", "Body, rewritten.")]);
      await store.remove("raw/n/00003.md");
      expect(await rows()).toEqual(["canari raw/n/00002.md", "consum raw/n/00001.md", "kafka raw/n/00001.md", "lag raw/n/00001.md", "releas raw/n/00002.md"]);
      expect(await rows()).toEqual(await expected());
      // The title tier finds through them what a title holds.
      expect((await store.search(parseQuery("canary"), 5)).map((h) => h.path)).toEqual(["raw/n/00002.md"]);
      expect((await store.search(parseQuery("deploy"), 5)).map((h) => h.path)).toEqual([]);
    });

    it("writes nothing of a batch that fails", async () => {
      lab = postgresLab();
      store = (await lab.open()) as PostgresIndexStore;
      await store.upsertMany([note(1, "Kept", "A note written before.")]);
      // A path longer than a b-tree entry can hold: the batch's insert fails in Postgres, after
      // the other documents' rows were sent in the same statement.
      const bad = { ...note(3, "Bad", "A path no index can hold."), path: `raw/${randomBytes(8_000).toString("hex")}.md` };
      const batch = [
        note(2, "Lost", "Quartermaster ledger entry, with a [[Kept]] link."),
        bad,
        { ...note(1, "Kept", "Rewritten by the failed batch."), hash: "x" },
      ];
      await expect(store.upsertMany(batch)).rejects.toThrow();
      expect((await store.countByProducer()).raw).toBe(1);
      expect(await store.search(parseQuery("quartermaster"), 5)).toEqual([]);
      expect(await store.search(parseQuery("rewritten"), 5)).toEqual([]);
      expect((await store.search(parseQuery("written before"), 5)).map((h) => h.path)).toEqual(["raw/n/00001.md"]);
      const s = `"${lab.schema}"`;
      const [rows] = await sql.unsafe<{ chunks: number; links: number }[]>(
        `SELECT (SELECT count(*) FROM ${s}.index_chunks)::int AS chunks, (SELECT count(*) FROM ${s}.index_links)::int AS links`,
      );
      expect(rows).toEqual({ chunks: 1, links: 0 });
    });

    it("writes a first load's batch by its statement when the COPY fails", async () => {
      lab = postgresLab();
      store = (await lab.open()) as PostgresIndexStore;
      const s = `"${lab.schema}"`;
      const docs = Array.from({ length: 40 }, (_, i) => note(i, `Note ${i}`, `Quartermaster ledger entry ${i}, with a [[Note ${i + 1}]] link.`));
      // Learned first (a COPY needs every word known), then the table emptied for a first load.
      await store.upsertMany(docs);
      await sql.unsafe(`TRUNCATE ${s}.index_docs, ${s}.index_title_words CASCADE`);
      // As a path written meanwhile by another writer would: the COPY fails, a statement does not.
      await sql.unsafe(`CREATE FUNCTION ${s}.no_copy() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF current_query() ILIKE 'COPY%' THEN RAISE unique_violation; END IF; RETURN NEW; END $$`);
      await sql.unsafe(`CREATE TRIGGER no_copy BEFORE INSERT ON ${s}.index_docs FOR EACH ROW EXECUTE FUNCTION ${s}.no_copy()`);
      expect(await store.bulkLoad(() => store.upsertMany(docs))).toEqual(docs.map(() => true));
      expect((await store.countByProducer()).raw).toBe(40);
      expect((await store.search(parseQuery("quartermaster"), 50)).length).toBe(40);
      expect((await store.linkCounts()).links).toBe(40);
    });

    it("builds a first load's indexes once at its end, and puts back those a stopped build left out", async () => {
      lab = postgresLab();
      store = (await lab.open()) as PostgresIndexStore;
      const all = await indexNames(lab.schema);
      expect(all).toContain("index_docs_tsv");
      expect(all).toContain("index_docs_salient");
      let during: string[] = [];
      await store.bulkLoad(async () => {
        during = await indexNames(lab.schema);
        await store.upsertMany(corpus());
      });
      expect(during).not.toContain("index_docs_tsv");
      expect(during).not.toContain("index_docs_salient");
      expect(await indexNames(lab.schema)).toEqual(all);
      expect((await store.search(parseQuery("postgres"), 3))[0]?.path).toBe("raw/runbooks/postgres-vacuum.md");
      // Not empty any more: a second bulk load is a plain load, indexes kept.
      await store.bulkLoad(async () => {
        during = await indexNames(lab.schema);
      });
      expect(during).toEqual(all);
      // A build that stopped half way (its indexes dropped): the next open makes them.
      await sql.unsafe(`DROP INDEX "${lab.schema}".index_docs_tsv, "${lab.schema}".index_docs_salient`);
      await store.close();
      store = (await lab.open()) as PostgresIndexStore;
      expect(await indexNames(lab.schema)).toEqual(all);
    });

    it("indexes a first build of many files by the batch, within one bulk load", async () => {
      lab = postgresLab();
      store = (await lab.open()) as PostgresIndexStore;
      const vault = join(dir, "vault");
      for (let i = 0; i < 1_200; i++) {
        const folder = join(vault, "raw", `f${i % 7}`);
        await mkdir(folder, { recursive: true });
        await Bun.write(join(folder, `note-${i}.md`), `# Note ${i}\n\nShard ${i} of the ${i % 2 ? "ledger" : "catalog"} rebuild.\n`);
      }
      const batches: number[] = [];
      let bulk = 0;
      const upsertMany = store.upsertMany.bind(store);
      const bulkLoad = store.bulkLoad.bind(store);
      const spy = Object.assign(Object.create(store), {
        upsertMany: (docs: IndexDoc[]) => {
          batches.push(docs.length);
          return upsertMany(docs);
        },
        bulkLoad: <T>(load: () => Promise<T>) => {
          bulk++;
          return bulkLoad(load);
        },
      }) as IndexStore;
      expect(await refreshFolder(spy, { vault })).toEqual({ added: 1_200, updated: 0, removed: 0, unchanged: 0, skipped: 0 });
      expect(bulk).toBe(1);
      expect(Math.max(...batches)).toBeLessThanOrEqual(256);
      expect(batches.reduce((a, b) => a + b, 0)).toBe(1_200);
      expect((await store.countByProducer()).raw).toBe(1_200);
      expect((await store.search(parseQuery("ledger"), 1_000)).length).toBe(600);
      // Nothing changed: nothing written.
      batches.length = 0;
      expect(await refreshFolder(spy, { vault })).toMatchObject({ added: 0, updated: 0, unchanged: 1_200 });
      expect(batches).toEqual([]);
    });

    it("finds the best matches of a word held by more notes than a search ranks", async () => {
      lab = postgresLab();
      store = (await lab.open()) as PostgresIndexStore;
      // Far more passing mentions than the candidates a search reads, written first (so a
      // scan in table order meets them first), then a note saying it twice, then the note
      // with the word in its title.
      const docs = Array.from({ length: 400 }, (_, i) => note(i, `Weekly notes ${i}`, `A passing mention of pgbouncer in week ${i}. Nothing else.`));
      docs.push(note(400, "Pooling", "We run pgbouncer in transaction mode; pgbouncer restarts drop sessions."));
      docs.push(note(401, "pgbouncer runbook", "How to restart it without dropping clients."));
      await store.upsertMany(docs);
      const hits = await store.search(parseQuery("pgbouncer"), 5);
      expect(hits.map((h) => h.path).slice(0, 2)).toEqual(["raw/n/00401.md", "raw/n/00400.md"]);
      expect(hits).toHaveLength(5);
      // Two words: the note holding both, close together, first; limit filled by partial matches.
      await store.upsertMany([note(402, "Sessions", "Every pgbouncer session drop paged us twice last month.")]);
      const both = await store.search(parseQuery("pgbouncer paged"), 10);
      expect(both[0]?.path).toBe("raw/n/00402.md");
      expect(both[0]?.coverage).toBe(1);
      expect(both).toHaveLength(10);
      expect((await store.search(parseQuery("pgbouncer paged"), 10, { match: "all" })).map((h) => h.path)).toEqual(["raw/n/00402.md"]);
    });

    it("finds the note holding every word strongly among more notes mentioning them in passing than a search ranks", async () => {
      lab = postgresLab();
      store = (await lab.open()) as PostgresIndexStore;
      const docs = Array.from({ length: 300 }, (_, i) => note(i, `Weekly notes ${i}`, `In passing: a replica and a failover in week ${i}.`));
      docs.push(note(300, "Standby drill", "The replica lagged, so the failover waited; after the failover the replica caught up."));
      docs.push(note(301, "Replica sizing", "Each replica gets the primary's memory; size every replica alike."));
      await store.upsertMany(docs);
      for (const match of ["any", "all"] as const) {
        const hits = await store.search(parseQuery("replica failover"), 5, { match });
        expect(hits[0]?.path).toBe("raw/n/00300.md");
        expect(hits).toHaveLength(5);
      }
      // A phrase is checked where its words stand: only the notes saying it.
      const phrase = await store.search(parseQuery('"the failover waited"'), 5);
      expect(phrase.map((h) => h.path)).toEqual(["raw/n/00300.md"]);
    });
  });

  describe("the same corpus on SQLite and Postgres", () => {
    let sqlite: IndexStore;
    let pg: IndexStore;
    let dataDir: string;
    const lab = postgresLab();
    beforeAll(async () => {
      dataDir = await mkdtemp(join(tmpdir(), "index-parity-"));
      sqlite = await openSqliteIndex({ dataDir });
      pg = await lab.open();
      for (const doc of corpus()) {
        await sqlite.upsert(doc);
        await pg.upsert(doc);
      }
    });
    afterAll(async () => {
      await sqlite.close();
      await pg.close();
      await lab.cleanup();
      await rm(dataDir, { recursive: true, force: true });
    });

    it.each(PARITY_QUERIES)("finds the same documents, best first, for %p", async (q) => {
      const [a, b] = await Promise.all([sqlite.search(parseQuery(q), 10), pg.search(parseQuery(q), 10)]);
      expect(a.length).toBeGreaterThan(0);
      expect(b.map((h) => h.path).sort()).toEqual(a.map((h) => h.path).sort());
      expect(b[0]?.path).toBe(a[0]!.path);
      expect(b[0]?.id).toBe(a[0]!.id);
    });

    it("counts the same documents per producer", async () => {
      expect(await pg.countByProducer()).toEqual(await sqlite.countByProducer());
    });
  });
});
