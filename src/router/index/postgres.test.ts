import { afterAll, afterEach, beforeAll, describe, expect, it } from "bun:test";
import { readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
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
import { openPostgresIndex } from "./postgres.ts";
import { parseQuery } from "./query.ts";
import { openSqliteIndex } from "./sqlite.ts";
import type { IndexStore } from "./types.ts";

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
          sql.unsafe<{ path: string; a: string; b: string }[]>(
            `SELECT path, strip(ts_filter(tsv, '{a}'))::text AS a, strip(ts_filter(tsv, '{b}'))::text AS b FROM "${s}".index_docs ORDER BY path`,
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
