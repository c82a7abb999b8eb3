import { Database } from "bun:sqlite";
import { describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HeldGroupCommit } from "./held-group-commit.ts";

describe("HeldGroupCommit: the group commit holding its transaction (holdMs)", () => {
  const values = (db: Database) =>
    db
      .query<{ x: number }, []>("SELECT x FROM t ORDER BY x")
      .all()
      .map((r) => r.x);
  const fileDb = () => {
    const dir = mkdtempSync(join(tmpdir(), "held-"));
    const db = new Database(join(dir, "t.sqlite"));
    db.run("PRAGMA journal_mode = WAL");
    db.run("CREATE TABLE t (x INTEGER PRIMARY KEY)");
    return { db, other: () => new Database(join(dir, "t.sqlite"), { readonly: true }), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
  };

  it("answers writes before they commit: this connection sees them, another sees them once the hold ends", async () => {
    const { db, other, cleanup } = fileDb();
    const commits: number[] = [];
    const committed = Promise.withResolvers<void>();
    const group = new HeldGroupCommit(db, {
      holdMs: 200,
      committed: (n) => {
        commits.push(n);
        committed.resolve();
      },
    });
    await group.run(() => db.run("INSERT INTO t VALUES (1)"));
    await group.run(() => db.run("INSERT INTO t VALUES (2)"));
    expect(values(db)).toEqual([1, 2]);
    const reader = other();
    expect(values(reader)).toEqual([]);
    await committed.promise;
    // Both lone writes went in with one commit.
    expect(commits).toEqual([2]);
    expect(values(reader)).toEqual([1, 2]);
    reader.close();
    db.close();
    cleanup();
  });

  it("commits when settled, and once it holds maxHeldWrites writes", async () => {
    const { db, other, cleanup } = fileDb();
    const commits: number[] = [];
    const group = new HeldGroupCommit(db, { holdMs: 60_000, maxHeldWrites: 3, committed: (n) => commits.push(n) });
    for (let x = 1; x <= 4; x++) await group.run(() => db.run("INSERT INTO t VALUES (?)", [x]));
    expect(commits).toEqual([3]);
    const reader = other();
    expect(values(reader)).toEqual([1, 2, 3]);
    group.settle();
    expect(commits).toEqual([3, 1]);
    expect(values(reader)).toEqual([1, 2, 3, 4]);
    expect(db.inTransaction).toBe(false);
    reader.close();
    db.close();
    cleanup();
  });

  it("tells lost() when the held transaction's commit fails, and carries on with the next writes", async () => {
    const { db, other, cleanup } = fileDb();
    // A deferred foreign key is checked at COMMIT: a write that breaks it is answered, then its commit fails.
    db.run("PRAGMA foreign_keys = ON");
    db.run("CREATE TABLE child (x INTEGER REFERENCES t (x) DEFERRABLE INITIALLY DEFERRED)");
    const lost: number[] = [];
    const group = new HeldGroupCommit(db, { holdMs: 60_000, lost: (_err, n) => lost.push(n) });
    await group.run(() => db.run("INSERT INTO t VALUES (1)"));
    await group.run(() => db.run("INSERT INTO child VALUES (99)"));
    group.settle();
    expect(lost).toEqual([2]);
    expect(db.inTransaction).toBe(false);
    await group.run(() => db.run("INSERT INTO t VALUES (2)"));
    group.settle();
    const reader = other();
    expect(values(reader)).toEqual([2]);
    reader.close();
    db.close();
    cleanup();
  });

  it("runs beforeCommit inside the held transaction, just before it commits; a throw there is a failed commit", async () => {
    const { db, other, cleanup } = fileDb();
    const lost: number[] = [];
    let fail = false;
    const group = new HeldGroupCommit(db, {
      holdMs: 60_000,
      lost: (_err, n) => lost.push(n),
      beforeCommit: () => {
        db.run("INSERT INTO t VALUES (100)");
        if (fail) throw new Error("no room");
      },
    });
    await group.run(() => db.run("INSERT INTO t VALUES (1)"));
    const reader = other();
    expect(values(reader)).toEqual([]);
    group.settle();
    expect(values(reader)).toEqual([1, 100]);
    fail = true;
    await group.run(() => db.run("INSERT INTO t VALUES (2)"));
    group.settle();
    expect(lost).toEqual([1]);
    expect(db.inTransaction).toBe(false);
    expect(values(reader)).toEqual([1, 100]);
    reader.close();
    db.close();
    cleanup();
  });

  it("a failing write rejects alone and the writes answered before it stay", async () => {
    const { db, other, cleanup } = fileDb();
    db.run("CREATE TABLE log (what TEXT)");
    let rolledBack = 0;
    const group = new HeldGroupCommit(db, { holdMs: 60_000, rolledBack: () => rolledBack++ });
    await group.run(() => {
      db.run("INSERT INTO t VALUES (1)");
      group.defer(() => db.run("INSERT INTO log VALUES ('one')"));
    });
    // Alone in its batch, then in a batch with others.
    await expect(
      group.run(() => {
        db.run("INSERT INTO t VALUES (5)");
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    const results = await Promise.allSettled([
      group.run(() => db.run("INSERT INTO t VALUES (2)")),
      group.run(() => {
        db.run("INSERT INTO t VALUES (6)");
        throw new Error("bang");
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
    await group.run(() => db.run("INSERT INTO t VALUES (3)"));
    group.settle();
    const reader = other();
    expect(values(reader)).toEqual([1, 2, 3]);
    // The first write's deferred row went in once, though its write ran again.
    expect(reader.query("SELECT what FROM log").all()).toEqual([{ what: "one" }]);
    // Its deferred write had run in a transaction that was rolled back: told.
    expect(rolledBack).toBeGreaterThan(0);
    reader.close();
    db.close();
    cleanup();
  });
});
