import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { prng } from "../../../scripts/bench/lib/vault-gen.ts";
import { parseQuery } from "./query.ts";
import { openSqliteIndex, type SqliteIndexStore } from "./sqlite.ts";
import type { IndexDoc, SearchHit } from "./types.ts";

// Words drawn with a skew: the first few are in most notes (long lists, deeper than the
// depth the tests give the store), the last in a handful.
const WORDS = "deploy rollback canary incident postgres vacuum token latency cache shard queue pager okta ledger zebra quokka".split(" ");
const TAGS = ["ops", "db", "auth", "misc"];

function corpus(count: number): IndexDoc[] {
  const rng = prng(21);
  const word = () => WORDS[Math.floor(rng() ** 2.5 * WORDS.length)]!;
  return Array.from({ length: count }, (_, i) => {
    const title = Array.from({ length: 1 + Math.floor(rng() * 3) }, word).join(" ");
    const body = Array.from({ length: 10 + Math.floor(rng() * 120) }, () => (rng() < 0.5 ? word() : `filler${Math.floor(rng() * 50)}`)).join(" ");
    return {
      path: `notes/n${i}.md`,
      producer: rng() < 0.7 ? "raw" : "ingest",
      title,
      body,
      tags: [TAGS[Math.floor(rng() * TAGS.length)]!],
      updatedAt: new Date(1_700_000_000_000 + i * 1000),
      hash: `h${i}`,
    } satisfies IndexDoc;
  });
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
    fast.champions.counts.answered = 0;
    fast.champions.counts.fellBack = 0;
    await compare(10);
    await compare(3);
    await compare(40);
    // Both ways were taken (so the comparison above covered each).
    expect(fast.champions.counts.answered).toBeGreaterThan(QUERIES.length);
    expect(fast.champions.counts.fellBack).toBeGreaterThan(0);
  });

  it("keeps the exact top-k of a single word from its list alone, without the full query", async () => {
    const query = parseQuery("deploy");
    await fast.search(query, 10);
    const before = fast.champions.counts.answered;
    const hits = await fast.search(query, 10);
    expect(fast.champions.counts.answered).toBe(before + 1);
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
      expect(store.champions.counts).toEqual({ answered: 0, fellBack: 2 });
      expect(hits).toHaveLength(30);
      expect(view(hits)).toEqual(expected);
      // Its list is now 96 deep: the same query is answered from it, with the same hits.
      expect(view(await store.search(query, 30))).toEqual(expected);
      expect(store.champions.counts).toEqual({ answered: 1, fellBack: 2 });
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
});
