// The router's ingest and search API, end to end through the real process: the same suite
// on the embedded SQLite index and on a real PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { routerClient, ROUTER_TEST_TOKEN as TOKEN } from "./support/router-client";
import { createTestDatabase, requireServer, type TestDatabase } from "./support/servers";

type Json = Record<string, any>;

const backends: Array<{ name: string; env: () => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> } | null> }> = [
  { name: "SQLite (embedded default)", env: async () => ({ env: {}, cleanup: async () => {} }) },
  {
    name: "PostgreSQL",
    env: async () => {
      if (!(await requireServer("PostgreSQL"))) return null;
      const db: TestDatabase = await createTestDatabase();
      return { env: { DATABASE_URL: db.url }, cleanup: () => db.drop() };
    },
  },
];

for (const backend of backends) {
  describe(`router API on ${backend.name}`, () => {
    let main: MainProcess | undefined;
    let cleanup = async () => {};
    let vault = "";
    const api = routerClient(() => main!.routerUrl!);

    beforeAll(async () => {
      const setup = await backend.env();
      if (!setup) return;
      cleanup = setup.cleanup;
      vault = join(tempDir("router-api"), "vault");
      main = await startMain(
        ["--only", "router", "--vault", vault],
        { KB_ROUTER_TOKEN: TOKEN, INGEST_MAX_BYTES: "4096", ...setup.env },
        { expect: ["router"] },
      );
    });
    afterAll(async () => {
      await main?.stop();
      await cleanup();
    });
    const run = (name: string, fn: () => Promise<void>) => it(name, async () => (main ? fn() : undefined));

    run("finds an ingested note in the very next request", async () => {
      const ing = await api.ingest("# Canary deploys\nShip to one pod first and watch the error budget.", ["deploy"]);
      expect(ing.status).toBe(201);
      expect(ing.body).toMatchObject({ kind: "note", indexed: true, duplicate: false });
      expect(ing.body.id).toMatch(/^[0-9a-f]{16}$/);
      const found = await api.search("canary");
      expect(found.status).toBe(200);
      expect(found.body.mode).toBe("bm25");
      expect(found.body.hits[0]).toMatchObject({ path: ing.body.paths[0], producer: "ingest", title: "Canary deploys", tags: ["deploy"] });
      expect(found.body.hits[0].snippet).toContain("<mark>");
      expect(Date.parse(found.body.hits[0].updated_at)).not.toBeNaN();
    });

    run("writes the note as markdown with frontmatter inside the vault", async () => {
      const ing = await api.ingest("Body of a note about zeppelins.", ["air"], { title: "../../../etc/zeppelins", source: "slack" });
      expect(ing.status).toBe(201);
      const path = ing.body.paths[0] as string;
      expect(path).toMatch(/^ingest\/\d{4}-\d{2}-\d{2}\/etc-zeppelins-[0-9a-f]{8}\.md$/);
      const text = readFileSync(join(vault, path), "utf8");
      expect(text).toStartWith("---\n");
      expect(text).toContain("source: slack");
      expect(text).toContain("Body of a note about zeppelins.");
    });

    run("ranks a title match above a passing mention", async () => {
      await api.ingest("# Lunch\nWe talked about lunch, and somebody mentioned kubernetes once in passing among many other words about food and coffee.", []);
      await api.ingest("# Kubernetes\nCluster notes.", []);
      const found = await api.search("kubernetes");
      expect(found.body.hits.map((h: Json) => h.title)[0]).toBe("Kubernetes");
      expect(found.body.hits.length).toBeGreaterThanOrEqual(2);
      expect(found.body.hits[0].score).toBeGreaterThan(found.body.hits[1].score);
    });

    run("recognises the same content ingested twice and writes it once", async () => {
      const content = "Duplicate detection works on the content hash.";
      const first = await api.ingest(content, ["dup"]);
      const second = await api.ingest(content, ["dup"]);
      expect(first.status).toBe(201);
      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({ id: first.body.id, duplicate: true, paths: first.body.paths });
      const day = readdirSync(join(vault, "ingest"))[0]!;
      expect(readdirSync(join(vault, "ingest", day)).filter((f) => f.includes(first.body.id.slice(0, 8)))).toHaveLength(1);
      expect((await api.search('"duplicate detection"')).body.hits).toHaveLength(1);
    });

    run("recognises concurrent duplicate ingests", async () => {
      const content = "Concurrent duplicates must not double-write.";
      const results = await Promise.all(Array.from({ length: 5 }, () => api.ingest(content, [])));
      expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 201]);
    });

    run("fans a lesson out into the lesson log under left/reference/", async () => {
      const ing = await api.ingest("Pin base image digests; tags move under you.", ["lesson"]);
      expect(ing.body.kind).toBe("lesson");
      expect(ing.body.paths[1]).toMatch(/^left\/reference\/lessons-\d{4}-\d{2}-\d{2}\.md$/);
      const log = readFileSync(join(vault, ing.body.paths[1]), "utf8");
      expect(log).toContain("type: lesson-log");
      expect(log).toMatch(/## \d{4}-\d{2}-\d{2}T[^\n]+ — api — -\n\nPin base image digests/);
    });

    run("fans out decisions, signals and milestones to their folders", async () => {
      const decision = await api.ingest("Use Postgres for the index in production.", ["adr"]);
      expect(decision.body.paths[1]).toMatch(/^left\/decisions\/ADR-\d{4}-use-postgres-for-the-index-in-production\.md$/);
      expect(readFileSync(join(vault, decision.body.paths[1]), "utf8")).toContain("status: proposed");
      const signal = await api.ingest("---\nseverity: high\n---\nThe deploy pipeline is red.", ["incident"]);
      expect(signal.body.paths[1]).toMatch(/^amygdala\/\d{8}T\d{6}Z-high-the-deploy-pipeline-is-red\.md$/);
      const milestone = await api.ingest("@milestone v1 shipped to staging", []);
      expect(milestone.body.kind).toBe("milestone");
      expect(milestone.body.paths[1]).toMatch(/^daily\/\d{4}-\d{2}-\d{2}\.md$/);
    });

    run("supports phrases, tag: and producer: in queries", async () => {
      await api.ingest("The blue green switch flips traffic at the load balancer.", ["networking"]);
      await api.ingest("Green tea and blue cheese are not a deploy strategy.", ["food"]);
      const phrase = await api.search('"blue green"');
      expect(phrase.body.hits).toHaveLength(1);
      // FTS5 marks the phrase as one run, Postgres word by word: both mark exactly the phrase.
      expect(phrase.body.hits[0].snippet).toMatch(/<mark>blue(<\/mark> <mark>| )green<\/mark>/);
      const tagged = await api.search("blue tag:food");
      expect(tagged.body.hits.map((h: Json) => h.tags)).toEqual([["food"]]);
      expect((await api.search("blue producer:raw")).body.hits).toEqual([]);
      expect((await api.search("blue producer:ingest")).body.hits.length).toBe(2);
    });

    run("honours limit", async () => {
      for (let i = 0; i < 4; i++) await api.ingest(`Limit probe number ${i} about quokkas.`, []);
      expect((await api.search("quokkas", 2)).body.hits).toHaveLength(2);
    });

    run("never fails on hostile query text", async () => {
      for (const q of ['"', "*", "NEAR(a b)", "AND OR NOT", ":", "-", "a:b:c", "'; drop table docs; --", "ünïcödé 日本語"]) {
        const res = await api.search(q);
        expect(res.status).toBe(200);
      }
    });

    for (const [name, body, status, field] of [
      ["empty content", { content: "  ", tags: [] }, 400, "content"],
      ["missing content", { tags: [] }, 400, "content"],
      ["tags that are not strings", { content: "x", tags: [1] }, 400, "tags.0"],
      ["more than 32 tags", { content: "x", tags: Array.from({ length: 33 }, (_, i) => `t${i}`) }, 400, "tags"],
      ["a tag over 64 characters", { content: "x", tags: ["x".repeat(65)] }, 400, "tags.0"],
    ] as const) {
      run(`answers ${status} to ingest with ${name}`, async () => {
        const res = await api.call("/ingest", body);
        expect(res.status).toBe(status);
        expect(res.body.error.code).toBe("invalid_request");
        expect(res.body.error.details.map((d: Json) => d.path)).toContain(field);
      });
    }

    run("answers 413 to content over INGEST_MAX_BYTES and writes nothing", async () => {
      const before = existsSync(join(vault, "ingest")) ? readdirSync(join(vault, "ingest"), { recursive: true }).length : 0;
      const res = await api.ingest("y".repeat(5000));
      expect(res.status).toBe(413);
      expect(res.body.error.message).toContain("INGEST_MAX_BYTES");
      expect(readdirSync(join(vault, "ingest"), { recursive: true }).length).toBe(before);
    });

    run("fills the limit when only two notes hold every word, those two first; match all answers those two; scores read 0–1", async () => {
      const full = [
        await api.ingest("# Quokka lantern\nThe zephyr build broke when the quokka lantern service restarted.", ["rank"], { title: "Quokka lantern" }),
        await api.ingest("# Night shift\nZephyr alerts: lantern latency doubled, quokka queue drained by hand.", ["rank"], { title: "Night shift" }),
      ];
      for (let i = 0; i < 10; i++) {
        const word = ["zephyr", "quokka", "lantern"][i % 3];
        await api.ingest(`# Partial ${i}\nOnly ${word} here, ${word} and ${word} again, in note ${i}.`, ["rank"], { title: `Partial ${i} ${word}` });
      }
      const found = await api.search("zephyr quokka lantern");
      expect(found.status).toBe(200);
      const hits = found.body.hits as Json[];
      expect(hits.length).toBe(10);
      expect(
        hits
          .slice(0, 2)
          .map((h) => h.path)
          .sort(),
      ).toEqual(full.map((f) => f.body.paths[0]).sort());
      expect(hits.slice(0, 2).map((h) => h.coverage)).toEqual([1, 1]);
      expect(hits[2]!.coverage).toBeCloseTo(0.333, 3);
      expect(hits[0]!.score).toBe(1);
      for (const [i, h] of hits.entries()) {
        expect(h.score).toBeGreaterThanOrEqual(0);
        expect(h.score).toBeLessThanOrEqual(1);
        expect(Math.round(h.score * 1000) / 1000).toBe(h.score);
        if (i > 0) expect(h.score).toBeLessThanOrEqual(hits[i - 1]!.score);
      }
      const strict = await api.call("/search", { query: "zephyr quokka lantern", match: "all" });
      expect(strict.status).toBe(200);
      expect(strict.body.hits.map((h: Json) => h.path).sort()).toEqual(full.map((f) => f.body.paths[0]).sort());
      // The raw full-text score stays under explain.
      const explained = await api.call("/search", { query: "zephyr quokka lantern", explain: true });
      expect(explained.body.hits[0].score).toBe(1);
      expect(explained.body.hits[0].explain.bm25.score).toBeGreaterThan(0);
    });

    run("answers 400 to an unknown match mode", async () => {
      const res = await api.call("/search", { query: "x", match: "most" });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].path).toBe("match");
    });

    for (const [name, body, field] of [
      ["limit 0", { query: "x", limit: 0 }, "limit"],
      ["limit 101", { query: "x", limit: 101 }, "limit"],
      ["a fractional limit", { query: "x", limit: 2.5 }, "limit"],
      ["an empty query", { query: "" }, "query"],
    ] as const) {
      run(`answers 400 to search with ${name}`, async () => {
        const res = await api.call("/search", body);
        expect(res.status).toBe(400);
        expect(res.body.error.details[0].path).toBe(field);
      });
    }

    run("answers 400 naming an unknown producer", async () => {
      const res = await api.search("x producer:nonsense");
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain("nonsense");
    });

    run("answers 400 to malformed JSON", async () => {
      const res = await api.call("/search", '{"query": ');
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_json");
    });
  });
}
