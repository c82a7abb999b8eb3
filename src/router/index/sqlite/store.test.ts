import { Database } from "bun:sqlite";
import { describe, expect, it } from "bun:test";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeLinkStore } from "../../../../test/support/index-links-suite.ts";
import { describeIndexStore, type StoreLab } from "../../../../test/support/index-search-suite.ts";
import { until } from "../../../../test/support/until.ts";
import { outgoingOf } from "../../notes/graph.ts";
import { parseQuery } from "../query.ts";
import { refreshFolder } from "../refresh.ts";
import { markedSnippet } from "../snippet.ts";
import type { IndexDoc } from "../types.ts";
import { filterToken } from "./filters.ts";
import { GroupCommit } from "./group-commit.ts";
import { SCHEMA } from "./schema.ts";
import { openSqliteIndex, SQLITE_INDEX_FILE, type SqliteIndexOptions, type SqliteIndexStore } from "./store.ts";
import { splitMarked } from "./text.ts";

async function sqliteLab(extra: Omit<SqliteIndexOptions, "dataDir" | "embeddingDim"> = {}): Promise<StoreLab & { dataDir: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), "index-sqlite-"));
  return {
    dataDir,
    open: (o = {}) => openSqliteIndex({ dataDir, ...o, ...extra }),
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
}

/** The index file as schema version `version` left it (SCHEMA's first steps, user_version set): the start of an upgrade test. */
function indexFileAt(dataDir: string, version: number): Database {
  const db = new Database(join(dataDir, SQLITE_INDEX_FILE), { create: true, strict: true });
  for (const step of SCHEMA.slice(0, version)) typeof step === "string" ? db.run(step) : step(db);
  db.run(`PRAGMA user_version = ${version}`);
  return db;
}

/** The plain store: one transaction per batch, the plain ranking query, no pending rows. */
const PLAIN = { champions: { depth: 0 } } as const;
/** Every accelerator on, as the router runs it (INDEX_* defaults). */
const ACCELERATED = { holdCommitMs: 50, backgroundCheckpoints: true, backgroundListBuilds: true } as const;

describeIndexStore("SQLite index (FTS5)", () => sqliteLab(), { vectors: false });
describeIndexStore("SQLite index with sqlite-vec vectors", () => sqliteLab(), { vectors: true });
describeIndexStore("SQLite index with the JS vector fallback", () => sqliteLab({ sqliteVec: false }), { vectors: true });
describeLinkStore("SQLite index: links and listings", () => sqliteLab());
describeIndexStore("SQLite plain store", () => sqliteLab(PLAIN), { vectors: true });
describeLinkStore("SQLite plain store: links and listings", () => sqliteLab(PLAIN));
// The router's store answers writes before it commits them (INDEX_COMMIT_HOLD_MS): the same contract.
describeIndexStore("SQLite index holding its commits", () => sqliteLab({ holdCommitMs: 50 }), { vectors: true });
describeLinkStore("SQLite index holding its commits: links and listings", () => sqliteLab({ holdCommitMs: 50 }));
describeIndexStore("SQLite index with every accelerator", () => sqliteLab(ACCELERATED), { vectors: true });
describeLinkStore("SQLite index with every accelerator: links and listings", () => sqliteLab(ACCELERATED));

