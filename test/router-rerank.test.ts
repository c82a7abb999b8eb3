// POST /search's rerank stage and explain (issue 21 part 4), against the fixture reranker over
// real HTTP in both wire formats (TEI and Cohere/Jina/llama.cpp) and the fixture LLM gateway:
// the blend's order, an exact match kept on top under an adversarial reranker, the fallback to
// the fused order (and the response saying so) for a slow, failing or nonsensical reranker, and
// every stage's scores and ranks with explain; router-cli search --explain against a live router.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { httpReranker, parseRerankResponse } from "../src/router/search/rerank";
import { type Gateway, startGateway } from "./fixtures/openai-gateway";
import { overlapScore, type RerankerFixture, startRerankerFixture } from "./fixtures/reranker";
import { type MainProcess, REPO, startMain, tempDir } from "./support/main-process";
import { ROUTER_TEST_TOKEN } from "./support/router-client";
import { type TestRouter, useTestRouters } from "./support/router-runtime";

type Json = Record<string, any>;
const router = useTestRouters();
let fixture: RerankerFixture;
beforeAll(() => {
  fixture = startRerankerFixture({ apiKey: "rr-key" });
});
afterAll(() => fixture.stop());

const reset = () => {
  fixture.mode("overlap");
  fixture.scorer(overlapScore);
  fixture.failWith(0);
  fixture.delay(0);
  fixture.garble(null);
  fixture.requests.length = 0;
};

/** Twelve notes that all match "widget": their titles give BM25 its order (the title weighs ten times the body). */
async function widgetVault(r: TestRouter): Promise<void> {
  const notes = [
    { title: "Widget widget widget", body: "The exact widget note: widget widget." },
    ...Array.from({ length: 11 }, (_, i) => ({
      title: `Note ${String.fromCharCode(97 + i)}`,
      body: `A note that mentions the widget once, among other words. marker-${String.fromCharCode(97 + i)}`,
    })),
  ];
  for (const n of notes) {
    const res = await r.call("/ingest", { content: `# ${n.title}\n${n.body}`, title: n.title });
    expect(res.status).toBe(201);
  }
}

const titles = (body: Json) => body.hits.map((h: Json) => h.title as string);

describe("the fixture reranker's wire formats, read by the router's client", () => {
  it("TEI: {query, texts} → [{index, score}] best first", async () => {
    reset();
    const rr = httpReranker({ url: fixture.url, apiKey: "rr-key", format: "texts", depth: 40, timeoutMs: 2000 });
    const scores = await rr.score("deploy rollback", ["nothing here", "rollback a deploy", "deploy"], AbortSignal.timeout(2000));
    expect(fixture.requests[0]).toMatchObject({
      path: "/rerank",
      body: { query: "deploy rollback", texts: ["nothing here", "rollback a deploy", "deploy"] },
      authorization: "Bearer rr-key",
    });
    expect(scores[1]!).toBeGreaterThan(scores[2]!);
    expect(scores[2]!).toBeGreaterThan(scores[0]!);
  });

  it("Cohere/Jina/llama.cpp: {model, query, documents, top_n} → {results: [{index, relevance_score}]}", async () => {
    reset();
    const rr = httpReranker({ url: `${fixture.url}/v1/rerank`, apiKey: "rr-key", model: "jina-reranker-v2", format: "documents", depth: 40, timeoutMs: 2000 });
    const scores = await rr.score("deploy rollback", ["nothing here", "rollback a deploy"], AbortSignal.timeout(2000));
    expect(fixture.requests[0]).toMatchObject({
      path: "/v1/rerank",
      body: { model: "jina-reranker-v2", query: "deploy rollback", documents: ["nothing here", "rollback a deploy"], top_n: 2 },
    });
    expect(scores[1]!).toBeGreaterThan(scores[0]!);
  });

  it("reads a partial answer (a smaller top_n) and refuses out-of-range, repeated or non-numeric entries", () => {
    expect(parseRerankResponse({ results: [{ index: 1, relevance_score: 0.9 }] }, 3)).toEqual([Number.NaN, 0.9, Number.NaN]);
    expect(
      parseRerankResponse(
        [
          { index: 0, score: -2.5 },
          { index: 1, score: 3 },
        ],
        2,
      ),
    ).toEqual([-2.5, 3]);
    expect(() => parseRerankResponse([{ index: 2, score: 1 }], 2)).toThrow(/index 2 for 2 documents/);
    expect(() =>
      parseRerankResponse(
        [
          { index: 0, score: 1 },
          { index: 0, score: 2 },
        ],
        2,
      ),
    ).toThrow(/twice/);
    expect(() => parseRerankResponse({ results: [{ index: 0, relevance_score: "x" }] }, 1)).toThrow(/score "x"/);
    expect(() => parseRerankResponse({ detail: "nope" }, 1)).toThrow(/no results list/);
  });
});

