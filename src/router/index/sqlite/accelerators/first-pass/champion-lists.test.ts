import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { getPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { prng } from "../../../../../../test/support/vault-gen.ts";
import { parseQuery } from "../../../query.ts";
import type { IndexDoc, SearchHit } from "../../../types.ts";
import { openSqliteIndex, type SqliteIndexStore } from "../../store.ts";

// Words drawn with a skew: the first few are in most notes (long lists, deeper than the
// depth the tests give the store), the last in a handful.
const WORDS = "deploy rollback canary incident postgres vacuum token latency cache shard queue pager okta ledger zebra quokka".split(" ");
const TAGS = ["ops", "db", "auth", "misc"];

function corpus(count: number): IndexDoc[] {
  const rng = prng(21);
  return Array.from({ length: count }, (_, i) => note(rng, `notes/n${i}.md`, i));
}

/** A note at `path` with words drawn from `rng` (the i-th: its time and hash). */
function note(rng: () => number, path: string, i: number): IndexDoc {
  const word = () => WORDS[Math.floor(rng() ** 2.5 * WORDS.length)]!;
  const title = Array.from({ length: 1 + Math.floor(rng() * 3) }, word).join(" ");
  const body = Array.from({ length: 10 + Math.floor(rng() * 120) }, () => (rng() < 0.5 ? word() : `filler${Math.floor(rng() * 50)}`)).join(" ");
  return {
    path,
    producer: rng() < 0.7 ? "raw" : "ingest",
    title,
    body,
    tags: [TAGS[Math.floor(rng() * TAGS.length)]!],
    updatedAt: new Date(1_700_000_000_000 + i * 1000),
    hash: `h${i}`,
  };
}

const QUERIES = [
  "deploy",
  "rollback",
  "canary",
  "zebra",
  "quokka",
  "deploy rollback",
  "deploy canary incident",
  "postgres vacuum",
  '"deploy rollback"',
  '"canary deploy" incident',
  "token okta",
  "ledger zebra quokka",
  "tag:ops deploy",
  "tag:db rollback canary",
  "producer:ingest deploy",
  "tag:auth producer:raw incident",
  "nomatch deploy",
];

const view = (hits: SearchHit[]) => hits.map((h) => ({ path: h.path, id: h.id, snippet: h.snippet }));

describe("SQLite search: the champion-list first pass", () => {
  let dataDir: string;
  let fast: SqliteIndexStore;
  let full: SqliteIndexStore;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "index-champions-"));
    // A depth far below the common words' matches, so most lists are partial and the
    // threshold check decides.
    fast = await openSqliteIndex({ dataDir, champions: { depth: 24 } });
    await Promise.all(corpus(600).map((d) => fast.upsert(d)));
    full = await openSqliteIndex({ dataDir, champions: { depth: 0 } });
  });
  afterAll(async () => {
    await fast.close();
    await full.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Each query through both stores (the first pass runs from a store's second search on). */
  async function compare(limit: number) {
    for (const q of QUERIES) await fast.search(parseQuery(q), limit);
    for (const q of QUERIES) {
      const query = parseQuery(q);
      const a = await fast.search(query, limit);
      const b = await full.search(query, limit);
      expect({ q, hits: view(a) }).toEqual({ q, hits: view(b) });
      for (const [i, h] of a.entries()) expect(h.score).toBeCloseTo(b[i]!.score, 9);
    }
  }

  it("answers each query with the full bm25 ranking's hits, scores and snippets, answering some from the lists and falling back for others", async () => {
    fast.champions!.counts.answered = 0;
    fast.champions!.counts.fellBack = 0;
    await compare(10);
    await compare(3);
    await compare(40);
    // Both ways were taken (so the comparison above covered each).
    expect(fast.champions!.counts.answered).toBeGreaterThan(QUERIES.length);
    expect(fast.champions!.counts.fellBack).toBeGreaterThan(0);
  });

  it("keeps the exact top-k of a single word from its list alone, without the full query", async () => {
    const query = parseQuery("deploy");
    await fast.search(query, 10);
    const before = fast.champions!.counts.answered;
    const hits = await fast.search(query, 10);
    expect(fast.champions!.counts.answered).toBe(before + 1);
    expect(view(hits)).toEqual(view(await full.search(query, 10)));
  });

  it("falls back to the full query when the lists cannot prove the top k, then answers from a list built deeper", async () => {
    // A store of its own (the other tests' searches deepen the shared one's lists).
    const store = await openSqliteIndex({ dataDir, champions: { depth: 24 } });
    try {
      // Deeper than a first list: they hold 24 each, and "deploy" matches far more.
      const query = parseQuery("deploy");
      const expected = view(await full.search(query, 30));
      await store.search(query, 30);
      const hits = await store.search(query, 30);
      expect(store.champions!.counts).toEqual({ answered: 0, fellBack: 2, built: 1 });
      expect(hits).toHaveLength(30);
      expect(view(hits)).toEqual(expected);
      // Its list now holds every match (counted before the build): the same query is answered
      // from it, with the same hits.
      expect(view(await store.search(query, 30))).toEqual(expected);
      expect(store.champions!.counts).toEqual({ answered: 1, fellBack: 2, built: 2 });
      // So any limit is answered from it, without another build.
      expect(view(await store.search(query, 200))).toEqual(view(await full.search(query, 200)));
      expect(store.champions!.counts).toEqual({ answered: 2, fellBack: 2, built: 2 });
    } finally {
      await store.close();
    }
    // With room for 100 entries, the whole list does not fit: it is built 4× deeper (96),
    // enough for the top 30 here.
    const small = await openSqliteIndex({ dataDir, champions: { depth: 24, maxEntries: 200 } });
    try {
      const query = parseQuery("deploy");
      const expected = view(await full.search(query, 30));
      await small.search(query, 30);
      await small.search(query, 30);
      expect(view(await small.search(query, 30))).toEqual(expected);
      expect(small.champions!.counts).toEqual({ answered: 1, fellBack: 2, built: 2 });
      // 96 do not prove a top 200: the full query answers it.
      expect(view(await small.search(query, 200))).toEqual(view(await full.search(query, 200)));
      expect(small.champions!.counts).toEqual({ answered: 1, fellBack: 3, built: 2 });
    } finally {
      await small.close();
    }
  });

  it("a query asked again after others pushed its deeper list out gets it back, instead of running the full query from then on", async () => {
    // 200 entries: "deploy"'s top 30 needs a list of 96, and five other words' lists of 24
    // push it out (least recently used first), leaving the budget more than half full.
    const store = await openSqliteIndex({ dataDir, champions: { depth: 24, maxEntries: 200 } });
    try {
      const query = parseQuery("deploy");
      const expected = view(await full.search(query, 30));
      await store.search(query, 30);
      await store.search(query, 30);
      expect(view(await store.search(query, 30))).toEqual(expected);
      const answered = store.champions!.counts.answered;
      expect(answered).toBe(1);
      for (const word of ["rollback", "canary", "incident", "postgres", "vacuum"]) await store.search(parseQuery(word), 10);
      const built = store.champions!.counts.built;
      // Built again at the first depth, too shallow: the full query answers, and the list is
      // built deeper for the next time, as the first time.
      expect(view(await store.search(query, 30))).toEqual(expected);
      expect(view(await store.search(query, 30))).toEqual(expected);
      expect(store.champions!.counts.built).toBe(built + 2);
      const before = store.champions!.counts.answered;
      expect(view(await store.search(query, 30))).toEqual(expected);
      expect(store.champions!.counts.answered).toBe(before + 1);
    } finally {
      await store.close();
    }
  });

  it("with filters that few of a word's best notes pass, answers with every hit the full query finds, not only those among the notes it checked", async () => {
    // Complete lists (deeper than any word's matches), and only the best 64 checked against
    // the filters: fewer than the limit of those pass, so the full query must intersect.
    const store = await openSqliteIndex({ dataDir, champions: { depth: 4096, maxFilterChecks: 64 } });
    try {
      const query = parseQuery("tag:auth producer:ingest deploy");
      const expected = view(await full.search(query, 40));
      expect(expected.length).toBeGreaterThan(20);
      await store.search(query, 40);
      expect(view(await store.search(query, 40))).toEqual(expected);
      // A limit the checked notes do fill is answered from the list.
      const few = await store.search(query, 2);
      expect(view(few)).toEqual(view(await full.search(query, 2)));
      expect(store.champions!.counts.answered).toBe(1);
    } finally {
      await store.close();
    }
  });

  it("forgets its lists when the index changes, from this store or another connection", async () => {
    const query = parseQuery("deploy");
    await fast.search(query, 5);
    await fast.search(query, 5);
    const best: IndexDoc = {
      path: "notes/best.md",
      producer: "raw",
      title: "deploy deploy deploy",
      body: "deploy deploy deploy deploy",
      tags: [],
      updatedAt: new Date(),
      hash: "best",
    };
    // Written through the other connection: this store's lists would not have it.
    await full.upsert(best);
    expect((await fast.search(query, 5))[0]?.path).toBe("notes/best.md");
    expect((await fast.search(query, 5))[0]?.path).toBe("notes/best.md");
    await fast.remove("notes/best.md");
    expect((await fast.search(query, 5)).map((h) => h.path)).not.toContain("notes/best.md");
    await full.remove("notes/none.md");
    expect(view(await fast.search(query, 5))).toEqual(view(await full.search(query, 5)));
  });

  it("keeps its lists across this store's own writes: after each insert, update or delete the next search is answered from them, with the full query's hits and scores", async () => {
    const dir = await mkdtemp(join(tmpdir(), "index-champions-live-"));
    // Two stores writing: one keeps its lists until 4,096 documents are written, one drops
    // them after every 7 (and builds them again), with room for few lists and fewer rescored
    // ones (so they are pushed out and worked out again).
    const live = await openSqliteIndex({ dataDir: dir, champions: { depth: 24 } });
    const reset = await openSqliteIndex({ dataDir: join(dir, "reset"), champions: { depth: 24, maxWritten: 7, maxEntries: 300 } });
    const reference = await openSqliteIndex({ dataDir: dir, champions: { depth: 0 } });
    const referenceReset = await openSqliteIndex({ dataDir: join(dir, "reset"), champions: { depth: 0 } });
    try {
      const docs = corpus(300);
      await Promise.all(docs.flatMap((d) => [live.upsert(d), reset.upsert(d)]));
      for (const q of QUERIES) for (const store of [live, reset]) await store.search(parseQuery(q), 10);
      for (const q of QUERIES) for (const store of [live, reset]) await store.search(parseQuery(q), 10);
      const rng = prng(99);
      const paths = docs.map((d) => d.path);
      const before = { ...live.champions!.counts };
      let round = 0;
      for (const q of [...QUERIES, ...QUERIES, ...QUERIES, ...QUERIES]) {
        round++;
        // One write before every search: an insert, an update (new words) or a delete, and
        // now and then a note that is the best match for the commonest word; every other
        // run of 8 searches, new notes only (an index only added to counts its matches apart).
        const r = Math.floor(round / 8) % 2 === 0 ? rng() * 0.35 : rng();
        let write: IndexDoc | string;
        if (r < 0.35) write = note(rng, `notes/new${round}.md`, 1000 + round);
        else if (r < 0.65) write = { ...note(rng, paths[Math.floor(rng() * paths.length)]!, 2000 + round), hash: `u${round}` };
        else if (r < 0.9) write = paths.splice(Math.floor(rng() * paths.length), 1)[0]!;
        else write = { ...note(rng, `notes/best${round}.md`, 3000 + round), title: "deploy deploy deploy", body: "deploy ".repeat(40 + round) };
        // Every 6th, a long note of filler alone: the average length grows, long notes' scores
        // rise against short ones', and the lists' order moves.
        if (round % 6 === 0) write = { ...note(rng, `notes/long${round}.md`, 4000 + round), body: "filler7 ".repeat(3000) };
        for (const store of [live, reset]) await (typeof write === "string" ? store.remove(write) : store.upsert(write));
        if (typeof write !== "string") paths.push(write.path);
        // Now and then, a note written and deleted before the next search, and another in its
        // place (SQLite gives it the same rowid): one document id, three writes.
        if (round % 10 === 5) {
          const brief = note(rng, `notes/brief${round}.md`, 5000 + round);
          const after = { ...note(rng, `notes/after${round}.md`, 6000 + round), title: "deploy rollback" };
          for (const store of [live, reset]) {
            await store.upsert(brief);
            await store.remove(brief.path);
            await store.upsert(after);
          }
          paths.push(`notes/after${round}.md`);
        }
        const query = parseQuery(q);
        for (const limit of [10, 3]) {
          for (const [store, ref] of [
            [live, reference],
            [reset, referenceReset],
          ] as const) {
            const a = await store.search(query, limit);
            const b = await ref.search(query, limit);
            expect({ q, limit, hits: view(a) }).toEqual({ q, limit, hits: view(b) });
            for (const [i, h] of a.entries()) expect(h.score).toBe(b[i]!.score);
          }
        }
      }
      // Most searches were answered from the lists, and few lists were built again (only
      // deeper ones): lists dropped at every write would be built again at every search.
      const answered = live.champions!.counts.answered - before.answered;
      const fellBack = live.champions!.counts.fellBack - before.fellBack;
      const built = live.champions!.counts.built - before.built;
      expect(answered).toBeGreaterThan(fellBack);
      expect(built).toBeLessThan(round / 4);
      // The store that drops its lists every 7 writes built them again about that often.
      expect(reset.champions!.counts.built).toBeGreaterThan(built + round / 7);
    } finally {
      for (const s of [live, reset, reference, referenceReset]) await s.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("SQLite search: champion lists built in a worker thread", () => {
  let dataDir: string;
  let bg: SqliteIndexStore;
  let full: SqliteIndexStore;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "index-champions-bg-"));
    bg = await openSqliteIndex({ dataDir, champions: { depth: 24 }, backgroundListBuilds: true });
    await Promise.all(corpus(600).map((d) => bg.upsert(d)));
    full = await openSqliteIndex({ dataDir, champions: { depth: 0 } });
  });
  afterAll(async () => {
    await bg.close();
    await full.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function same(q: string, limit: number) {
    const query = parseQuery(q);
    const a = await bg.search(query, limit);
    const b = await full.search(query, limit);
    expect({ q, limit, hits: view(a) }).toEqual({ q, limit, hits: view(b) });
    for (const [i, h] of a.entries()) expect(h.score).toBe(b[i]!.score);
  }

  it("answers with the full query while a list is built, then from the lists: every answer the full query's, bit for bit", async () => {
    for (const q of QUERIES) await same(q, 10);
    // Sent to the worker, not built here: nothing was answered from a list yet.
    expect(bg.champions!.counts.answered).toBe(0);
    expect(bg.champions!.counts.built).toBe(0);
    await bg.champions!.idle();
    expect(bg.champions!.counts.built).toBeGreaterThan(10);
    for (let pass = 0; pass < 3; pass++) {
      for (const q of QUERIES) for (const limit of [10, 3, 40]) await same(q, limit);
      await bg.champions!.idle();
    }
    expect(bg.champions!.counts.answered).toBeGreaterThan(QUERIES.length);
  });

  it.if(process.platform === "linux")("builds at a lower priority (nice 10), and leaves the searching thread's as it was", async () => {
    const before = getPriority(0);
    // The first search of a store reads the index's state; the next sends its words' builds.
    for (let i = 0; i < 2; i++) await bg.search(parseQuery("quokka ledger pager"), 10);
    await bg.champions!.idle();
    expect(bg.champions!.counts.built).toBeGreaterThan(0);
    // Each thread's nice value (field 19 of its stat, the 17th after the command's closing parenthesis).
    const nice = (tid: string) => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
    };
    const threads = readdirSync("/proc/self/task");
    expect(threads.some((tid) => nice(tid) === 10)).toBe(true);
    expect(nice(String(process.pid))).toBe(before);
  });

  it("stays exact while notes are written between searches and lists come back from the worker at any moment", async () => {
    // The router's settings: lists built in the worker, commits held. Every search is compared
    // with the full query's over the same writes, scores bit for bit.
    const dir = join(dataDir, "mixed");
    const store = await openSqliteIndex({ dataDir: dir, champions: { depth: 24 }, backgroundListBuilds: true, holdCommitMs: 10 });
    const reference = await openSqliteIndex({ dataDir: join(dir, "reference"), champions: { depth: 0 } });
    try {
      const docs = corpus(300);
      for (const d of docs) {
        await store.upsert(d);
        await reference.upsert(d);
      }
      const rng = prng(7);
      const paths = docs.map((d) => d.path);
      for (let round = 0; round < 160; round++) {
        const r = rng();
        let write: IndexDoc | string;
        if (r < 0.4) write = note(rng, `notes/new${round}.md`, 1000 + round);
        else if (r < 0.7) write = { ...note(rng, paths[Math.floor(rng() * paths.length)]!, 2000 + round), hash: `u${round}` };
        else if (r < 0.85) write = paths.splice(Math.floor(rng() * paths.length), 1)[0]!;
        else write = { ...note(rng, `notes/best${round}.md`, 3000 + round), title: "deploy canary deploy", body: "deploy canary ".repeat(20 + round) };
        for (const s of [store, reference]) await (typeof write === "string" ? s.remove(write) : s.upsert(write));
        if (typeof write !== "string") paths.push(write.path);
        const q = QUERIES[Math.floor(rng() * QUERIES.length)]!;
        for (const limit of [10, 1]) {
          const a = await store.search(parseQuery(q), limit);
          const b = await reference.search(parseQuery(q), limit);
          expect({ round, q, limit, hits: view(a) }).toEqual({ round, q, limit, hits: view(b) });
          for (const [i, h] of a.entries()) expect(h.score).toBe(b[i]!.score);
        }
        // Now and then the worker's lists are let in before the next write.
        if (round % 5 === 0) await store.champions!.idle();
      }
      expect(store.champions!.counts.built).toBeGreaterThan(10);
      expect(store.champions!.counts.answered).toBeGreaterThan(60);
    } finally {
      await store.close();
      await reference.close();
    }
  });

  it("keeps a list the worker built while this store wrote, scoring the written notes apart: the answer holds the new note", async () => {
    // Commits held: the worker cannot see the write, so only the store's own log of it can
    // put the new note in the answer.
    const store = await openSqliteIndex({ dataDir: join(dataDir, "moved"), champions: { depth: 24 }, backgroundListBuilds: true, holdCommitMs: 60_000 });
    const reference = await openSqliteIndex({ dataDir: join(dataDir, "moved"), champions: { depth: 0 } });
    try {
      await Promise.all(corpus(300).map((d) => store.upsert(d)));
      const query = parseQuery("quokka");
      await store.search(query, 5); // the first search reads the index's state
      await store.search(query, 5); // sends "quokka" to the worker
      // Written before the worker's answer is read: the best "quokka" note there is.
      const best: IndexDoc = { ...corpus(1)[0]!, path: "notes/best-quokka.md", title: "quokka quokka quokka", body: "quokka ".repeat(60), hash: "best" };
      await store.upsert(best);
      await store.champions!.idle();
      expect(store.champions!.counts.built).toBe(1);
      // The best alone (no tie at the first place): answered from the kept list.
      const answered = store.champions!.counts.answered;
      const top = await store.search(query, 1);
      expect(store.champions!.counts.answered).toBe(answered + 1);
      expect(top.map((h) => h.path)).toEqual(["notes/best-quokka.md"]);
      expect(view(top)).toEqual(view(await reference.search(query, 1)));
      expect(view(await store.search(query, 5))).toEqual(view(await reference.search(query, 5)));
      expect(store.champions!.counts.built).toBe(1);
    } finally {
      await store.close();
      await reference.close();
    }
  });
});