describe("SQLite index holding its commits, searched between writes", () => {
  it("scores every hit as the full query over the committed index does (a search commits what is held first)", async () => {
    const a = await sqliteLab();
    const b = await sqliteLab();
    // Held for a minute: only the searches commit. The other store runs every query in full.
    const held = await openSqliteIndex({ dataDir: a.dataDir, holdCommitMs: 60_000 });
    const full = await openSqliteIndex({ dataDir: b.dataDir, champions: { depth: 0 } });
    const words = ["quartz", "basalt", "granite", "slate", "marble", "flint", "shale", "gneiss"];
    const note = (i: number, round: number): IndexDoc => ({
      path: `raw/n${i}.md`,
      producer: "raw",
      title: `${words[i % 8]} note ${i}`,
      body: Array.from({ length: 5 + ((i * 7 + round) % 40) }, (_, j) => words[(i * 3 + j * (round + 1)) % 8]).join(" "),
      tags: [],
      updatedAt: new Date(0),
      hash: `${i}-${round}`,
    });
    const both = async (doc: IndexDoc) => {
      await held.upsert(doc);
      await full.upsert(doc);
    };
    const queries = ["quartz", "basalt granite", "slate", "marble flint shale"].map((q) => parseQuery(q));
    const compare = async () => {
      for (const q of queries) {
        const got = (await held.search(q, 5)).map((h) => [h.path, h.score]);
        const want = (await full.search(q, 5)).map((h) => [h.path, h.score]);
        expect(got).toEqual(want);
      }
    };
    try {
      for (let i = 0; i < 200; i++) await both(note(i, 0));
      await compare(); // builds the lists
      // Writes held between searches: new notes and rewrites that move the counts and the average length.
      for (let round = 1; round <= 12; round++) {
        for (let i = 0; i < 6; i++) await both(note(round * 37 + i * 11 + (i % 2 ? 200 : 0), round));
        await compare();
      }
      expect(held.champions!.counts.answered).toBeGreaterThan(20);
    } finally {
      await held.close();
      await full.close();
      await a.cleanup();
      await b.cleanup();
    }
  });

  it("ranks as an index built afresh from the final notes, after notes written, rewritten and removed within one held transaction", async () => {
    const a = await sqliteLab();
    const b = await sqliteLab();
    // Nothing commits until the search: every rewrite and removal below meets rows of the same transaction.
    const held = await openSqliteIndex({ dataDir: a.dataDir, holdCommitMs: 60_000 });
    const fresh = await openSqliteIndex({ dataDir: b.dataDir, champions: { depth: 0 } });
    const note = (name: string, body: string): IndexDoc => ({
      path: `raw/${name}.md`,
      producer: "raw",
      title: name,
      body,
      tags: [],
      updatedAt: new Date(0),
      hash: body,
    });
    try {
      for (let i = 0; i < 12; i++) await held.upsert(note(`n${i}`, `pebble ${"river ".repeat(i + 1)}`));
      // Rewritten (each in its own turn, so in a later batch of the same transaction), and removed.
      for (let i = 0; i < 12; i += 2) await held.upsert(note(`n${i}`, `pebble stone ${"lake ".repeat(i + 3)}`));
      for (let i = 1; i < 12; i += 4) await held.remove(`raw/n${i}.md`);
      const final = [0, 2, 3, 4, 6, 7, 8, 10, 11].map((i) =>
        i % 2 === 0 ? note(`n${i}`, `pebble stone ${"lake ".repeat(i + 3)}`) : note(`n${i}`, `pebble ${"river ".repeat(i + 1)}`),
      );
      for (const doc of final) await fresh.upsert(doc);
      for (const q of ["pebble", "river", "stone lake"].map((x) => parseQuery(x))) {
        const got = (await held.search(q, 20)).map((h) => [h.path, h.score]);
        const want = (await fresh.search(q, 20)).map((h) => [h.path, h.score]);
        expect(got.length).toBeGreaterThan(0);
        expect(got).toEqual(want);
      }
    } finally {
      await held.close();
      await fresh.close();
      await a.cleanup();
      await b.cleanup();
    }
  });
});

describe("SQLite index holding its commits, after an unclean stop", () => {
  it("says so when a process that held it open is gone, and not after a clean close or for a live holder", async () => {
    const lab = await sqliteLab();
    try {
      const dead = Bun.spawn(["true"]);
      await dead.exited;
      await writeFile(join(lab.dataDir, `${SQLITE_INDEX_FILE}.open.${dead.pid}`), "");
      const live = Bun.spawn(["sleep", "30"]);
      await writeFile(join(lab.dataDir, `${SQLITE_INDEX_FILE}.open.${live.pid}`), "");
      const first = await openSqliteIndex({ dataDir: lab.dataDir, holdCommitMs: 10 });
      expect(first.stoppedUnclean).toBe(true);
      // The dead holder's marker is taken; the live one's and this store's stay.
      expect((await readdir(lab.dataDir)).filter((f) => f.includes(".open.")).sort()).toEqual(
        [`${SQLITE_INDEX_FILE}.open.${live.pid}`, `${SQLITE_INDEX_FILE}.open.${process.pid}`].sort(),
      );
      await first.close();
      live.kill();
      await live.exited;
      const second = await openSqliteIndex({ dataDir: lab.dataDir, holdCommitMs: 10 });
      // The live holder has gone since (killed): that counts; this process's own clean close does not.
      expect(second.stoppedUnclean).toBe(true);
      await second.close();
      const third = await openSqliteIndex({ dataDir: lab.dataDir, holdCommitMs: 10 });
      expect(third.stoppedUnclean).toBe(false);
      await third.close();
      expect((await readdir(lab.dataDir)).filter((f) => f.includes(".open."))).toEqual([]);
    } finally {
      await lab.cleanup();
    }
  });
});

describe("SQLite index file", () => {
  it("lives under the data directory, in WAL mode", async () => {
    const lab = await sqliteLab();
    const store = await openSqliteIndex({ dataDir: join(lab.dataDir, "nested") });
    try {
      expect(store.file).toBe(join(lab.dataDir, "nested", SQLITE_INDEX_FILE));
      const db = new Database(store.file, { readonly: true });
      expect(db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode).toBe("wal");
      db.close();
    } finally {
      await store.close();
      await lab.cleanup();
    }
  });

  it("loads sqlite-vec when vectors are configured", async () => {
    const lab = await sqliteLab();
    const store = (await lab.open({ embeddingDim: 4 })) as SqliteIndexStore;
    try {
      expect(store.vectorEngine).toBe("sqlite-vec");
    } finally {
      await store.close();
      await lab.cleanup();
    }
  });

  it("migrates idempotently", async () => {
    const lab = await sqliteLab();
    const store = await lab.open();
    try {
      await store.migrate();
      await store.migrate();
      expect((await store.countByProducer()).raw).toBe(0);
    } finally {
      await store.close();
      await lab.cleanup();
    }
  });
});