describe("POST /search with RERANK_URL", () => {
  const env = (extra: Record<string, string> = {}) => ({ RERANK_URL: fixture.url, RERANK_API_KEY: "rr-key", RERANK_FORMAT: "texts", ...extra });

  it("moves the hits the reranker prefers up by the position blend, and never above retrieval's first", async () => {
    reset();
    const r = await router(env());
    await widgetVault(r);
    const plain = await r.call("/search", { query: "widget", limit: 12, rerank: false });
    expect(plain.status).toBe(200);
    expect(plain.body.rerank).toBeUndefined(); // not asked: the fused order, unannotated
    const said = await r.call("/search", { query: "widget", limit: 12, rerank: false, explain: true });
    expect(said.body.rerank).toEqual({ applied: false, reason: "the request turned it off (rerank: false)", kind: "http" });
    expect(fixture.requests).toHaveLength(0);
    const fusedOrder = titles(plain.body);
    expect(fusedOrder[0]).toBe("Widget widget widget");
    // The reranker likes two notes BM25 put last, one more than the other.
    const [liked, liked2] = [fusedOrder[11]!, fusedOrder[10]!];
    const raw = (text: string) => (text.includes(liked) ? 5 : text.includes(liked2) ? 4 : 1);
    fixture.scorer((_, text) => raw(text));

    const res = await r.call("/search", { query: "widget", limit: 12 });
    expect(res.status).toBe(200);
    expect(res.body.rerank).toMatchObject({ applied: true, kind: "http", candidates: 12 });
    expect(fixture.requests.at(-1)!.body).toMatchObject({ query: "widget" });
    expect(fixture.requests.at(-1)!.body.texts).toHaveLength(12);
    // Expected by the documented formula from the fused ranks and the reranker's raw scores:
    // w(r)/r + (1 − w(r))·s, s = raw scaled 0–1 (1 → 0, 4 → 0.75, 5 → 1).
    const w = (rank: number) => (rank <= 3 ? 0.75 : rank <= 10 ? 0.6 : 0.4);
    const expected = (fusedOrder as string[])
      .map((t, i) => ({ t, v: w(i + 1) / (i + 1) + (1 - w(i + 1)) * ((raw(t) - 1) / 4) }))
      .sort((a, b) => b.v - a.v)
      .map((x) => x.t);
    expect(titles(res.body)).toEqual(expected);
    expect(titles(res.body)[0]).toBe("Widget widget widget");
    expect(titles(res.body).indexOf(liked)).toBe(1); // from 12th to 2nd
    expect(titles(res.body).indexOf(liked2)).toBe(2);
    // Scores follow the new order.
    const scores = res.body.hits.map((h: Json) => h.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it("keeps an exact match first under an adversarial reranker (the Cohere/Jina shape)", async () => {
    reset();
    const r = await router(env({ RERANK_FORMAT: "documents", RERANK_MODEL: "rerank-v3.5" }));
    await r.call("/ingest", { content: "# Rollback runbook\nThe rollback runbook: revert the release, then drain the canary.", title: "Rollback runbook" });
    for (let i = 0; i < 6; i++) {
      await r.call("/ingest", {
        content: `# Incident ${i}\nWe needed the rollback runbook during incident ${i}; rollback took ${i + 2} minutes.`,
        title: `Incident ${i}`,
      });
    }
    fixture.mode("inverse");
    const res = await r.call("/search", { query: '"rollback runbook"', limit: 7, explain: true });
    expect(res.status).toBe(200);
    expect(res.body.rerank).toMatchObject({ applied: true, model: "rerank-v3.5" });
    expect(fixture.requests.at(-1)!.body).toMatchObject({ model: "rerank-v3.5", top_n: 7 });
    expect(res.body.hits[0].title).toBe("Rollback runbook");
    // The reranker did rank it last of all.
    expect(res.body.hits[0].explain.rerank.rank).toBe(7);
    expect(res.body.hits[0].explain.fused.rank).toBe(1);
  });

  const fallbacks: Array<[string, () => void, RegExp]> = [
    ["answers 500", () => fixture.failWith(500), /answered 500/],
    ["answers HTML", () => fixture.garble("not-json"), /not JSON/],
    ["names an index it was not sent", () => fixture.garble("bad-index"), /index \d+ for \d+ documents/],
    ["answers no results list", () => fixture.garble("no-results"), /no results list/],
    ["answers a score that is not a number", () => fixture.garble("nan-score"), /gives document \d+ the score/],
  ];
  for (const [what, arrange, reason] of fallbacks) {
    it(`answers the fused order and says why when the reranker ${what}`, async () => {
      reset();
      const r = await router(env());
      await widgetVault(r);
      fixture.mode("inverse");
      const fused = titles((await r.call("/search", { query: "widget", limit: 12, rerank: false })).body);
      arrange();
      const res = await r.call("/search", { query: "widget", limit: 12 });
      expect(res.status).toBe(200);
      expect(res.body.rerank.applied).toBe(false);
      expect(res.body.rerank.reason).toMatch(reason);
      expect(titles(res.body)).toEqual(fused);
    });
  }

  it("gives up on a slow reranker within RERANK_TIMEOUT_MS and says so", async () => {
    reset();
    const r = await router(env({ RERANK_TIMEOUT_MS: "300" }));
    await widgetVault(r);
    fixture.mode("inverse");
    const fused = titles((await r.call("/search", { query: "widget", limit: 12, rerank: false })).body);
    fixture.delay(5_000);
    const started = performance.now();
    const res = await r.call("/search", { query: "widget", limit: 12, explain: true });
    const took = performance.now() - started;
    expect(res.status).toBe(200);
    expect(res.body.rerank).toMatchObject({ applied: false, reason: "the reranker did not answer within 300 ms (RERANK_TIMEOUT_MS)" });
    expect(took).toBeLessThan(3_000);
    expect(titles(res.body)).toEqual(fused);
    expect(res.body.hits.every((h: Json) => h.explain.rerank === null)).toBe(true);
  });

  it("falls back when the reranker is unreachable", async () => {
    reset();
    const dead = startRerankerFixture();
    dead.stop();
    const r = await router(env({ RERANK_URL: dead.url }));
    await widgetVault(r);
    const res = await r.call("/search", { query: "widget" });
    expect(res.status).toBe(200);
    expect(res.body.rerank.applied).toBe(false);
    expect(res.body.rerank.reason).toMatch(/unreachable/);
    expect(res.body.hits).toHaveLength(10);
  });

  it("does not rerank a query of filters alone, and says so", async () => {
    reset();
    const r = await router(env());
    await r.call("/ingest", { content: "# Tagged\nbody", tags: ["ops"] });
    const res = await r.call("/search", { query: "tag:ops" });
    expect(res.body.rerank).toMatchObject({ applied: false, reason: expect.stringMatching(/filters only/) });
    expect(res.body.hits).toHaveLength(1);
    expect(fixture.requests).toHaveLength(0);
  });

  it("sends the reranker each hit's title, matched passage and the note's text, and the query without filters", async () => {
    reset();
    const r = await router(env());
    await r.call("/ingest", { content: "# Pager duty\nWho carries the pager: the on-call engineer, rotating weekly.", tags: ["ops"], title: "Pager duty" });
    await r.call("/search", { query: "pager tag:ops" });
    const sent = fixture.requests.at(-1)!.body;
    expect(sent.query).toBe("pager");
    expect(sent.texts[0]).toStartWith("Pager duty\n\n");
    expect(sent.texts[0]).toContain("rotating weekly");
    expect(sent.texts[0]).not.toContain("<mark>");
  });
});

describe("explain", () => {
  it("gives each hit its BM25, fused and rerank scores and ranks", async () => {
    reset();
    const r = await router({ RERANK_URL: fixture.url, RERANK_API_KEY: "rr-key" });
    await widgetVault(r);
    const res = await r.call("/search", { query: "widget", limit: 12, explain: true });
    expect(res.status).toBe(200);
    const plain = await r.call("/search", { query: "widget", limit: 12, rerank: false });
    // The answer's score is relative to its best hit; each stage's raw score is under explain.
    const hits = res.body.hits as Json[];
    const bestBm25 = Math.max(...hits.map((h) => h.explain.bm25.score));
    const bestBlend = Math.max(...hits.map((h) => h.explain.rerank.blended));
    const rel = (x: number, best: number) => Math.round((x / best) * 1000) / 1000;
    expect(hits[0]!.score).toBe(1);
    for (const h of hits) {
      const e = h.explain;
      const fusedAt = plain.body.hits.findIndex((p: Json) => p.path === h.path);
      expect(e.bm25.rank).toBe(fusedAt + 1);
      expect(plain.body.hits[fusedAt].score).toBe(rel(e.bm25.score, bestBm25));
      expect(e.vector).toBeNull(); // bm25 mode
      expect(e.fused).toEqual(e.bm25);
      expect(h.score).toBe(rel(e.rerank.blended, bestBlend));
      expect(e.rerank.retrieval_weight).toBe(e.fused.rank <= 3 ? 0.75 : e.fused.rank <= 10 ? 0.6 : 0.4);
      expect(e.rerank.score).toBeGreaterThanOrEqual(0);
      expect(e.rerank.score).toBeLessThanOrEqual(1);
      expect(typeof e.rerank.raw_score).toBe("number");
    }
    const rerankRanks = res.body.hits.map((h: Json) => h.explain.rerank.rank).sort((a: number, b: number) => a - b);
    expect(rerankRanks[0]).toBe(1);
  });

  it("shows the vector stage in hybrid mode, and says no reranker is configured", async () => {
    const gateway: Gateway = startGateway({ dim: 32 });
    try {
      const r = await router({ EMBEDDINGS_URL: gateway.url, EMBEDDINGS_DIM: "32" });
      await widgetVault(r);
      const res = await r.call("/search", { query: "widget marker", limit: 5, explain: true });
      expect(res.status).toBe(200);
      expect(res.body.mode).toBe("hybrid");
      expect(res.body.rerank).toEqual({ applied: false, reason: "no reranker is configured (RERANK_URL, or RERANK_LLM with a chat model)" });
      const e = res.body.hits[0].explain;
      expect(e.fused.rank).toBe(1);
      expect(res.body.hits[0].score).toBe(1);
      expect(e.vector.rank).toBeGreaterThanOrEqual(1);
      expect(e.vector.score).toBeGreaterThan(0);
      expect(e.rerank).toBeNull();
      expect(res.body.hits.some((h: Json) => h.explain.bm25 !== null)).toBe(true);
      const without = await r.call("/search", { query: "widget marker", limit: 5 });
      expect(without.body.hits[0].explain).toBeUndefined();
      expect(without.body.rerank).toBeUndefined();
    } finally {
      gateway.stop();
    }
  });

  it("answers 400 to explain or rerank that is not a boolean", async () => {
    const r = await router();
    for (const body of [
      { query: "x", explain: "yes" },
      { query: "x", rerank: 1 },
    ]) {
      const res = await r.call("/search", body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
  });
});

describe("RERANK_LLM: yes/no prompts to the chat model through the gateway", () => {
  it("reranks by the model's answers, and falls back when the gateway fails", async () => {
    reset();
    const gateway = startGateway({ reply: (messages) => (messages.at(-1)!.content.includes("marker-c") ? "Yes." : "no") });
    try {
      const r = await router({ LLM_API_BASE: `${gateway.url}/v1`, RERANK_LLM: "1", RERANK_MODEL: "judge-mini" });
      await widgetVault(r);
      const res = await r.call("/search", { query: "widget", limit: 12, explain: true });
      expect(res.body.rerank).toMatchObject({ applied: true, kind: "llm", model: "judge-mini", candidates: 12 });
      // (ingest's classification uses the same gateway: only the judging prompts count)
      const judged = gateway.requests.filter((q) => q.path === "/v1/chat/completions" && q.body.messages[0].content.startsWith("You judge search results"));
      expect(judged).toHaveLength(12);
      expect(judged[0]!.body.model).toBe("judge-mini");
      expect(judged[0]!.body.messages[1].content).toContain("Query: widget");
      const c = res.body.hits.findIndex((h: Json) => h.title === "Note c");
      expect(c).toBe(1); // the one "yes" comes second, behind retrieval's first
      expect(res.body.hits[c].explain.rerank.raw_score).toBe(1);

      gateway.failWith(503);
      const failed = await r.call("/search", { query: "widget", limit: 12 });
      expect(failed.status).toBe(200);
      expect(failed.body.rerank).toMatchObject({ applied: false, kind: "llm" });
      expect(failed.body.rerank.reason).toMatch(/answered 503/);
    } finally {
      gateway.stop();
    }
  });
});

describe("router-cli search --explain against a live router", () => {
  let main: MainProcess | undefined;
  afterAll(async () => {
    await main?.stop();
  });

  it("prints every hit's stages and whether the reranker ran", async () => {
    reset();
    const vault = join(tempDir("rerank-cli"), "vault");
    main = await startMain(
      ["--only", "router", "--vault", vault],
      { KB_ROUTER_TOKEN: ROUTER_TEST_TOKEN, TICK_INTERVAL_SECONDS: "0", RERANK_URL: fixture.url, RERANK_API_KEY: "rr-key", RERANK_FORMAT: "texts" },
      { expect: ["router"] },
    );
    const cli = async (args: string[]) => {
      const proc = Bun.spawn([process.execPath, join(REPO, "cli", "router-cli.ts"), ...args], {
        env: { PATH: process.env.PATH!, HOME: tempDir("cli-home"), BRAIN_URL: main!.routerUrl!, KB_ROUTER_TOKEN: ROUTER_TEST_TOKEN, NO_COLOR: "1" },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      return { stdout, stderr, code };
    };
    const ing = await fetch(`${main.routerUrl}/ingest`, {
      method: "POST",
      headers: { authorization: `Bearer ${ROUTER_TEST_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ content: "# Zebra crossing\nStripes on the road.", title: "Zebra crossing" }),
    });
    expect(ing.status).toBe(201);
    const out = await cli(["search", "zebra", "--explain"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("Zebra crossing");
    expect(out.stdout).toMatch(/bm25 #1 [\d.]+ · vector — · fused #1 [\d.]+ · rerank #1 [\d.]+ \(raw [\d.]+\), weight 0\.75 → 0\.75/);
    expect(out.stdout).toMatch(/reranked 1 hits \(http\) in [\d.]+ ms/);
    const json = JSON.parse((await cli(["search", "zebra", "--explain", "--json"])).stdout);
    expect(json.hits[0].explain.fused.rank).toBe(1);
    const skipped = await cli(["search", "zebra", "--no-rerank"]);
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).not.toContain("reranked");
    expect(fixture.requests.length).toBe(2);
  }, 60_000);
});