describe("GroupCommit", () => {
  it("commits writes of one turn together, a failing one rejecting alone", async () => {
    const db = new Database(":memory:");
    db.run("CREATE TABLE t (x INTEGER PRIMARY KEY)");
    const commits = new GroupCommit(db);
    const results = await Promise.allSettled([
      commits.run(() => db.run("INSERT INTO t VALUES (1)")),
      commits.run(() => {
        db.run("INSERT INTO t VALUES (2)");
        throw new Error("boom");
      }),
      commits.run(() => db.run("INSERT INTO t VALUES (3)")),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(
      db
        .query<{ x: number }, []>("SELECT x FROM t ORDER BY x")
        .all()
        .map((r) => r.x),
    ).toEqual([1, 3]);
    db.close();
  });
});

describe("GroupCommit without a failure", () => {
  it("runs each write once, then the deferred writes in order, in one transaction", async () => {
    const db = new Database(":memory:");
    db.run("CREATE TABLE t (x INTEGER PRIMARY KEY)");
    db.run("CREATE TABLE log (seq INTEGER PRIMARY KEY, what TEXT)");
    const commits = new GroupCommit(db);
    let runs = 0;
    const write = (x: number) =>
      commits.run(() => {
        runs++;
        db.run("INSERT INTO t VALUES (?)", [x]);
        commits.defer(() => db.run("INSERT INTO log (what) VALUES (?)", [`after ${x}`]));
        return x * 10;
      });
    expect(await Promise.all([write(1), write(2), write(3)])).toEqual([10, 20, 30]);
    expect(runs).toBe(3);
    expect(
      db
        .query<{ what: string }, []>("SELECT what FROM log ORDER BY seq")
        .all()
        .map((r) => r.what),
    ).toEqual(["after 1", "after 2", "after 3"]);
    db.close();
  });

  it("a failing write alone in its batch rejects and leaves nothing of it", async () => {
    const db = new Database(":memory:");
    db.run("CREATE TABLE t (x INTEGER PRIMARY KEY)");
    const commits = new GroupCommit(db);
    await expect(
      commits.run(() => {
        db.run("INSERT INTO t VALUES (1)");
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    await commits.run(() => db.run("INSERT INTO t VALUES (2)"));
    expect(
      db
        .query<{ x: number }, []>("SELECT x FROM t")
        .all()
        .map((r) => r.x),
    ).toEqual([2]);
    db.close();
  });

  it("a failing write drops its deferred writes, the others' run", async () => {
    const db = new Database(":memory:");
    db.run("CREATE TABLE log (what TEXT)");
    const commits = new GroupCommit(db);
    const results = await Promise.allSettled([
      commits.run(() => commits.defer(() => db.run("INSERT INTO log VALUES ('a')"))),
      commits.run(() => {
        commits.defer(() => db.run("INSERT INTO log VALUES ('b')"));
        throw new Error("boom");
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
    expect(
      db
        .query<{ what: string }, []>("SELECT what FROM log")
        .all()
        .map((r) => r.what),
    ).toEqual(["a"]);
    db.close();
  });
});

describe("GroupCommit, a rollback after deferred writes", () => {
  it("tells its rolledBack hook when deferred writes had run and the batch was rolled back, and not otherwise", async () => {
    const db = new Database(":memory:");
    db.run("CREATE TABLE log (what TEXT NOT NULL)");
    let told = 0;
    const commits = new GroupCommit(db, { rolledBack: () => told++ });
    // A deferred write that fails: the whole batch goes (its deferred writes had run).
    await expect(
      commits.run(() =>
        commits.defer(() => {
          db.run("INSERT INTO log VALUES ('a')");
          db.run("INSERT INTO log VALUES (NULL)");
        }),
      ),
    ).rejects.toThrow();
    expect(told).toBe(1);
    expect(db.query("SELECT count(*) AS n FROM log").get()).toEqual({ n: 0 });
    // A write that fails before any deferred write ran: nothing to tell.
    await expect(
      commits.run(() => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    await commits.run(() => commits.defer(() => db.run("INSERT INTO log VALUES ('b')")));
    expect(told).toBe(1);
    db.close();
  });
});

describe("GroupCommit, one write alone", () => {
  it("commits it, or rolls it back whole when it fails (no savepoint needed)", async () => {
    const db = new Database(":memory:");
    db.run("CREATE TABLE t (x INTEGER PRIMARY KEY)");
    const counts: number[] = [];
    const commits = new GroupCommit(db, { committed: (n) => counts.push(n) });
    await commits.run(() => db.run("INSERT INTO t VALUES (1)"));
    const failed = commits.run(() => {
      db.run("INSERT INTO t VALUES (2)");
      throw new Error("boom");
    });
    await expect(failed).rejects.toThrow("boom");
    expect(db.inTransaction).toBe(false);
    expect(
      db
        .query<{ x: number }, []>("SELECT x FROM t")
        .all()
        .map((r) => r.x),
    ).toEqual([1]);
    // Told of the commit that happened, not of the rolled-back one.
    expect(counts).toEqual([1]);
    db.close();
  });
});

describe("SQLite index with background checkpoints", () => {
  it("copies the WAL into the database file from its own thread, and closes clean", async () => {
    const lab = await sqliteLab();
    const store = await openSqliteIndex({ dataDir: lab.dataDir, backgroundCheckpoints: true });
    try {
      const before = Bun.file(store.file).size;
      for (let i = 0; i < 48; i++) {
        await store.upsert({
          path: `ingest/n${i}.md`,
          producer: "ingest",
          title: `note ${i}`,
          body: `zebra number ${i} ${"filler words ".repeat(40)}`,
          tags: ["t"],
          updatedAt: new Date(),
          hash: String(i),
        });
      }
      // 48 notes write a few hundred WAL pages: below SQLite's own checkpoint (1,000 pages; the
      // writer's backstop is 10,000), so the database file grows only by the worker's.
      await until(() => Bun.file(store.file).size > before + 100_000, { what: "a checkpoint to grow the database file" });
      expect((await store.search(parseQuery("zebra"), 500)).length).toBe(48);
    } finally {
      await store.close();
    }
    // Closed (the thread stopped first): a new connection finds every note.
    const reopened = await openSqliteIndex({ dataDir: lab.dataDir });
    try {
      expect((await reopened.search(parseQuery("zebra"), 500)).length).toBe(48);
    } finally {
      await reopened.close();
      await lab.cleanup();
    }
  });
});

describe("SQLite document-level index", () => {
  const note = (path: string, tags: string[], body: string, producer: IndexDoc["producer"] = "ingest"): IndexDoc => ({
    path,
    producer,
    title: path,
    body,
    tags,
    updatedAt: new Date("2025-02-01T00:00:00Z"),
    hash: Bun.hash(path + body + tags.join()).toString(16),
  });

  it("filters by tags of any spelling as whole values, never as words", async () => {
    const lab = await sqliteLab();
    const store = await lab.open();
    try {
      await store.upsert(note("a.md", ["Café", "github-actions", "two words"], "zebra one"));
      await store.upsert(note("b.md", ["github", "actions", "ÄÖ"], "zebra two"));
      const paths = async (q: string) => (await store.search(parseQuery(q), 10)).map((h) => h.path).sort();
      expect(await paths("tag:café zebra")).toEqual(["a.md"]);
      expect(await paths("tag:github-actions zebra")).toEqual(["a.md"]);
      expect(await paths('tag:"two words" zebra')).toEqual(["a.md"]);
      expect(await paths("tag:github tag:actions zebra")).toEqual(["b.md"]);
      expect(await paths("tag:äö zebra")).toEqual(["b.md"]);
      expect(await paths("tag:caf zebra")).toEqual([]);
      // The filter tokens' letters and digits are no word of the text.
      const token = filterToken("t", "café").slice(1);
      expect(await paths(token)).toEqual([]);
      expect(await paths("cafe")).toEqual([]);
      expect(await paths("producer:ingest tag:café zebra")).toEqual(["a.md"]);
      expect(await paths("producer:raw zebra")).toEqual([]);
    } finally {
      await store.close();
      await lab.cleanup();
    }
  });

  it("upgrades a version-2 file (chunk-level FTS) in place", async () => {
    const lab = await sqliteLab();
    try {
      const db = indexFileAt(lab.dataDir, 2);
      db.transaction(() => {
        const doc = (path: string, producer: string, title: string, tags: string[], chunks: string[]) => {
          const { id } = db
            .query<{ id: number }, [string, string, string, string]>(
              "INSERT INTO docs (path, producer, title, tags, updated_at, hash, mtime_ms) VALUES (?, ?, ?, ?, 0, 'h', 0) RETURNING id",
            )
            .get(path, producer, title, JSON.stringify(tags))!;
          for (const t of tags) db.query("INSERT INTO doc_tags (tag, doc_id) VALUES (?, ?)").run(t.toLowerCase(), id);
          for (const [seq, body] of chunks.entries()) db.query("INSERT INTO chunks (doc_id, seq, title, body) VALUES (?, ?, ?, ?)").run(id, seq, title, body);
        };
        doc("raw/a.md", "raw", "Deploy notes", ["Ops", "Café"], ["first chunk about helm", "second chunk about rollback"]);
        doc("lessons/b.md", "lessons", "Lesson", ["ops"], ["a rollback that went well"]);
      })();
      db.close();

      const store = await lab.open();
      try {
        const search = async (q: string) => (await store.search(parseQuery(q), 10)).map((h) => h.id);
        expect(await search("deploy")).toEqual(["raw/a.md#0"]);
        expect((await store.search(parseQuery("helm rollback"), 10, { match: "all" })).map((h) => h.id)).toEqual(["raw/a.md#0"]);
        expect(await search("helm rollback")).toEqual(["raw/a.md#0", "lessons/b.md#0"]);
        expect((await search("rollback")).sort()).toEqual(["lessons/b.md#0", "raw/a.md#1"]);
        expect(await search("tag:café rollback")).toEqual(["raw/a.md#1"]);
        expect(await search("producer:lessons tag:ops rollback")).toEqual(["lessons/b.md#0"]);
        // The migrated rows are forgotten exactly when replaced or removed.
        await store.upsert({ ...note("raw/a.md", ["ops"], "replaced text", "raw"), title: "Other" });
        expect(await search("deploy")).toEqual([]);
        expect(await search("replaced")).toEqual(["raw/a.md#0"]);
        expect(await store.remove("lessons/b.md")).toBe(true);
        expect(await search("rollback")).toEqual([]);
      } finally {
        await store.close();
      }
    } finally {
      await lab.cleanup();
    }
  });
});

describe("SQLite index: upgrading to the text stored once (v5)", () => {
  it("keeps a version-4 file's text, chunks, vectors, filters and links", async () => {
    const lab = await sqliteLab();
    try {
      const db = indexFileAt(lab.dataDir, 4);
      db.transaction(() => {
        db.run("INSERT INTO index_meta (key, value) VALUES ('embedding_dim', '2')");
        const add = (path: string, title: string, tags: string[], chunks: string[], vectors: number[][]) => {
          const { id } = db
            .query<{ id: number }, [string, string, string, string]>(
              "INSERT INTO docs (path, producer, title, tags, updated_at, hash, mtime_ms, name) VALUES (?, 'raw', ?, ?, 0, 'h', 0, ?) RETURNING id",
            )
            .get(path, title, JSON.stringify(tags), path.slice(4, -3))!;
          for (const t of tags) db.query("INSERT INTO doc_tags (tag, doc_id) VALUES (?, ?)").run(t, id);
          chunks.forEach((body, seq) => {
            const { id: cid } = db
              .query<{ id: number }, [number, number, string, string]>("INSERT INTO chunks (doc_id, seq, title, body) VALUES (?, ?, ?, ?) RETURNING id")
              .get(id, seq, title, body)!;
            db.query("INSERT INTO chunk_vectors (chunk_id, embedding) VALUES (?, ?)").run(cid, new Uint8Array(new Float32Array(vectors[seq]!).buffer));
          });
          return id;
        };
        const a = add(
          "raw/a.md",
          "Alpha",
          ["ops"],
          ["first part about helm 𝔸", "second part about rollback"],
          [
            [1, 0],
            [0, 1],
          ],
        );
        add("raw/b.md", "Beta", [], ["plain"], [[1, 0]]);
        db.query("INSERT INTO doc_links (doc_id, kind, target, name) VALUES (?, 'wiki', 'b', 'b')").run(a);
        db.run("INSERT INTO docs_fts (docs_fts) VALUES ('rebuild')");
      })();
      db.close();

      const store = await lab.open({ embeddingDim: 2 });
      try {
        const ids = async (q: string) => (await store.search(parseQuery(q), 10)).map((h) => h.id);
        expect(await ids("helm")).toEqual(["raw/a.md#0"]);
        expect(await ids("tag:ops rollback")).toEqual(["raw/a.md#1"]);
        const [nearest] = await store.vectorSearch([0, 1], 1);
        expect(nearest).toMatchObject({ id: "raw/a.md#1", snippet: "second part about rollback" });
        expect(await store.linksNamed(["b"])).toEqual([{ source: "raw/a.md", kind: "wiki", target: "b", name: "b" }]);
        await store.upsert({ path: "raw/a.md", producer: "raw", title: "Alpha", body: "replaced", tags: [], updatedAt: new Date(0), hash: "h2" });
        expect(await store.linksNamed(["b"])).toEqual([]);
        expect(await ids("helm")).toEqual([]);
      } finally {
        await store.close();
      }
    } finally {
      await lab.cleanup();
    }
  });
});

describe("SQLite index: tags read from the filter tokens (v6)", () => {
  it("drops a version-5 file's doc_tags and still filters and lists by tag, case-insensitively", async () => {
    const lab = await sqliteLab();
    try {
      const db = indexFileAt(lab.dataDir, 5);
      const add = (path: string, tags: string[], body: string, updated: number) => {
        const { id } = db
          .query<{ id: number }, [string, string, number, string]>(
            "INSERT INTO docs (path, producer, title, tags, updated_at, hash, mtime_ms, name) VALUES (?, 'raw', 'T', ?, ?, 'h', 0, ?) RETURNING id",
          )
          .get(path, JSON.stringify(tags), updated, path.slice(4, -3))!;
        for (const t of tags) db.query("INSERT INTO doc_tags (tag, doc_id) VALUES (?, ?)").run(t.toLowerCase(), id);
        const filters = [filterToken("p", "raw"), ...tags.map((t) => filterToken("t", t.toLowerCase()))].join(" ");
        db.query("INSERT INTO docs_fts (rowid, title, body, filters) VALUES (?, 'T', ?, ?)").run(id, body, filters);
      };
      add("raw/a.md", ["Café", "ops"], "rollback of the canary", 3);
      add("raw/b.md", ["ops"], "rollback by hand", 2);
      add("raw/c.md", [], "rollback elsewhere", 1);
      db.close();

      const store = await lab.open();
      try {
        const paths = async (q: string) => (await store.search(parseQuery(q), 10)).map((h) => h.path).sort();
        expect(await paths("tag:CAFÉ rollback")).toEqual(["raw/a.md"]);
        expect(await paths("tag:ops rollback")).toEqual(["raw/a.md", "raw/b.md"]);
        expect(await paths("tag:ops")).toEqual(["raw/a.md", "raw/b.md"]);
        expect((await store.recent({ limit: 10, tag: "Ops" })).map((n) => n.path)).toEqual(["raw/a.md", "raw/b.md"]);
        // A note written after the upgrade is found by its tags the same way.
        await store.upsert({ path: "raw/d.md", producer: "raw", title: "D", body: "rollback again", tags: ["OPS"], updatedAt: new Date(10), hash: "d" });
        expect((await store.recent({ limit: 10, tag: "ops" })).map((n) => n.path)).toEqual(["raw/d.md", "raw/a.md", "raw/b.md"]);
      } finally {
        await store.close();
      }
      const after = new Database(join(lab.dataDir, SQLITE_INDEX_FILE), { readonly: true });
      expect(after.query("SELECT name FROM sqlite_schema WHERE name LIKE 'doc_tags%'").all()).toEqual([]);
      after.close();
    } finally {
      await lab.cleanup();
    }
  });
});

describe("SQLite index: no fingerprint b-tree (v7)", () => {
  it("drops a version-6 file's docs_fingerprint; fingerprints, counts and listings by producer answer as before", async () => {
    const lab = await sqliteLab();
    try {
      const db = indexFileAt(lab.dataDir, 6);
      const add = (path: string, producer: string, hash: string, mtime: number, updated: number) => {
        const { id } = db
          .query<{ id: number }, [string, string, number, string, number, string]>(
            "INSERT INTO docs (path, producer, title, tags, updated_at, hash, mtime_ms, name) VALUES (?, ?, 'T', '[]', ?, ?, ?, ?) RETURNING id",
          )
          .get(path, producer, updated, hash, mtime, path.slice(path.lastIndexOf("/") + 1, -3))!;
        db.query("INSERT INTO docs_fts (rowid, title, body, filters) VALUES (?, 'T', 'body', ?)").run(id, filterToken("p", producer));
      };
      add("raw/a.md", "raw", "ha", 11, 1);
      add("raw/b.md", "raw", "hb", 12, 3);
      add("ingest/2026-11-26/c.md", "ingest", "hc", 13, 2);
      db.close();

      const store = await lab.open();
      try {
        expect([...(await store.fingerprints("raw")).entries()].sort()).toEqual([
          ["raw/a.md", { hash: "ha", mtimeMs: 11 }],
          ["raw/b.md", { hash: "hb", mtimeMs: 12 }],
        ]);
        expect((await store.fingerprints("lessons")).size).toBe(0);
        expect(await store.countByProducer()).toMatchObject({ raw: 2, ingest: 1 });
        expect((await store.recent({ limit: 10, producer: "raw" })).map((n) => n.path)).toEqual(["raw/b.md", "raw/a.md"]);
        // A note written after the upgrade is fingerprinted and listed the same way.
        await store.upsert({ path: "raw/d.md", producer: "raw", title: "D", body: "dee", tags: [], updatedAt: new Date(10), hash: "hd", mtimeMs: 14 });
        expect((await store.fingerprints("raw")).get("raw/d.md")).toEqual({ hash: "hd", mtimeMs: 14 });
        expect((await store.recent({ limit: 1, producer: "raw" })).map((n) => n.path)).toEqual(["raw/d.md"]);
      } finally {
        await store.close();
      }
      const after = new Database(join(lab.dataDir, SQLITE_INDEX_FILE), { readonly: true });
      expect(after.query("SELECT name FROM sqlite_schema WHERE name = 'docs_fingerprint'").all()).toEqual([]);
      expect(after.query<{ user_version: number }, []>("PRAGMA user_version").get()!.user_version).toBe(SCHEMA.length);
      after.close();
    } finally {
      await lab.cleanup();
    }
  });
});

describe("SQLite index: upgrading to links (v4)", () => {
  it("marks the rows of a version-3 file for a link pass: no name, mtime unknown", async () => {
    const lab = await sqliteLab();
    try {
      const db = indexFileAt(lab.dataDir, 3);
      db.transaction(() => {
        db.run("INSERT INTO docs (path, producer, title, tags, updated_at, hash, mtime_ms) VALUES ('raw/a.md', 'raw', 'A', '[]', 0, 'h', 5)");
      })();
      db.close();
      const store = await lab.open();
      await store.close();
      const after = new Database(join(lab.dataDir, SQLITE_INDEX_FILE), { readonly: true });
      expect(after.query("SELECT path, name, mtime_ms FROM docs").all()).toEqual([{ path: "raw/a.md", name: null, mtime_ms: -1 }]);
      after.close();
    } finally {
      await lab.cleanup();
    }
  });

  it("records the links of such rows at the next refresh, without re-indexing their text", async () => {
    const lab = await sqliteLab();
    const vault = await mkdtemp(join(tmpdir(), "index-vault-"));
    const store = await lab.open();
    try {
      await mkdir(join(vault, "raw"), { recursive: true });
      await writeFile(join(vault, "raw", "a.md"), "# A\nsee [[b]]");
      await writeFile(join(vault, "raw", "b.md"), "# B\nplain");
      expect(await refreshFolder(store, { vault })).toMatchObject({ added: 2 });
      // What the v4 migration leaves of rows indexed before links were kept.
      const raw = (store as unknown as { db: Database }).db;
      raw.run("UPDATE docs SET name = NULL, mtime_ms = -1");
      raw.run("DELETE FROM doc_links");
      const rows = raw.query("SELECT id, path FROM docs ORDER BY id").values();
      expect((await outgoingOf(store, ["raw/a.md"])).get("raw/a.md")).toEqual([]);
      expect(await refreshFolder(store, { vault })).toMatchObject({ added: 0, updated: 0, unchanged: 2 });
      expect((await outgoingOf(store, ["raw/a.md"])).get("raw/a.md")!.map((l) => l.note?.path)).toEqual(["raw/b.md"]);
      // Re-indexing a document replaces its row (a new id); these kept theirs.
      expect(raw.query("SELECT id, path FROM docs ORDER BY id").values()).toEqual(rows);
    } finally {
      await store.close();
      await lab.cleanup();
      await rm(vault, { recursive: true, force: true });
    }
  });
});

describe("snippets from highlighted text", () => {
  const O = "\uE001";
  const C = "\uE002";

  it("cuts a highlighted body back into its chunks, closing a mark open across a cut", () => {
    const chunks = ["alpha beta", "gamma 𝔸 delta", "omega"];
    const marked = `alpha ${O}beta${C}\n\n${O}gamma${C} 𝔸 ${O}delta\n\nomega${C}`;
    expect(
      splitMarked(
        marked,
        chunks.map((c) => c.length),
      ),
    ).toEqual([`alpha ${O}beta${C}`, `${O}gamma${C} 𝔸 ${O}delta${C}`, `${O}omega${C}`]);
    expect(splitMarked("one", [3])).toEqual(["one"]);
  });

  it("keeps the window with the most distinct matched words, centred, with ellipses and marks", () => {
    const words = Array.from({ length: 80 }, (_, i) => `w${i}`);
    words[10] = `${O}deploy${C}`;
    words[50] = `${O}deploy${C}`;
    words[55] = `${O}rollback${C}`;
    const snippet = markedSnippet(words.join(" \n"));
    expect(snippet).toStartWith("…");
    expect(snippet).toEndWith("…");
    expect(snippet).toContain("<mark>deploy</mark> w51 w52 w53 w54 <mark>rollback</mark>");
    expect(snippet.split(" ").length).toBe(24);
    expect(snippet).not.toContain("\n");
    expect(markedSnippet(`short ${O}text${C}`)).toBe("short <mark>text</mark>");
    expect(markedSnippet("")).toBe("");
  });
});

describe("SQLite index: a first build's deferred b-trees", () => {
  const indexDefinitions = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return db
        .query<{ name: string; sql: string }, []>(
          "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name IN ('docs_name', 'docs_updated') ORDER BY name",
        )
        .all();
    } finally {
      db.close();
    }
  };
  const indexNames = (file: string) => indexDefinitions(file).map((r) => r.name);

  it("builds a first refresh without docs_name and docs_updated, then puts them back; the index answers as before", async () => {
    const lab = await sqliteLab();
    const vault = await mkdtemp(join(tmpdir(), "bulk-vault-"));
    const store = await openSqliteIndex({ dataDir: lab.dataDir });
    try {
      await mkdir(join(vault, "raw"), { recursive: true });
      for (let i = 0; i < 1200; i++) {
        await writeFile(join(vault, "raw", `note-${i}.md`), `---\ntitle: Note ${i}\ntags: [t${i % 3}]\n---\nword${i} shared body [[note-${(i + 1) % 1200}]]\n`);
      }
      // As the schema's migrations defined them: what the build must put back.
      const defined = indexDefinitions(store.file);
      let during: string[] | undefined;
      const load = store.bulkLoad.bind(store);
      store.bulkLoad = (fn) =>
        load(async () => {
          during = indexNames(store.file);
          return fn();
        });
      expect(await refreshFolder(store, { vault })).toMatchObject({ added: 1200 });
      expect(during).toEqual([]);
      expect(indexNames(store.file)).toEqual(["docs_name", "docs_updated"]);
      expect(indexDefinitions(store.file)).toEqual(defined);
      expect((await store.fingerprints("raw")).size).toBe(1200);
      expect((await store.notesNamed(["note-7"])).map((n) => n.path)).toEqual(["raw/note-7.md"]);
      expect((await store.search(parseQuery("word42"), 10)).map((h) => h.path)).toEqual(["raw/note-42.md"]);
      // A second refresh with nothing new reads the fingerprints and touches nothing.
      expect(await refreshFolder(store, { vault })).toMatchObject({ added: 0, updated: 0, unchanged: 1200 });
    } finally {
      await store.close();
      await rm(vault, { recursive: true, force: true });
      await lab.cleanup();
    }
  });

  it("leaves a non-empty index's b-trees in place", async () => {
    const lab = await sqliteLab();
    const store = await openSqliteIndex({ dataDir: lab.dataDir });
    try {
      await store.upsert({ path: "raw/a.md", producer: "raw", title: "A", body: "alpha", tags: [], updatedAt: new Date(), hash: "h" });
      const during = await store.bulkLoad(async () => indexNames(store.file));
      expect(during).toEqual(["docs_name", "docs_updated"]);
    } finally {
      await store.close();
      await lab.cleanup();
    }
  });

  it("puts them back at the next open when a first build stopped half way (a crash)", async () => {
    const lab = await sqliteLab();
    const store = await openSqliteIndex({ dataDir: lab.dataDir });
    const file = store.file;
    // The state a crash inside bulkLoad leaves: some notes written, the b-trees still dropped.
    await store.upsert({ path: "raw/a.md", producer: "raw", title: "A", body: "alpha", tags: [], updatedAt: new Date(), hash: "h" });
    const raw = new Database(file);
    raw.run("DROP INDEX docs_name; DROP INDEX docs_updated;");
    raw.close();
    await store.close();
    expect(indexNames(file)).toEqual([]);
    const reopened = await openSqliteIndex({ dataDir: lab.dataDir });
    try {
      expect(indexNames(file)).toEqual(["docs_name", "docs_updated"]);
      expect((await reopened.fingerprints("raw")).size).toBe(1);
    } finally {
      await reopened.close();
      await lab.cleanup();
    }
  });
});

describe("SQLite ranking: the best notes holding every word, from the candidates", () => {
  const gap = "Several unrelated sentences sit in between here, about lunch, the weather and the parking lot, and nothing else at all.";
  const note = (path: string, body: string): IndexDoc => ({
    path,
    producer: "raw",
    title: path,
    body,
    tags: [],
    updatedAt: new Date("2025-02-01T00:00:00Z"),
    hash: Bun.hash(path + body).toString(16),
  });
  /**
   * Twelve notes holding `first` and `second`, `apart` sentences apart (their bm25 above every
   * other note's, yet short of settling the hits without the best notes holding both words);
   * thirty holding one of them, more than the candidates a search of limit 10 weighs; a hundred
   * holding neither.
   */
  const vault = (first: string, second: string, apart: number) => [
    ...Array.from({ length: 12 }, (_, i) =>
      note(`raw/both-${String(i).padStart(2, "0")}.md`, `${first} ${gap.repeat(apart)} ${second} ${"filler ".repeat(i)}`),
    ),
    ...[first, second].flatMap((word, w) =>
      Array.from({ length: 30 }, (_, i) => note(`raw/only-${w}-${String(i).padStart(2, "0")}.md`, `${word} ${gap} ${"filler ".repeat(i)}`)),
    ),
    ...Array.from({ length: 100 }, (_, i) => note(`raw/other-${String(i).padStart(3, "0")}.md`, `${gap} ${i}`)),
  ];
  /** The top 10 when every match is a candidate (limit 100: nothing past the candidates to bound). */
  const exact = async (store: SqliteIndexStore, q: string) => (await store.search(parseQuery(q), 100)).slice(0, 10).map((h) => [h.path, h.score]);

  it("takes them from the candidates, once FTS5 confirms they hold every word, without the every-word query", async () => {
    const lab = await sqliteLab(PLAIN);
    const store = (await lab.open()) as SqliteIndexStore;
    try {
      for (const d of vault("kestrel", "heron", 4)) await store.upsert(d);
      const hits = await store.search(parseQuery("kestrel heron"), 10);
      expect(store.ranking.counts).toEqual({ everyWordQueries: 0, provenByCandidates: 1 });
      expect(hits.map((h) => [h.path, h.score])).toEqual(await exact(store, "kestrel heron"));
      expect(hits.every((h) => h.path.startsWith("raw/both-") && h.coverage === 1)).toBe(true);
    } finally {
      await store.close();
      await lab.cleanup();
    }
  });

  it("asks FTS5 when it reads a word otherwise than this stemmer (a token past 64 bytes, which FTS5 does not stem)", async () => {
    const long = "supercalifragilisticexpialidocious".repeat(2);
    const lab = await sqliteLab(PLAIN);
    const store = (await lab.open()) as SqliteIndexStore;
    try {
      // The stemmer reads "…ed" and "…ing" as one word, so the twelve seem to hold both words
      // and prove the answer; FTS5 holds them apart, and its every-word query decides.
      for (const d of vault("kestrel", `${long}ed`, 1)) await store.upsert(d);
      const hits = await store.search(parseQuery(`kestrel ${long}ing`), 10);
      expect(store.ranking.counts).toEqual({ everyWordQueries: 1, provenByCandidates: 0 });
      expect(hits.map((h) => [h.path, h.score])).toEqual(await exact(store, `kestrel ${long}ing`));
    } finally {
      await store.close();
      await lab.cleanup();
    }
  });
});
