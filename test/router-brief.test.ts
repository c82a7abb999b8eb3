// /brief against a fixture OpenAI-compatible gateway over real HTTP (buffered and
// streamed, and its failures), the extractive fallback, and hybrid search with a fixture
// embeddings service.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createParser } from "eventsource-parser";
import { type Gateway, startGateway } from "./fixtures/openai-gateway";
import { type MainProcess, runMain, startMain, tempDir } from "./support/main-process";
import { routerClient, ROUTER_TEST_TOKEN as TOKEN } from "./support/router-client";

type Json = Record<string, any>;

async function readEvents(res: Response): Promise<Array<{ event?: string; data: Json }>> {
  const events: Array<{ event?: string; data: Json }> = [];
  const parser = createParser({ onEvent: (e) => events.push({ event: e.event, data: JSON.parse(e.data) }) });
  parser.feed(await res.text());
  return events;
}

const notes = [
  ["# Rollbacks\nRoll back a bad deploy with make rollback, then page the owner.", ["deploy"]],
  ["# Feature flags\nGuard risky deploy changes behind a flag so a rollback is a toggle.", ["deploy"]],
  ["# Coffee\nThe office machine needs descaling monthly.", ["office"]],
] as const;

describe("POST /brief with a model", () => {
  let gw: Gateway;
  let main: MainProcess;
  const api = routerClient(() => main.routerUrl!);
  beforeAll(async () => {
    gw = startGateway({ apiKey: "sk-brief" });
    main = await startMain(
      ["--only", "router", "--vault", join(tempDir("brief"), "v")],
      {
        KB_ROUTER_TOKEN: TOKEN,
        LLM_API_BASE: `${gw.url}/v1`,
        LLM_API_KEY: "sk-brief",
        BRIEF_MODEL: "brief-model",
        LLM_TIMEOUT_MS: "500",
      },
      { expect: ["router"] },
    );
    for (const [content, tags] of notes) expect((await api.ingest(content, [...tags])).status).toBe(201);
  });
  afterAll(async () => {
    await main.stop();
    gw.stop();
  });

  it("answers the model's synthesis with citations mapped to paths", async () => {
    const res = await api.call("/brief", { query: "rollback deploy" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ synthesis: "model", model: "brief-model", query: "rollback deploy" });
    expect(res.body.text).toContain("[1]");
    expect(res.body.citations[0]).toEqual({ n: 1, path: res.body.hits[0].path, title: res.body.hits[0].title });
    const sent = gw.requests.filter((r) => r.path === "/v1/chat/completions").at(-1)!;
    expect(sent.authorization).toBe("Bearer sk-brief");
    expect(sent.body.model).toBe("brief-model");
    expect(JSON.stringify(sent.body.messages)).toContain("[1] Rollbacks");
  });

  it("streams hits, then the synthesis delta by delta, then done", async () => {
    const res = await fetch(`${main.routerUrl}/brief`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ query: "rollback", stream: true }),
    });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = await readEvents(res);
    expect(events[0]!.event).toBe("hits");
    expect(events[0]!.data.citations.length).toBeGreaterThan(0);
    const deltas = events.filter((e) => e.event === "delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((d) => d.data.text).join("")).toBe("The notes agree on this [1], with a caveat from [2].");
    expect(events.at(-1)).toEqual({ event: "done", data: { synthesis: "model", model: "brief-model" } });
  });

  it("answers 502 with the gateway's status when the gateway fails, streaming or not", async () => {
    gw.failWith(503);
    try {
      for (const stream of [false, true]) {
        const res = await api.call("/brief", { query: "rollback", stream });
        expect(res.status).toBe(502);
        expect(res.body.error.message).toContain("503");
      }
    } finally {
      gw.failWith(0);
    }
  });

  it("answers 504 when the gateway is slower than LLM_TIMEOUT_MS, never hanging, streaming or not", async () => {
    gw.delay(2000);
    try {
      for (const stream of [false, true]) {
        const started = performance.now();
        const res = await api.call("/brief", { query: "rollback", stream });
        expect(res.status).toBe(504);
        expect(res.body.error.code).toBe("gateway_timeout");
        expect(res.body.error.message).toContain("500 ms");
        expect(performance.now() - started).toBeLessThan(1800);
      }
    } finally {
      gw.delay(0);
    }
  });
});

describe("POST /brief without a model", () => {
  let main: MainProcess;
  const api = routerClient(() => main.routerUrl!);
  beforeAll(async () => {
    main = await startMain(["--only", "router", "--vault", join(tempDir("brief"), "v")], { KB_ROUTER_TOKEN: TOKEN }, { expect: ["router"] });
    for (const [content, tags] of notes) await api.ingest(content, [...tags]);
  });
  afterAll(() => main.stop());

  it("answers an extractive digest built from the hits, marked as such", async () => {
    const res = await api.call("/brief", { query: "rollback" });
    expect(res.status).toBe(200);
    expect(res.body.synthesis).toBe("extractive");
    expect(res.body.model).toBeUndefined();
    expect(res.body.text).toStartWith("[1] Rollbacks:");
    expect(res.body.text).not.toContain("<mark>");
    expect(res.body.citations.length).toBe(res.body.hits.length);
  });

  it("says plainly when nothing matches", async () => {
    const res = await api.call("/brief", { query: "zebras" });
    expect(res.body).toMatchObject({ synthesis: "extractive", hits: [], citations: [] });
    expect(res.body.text).toContain("Nothing in the vault matches");
  });
});

describe("POST /ingest with a model configured", () => {
  let gw: Gateway;
  let main: MainProcess;
  const api = routerClient(() => main.routerUrl!);
  let vault: string;
  const classifyCalls = () => gw.requests.filter((r) => r.path === "/v1/chat/completions" && JSON.stringify(r.body.messages).includes("Classify"));
  beforeAll(async () => {
    // The model answers "lesson" to every classification request.
    gw = startGateway({ reply: (messages) => (messages[0]?.content.includes("Classify") ? "Lesson." : "A brief [1].") });
    vault = join(tempDir("refine"), "v");
    main = await startMain(
      ["--only", "router", "--vault", vault],
      {
        KB_ROUTER_TOKEN: TOKEN,
        LLM_API_BASE: `${gw.url}/v1`,
        BRIEF_MODEL: "brief-model",
        LLM_TIMEOUT_MS: "500",
      },
      { expect: ["router"] },
    );
  });
  afterAll(async () => {
    await main.stop();
    gw.stop();
  });

  it("lets the model refine content no rule classifies", async () => {
    const res = await api.ingest("Caches need jitter on their expiry, or they all expire together.");
    expect(res.status).toBe(201);
    expect(res.body.kind).toBe("lesson");
    expect(res.body.paths[1]).toMatch(/^left\/reference\/lessons-\d{4}-\d{2}-\d{2}\.md$/);
    expect(classifyCalls()).toHaveLength(1);
  });

  it("does not ask the model when a rule decides", async () => {
    const before = classifyCalls().length;
    const res = await api.ingest("Use one index per tenant.", ["adr"]);
    expect(res.body.kind).toBe("decision");
    expect(classifyCalls()).toHaveLength(before);
  });

  it("refines a batch's items as POST /ingest would: the model's kind where no rule decides, the rule's elsewhere", async () => {
    const before = classifyCalls().length;
    const text = "Retries need a budget, or a slow dependency turns into an outage.";
    const res = await api.call("/ingest/batch", { items: [{ content: text }, { content: "Use one queue per tenant.", tags: ["adr"] }, { content: text }] });
    expect(res.status).toBe(200);
    const r = res.body.results;
    expect(r.map((x: any) => [x.status, x.kind])).toEqual([
      [201, "lesson"],
      [201, "decision"],
      [200, "lesson"],
    ]);
    expect(r[0].paths[1]).toMatch(/^left\/reference\/lessons-\d{4}-\d{2}-\d{2}\.md$/);
    // The note records the model's kind; one question for the one item no rule decides.
    expect(readFileSync(join(vault, r[0].paths[0]), "utf8")).toContain("kind: lesson");
    expect(classifyCalls().length - before).toBe(1);
  });

  it("keeps the rules' answer when the model fails", async () => {
    gw.failWith(500);
    try {
      const res = await api.ingest("The staging database is rebuilt every night.");
      expect(res.status).toBe(201);
      expect(res.body.kind).toBe("note");
      expect(res.body.paths).toHaveLength(1);
    } finally {
      gw.failWith(0);
    }
  });
});

describe("hybrid search with an embeddings service", () => {
  let gw: Gateway;
  let main: MainProcess;
  let vault: string;
  const api = routerClient(() => main.routerUrl!);
  beforeAll(async () => {
    gw = startGateway({ dim: 32 });
    vault = join(tempDir("hybrid"), "v");
    main = await startMain(
      ["--only", "router", "--vault", vault],
      { KB_ROUTER_TOKEN: TOKEN, EMBEDDINGS_URL: gw.url, EMBEDDINGS_DIM: "32", EMBEDDINGS_MODEL: "fixture-embed" },
      { expect: ["router"] },
    );
    for (const [content, tags] of notes) expect((await api.ingest(content, [...tags])).status).toBe(201);
  });
  afterAll(async () => {
    await main?.stop();
    gw.stop();
  });

  it("fuses BM25 and vector results and says hybrid ran", async () => {
    const res = await api.search("rollback deploy");
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe("hybrid");
    expect(res.body.hits[0].title).toBe("Rollbacks");
    expect(gw.requests.some((r) => r.path === "/v1/embeddings" && r.body.input[0] === "rollback deploy")).toBe(true);
  });

  it("embeds a batch's notes before it answers, and a failing embeddings service fails the batch's items, leaving nothing of them", async () => {
    const before = gw.requests.filter((r) => r.path === "/v1/embeddings").length;
    const items = ["Canary deploys shift one percent first.", "Blue green deploys swap the router.", "Feature flags gate the rollout."];
    const res = await api.call("/ingest/batch", { items: items.map((content) => ({ content })) });
    expect(res.body.results.map((r: any) => r.status)).toEqual([201, 201, 201]);
    const inputs = gw.requests
      .slice(before)
      .filter((r) => r.path === "/v1/embeddings")
      .flatMap((r) => r.body.input as string[]);
    for (const text of items) expect(inputs.some((i) => i.includes(text))).toBe(true);
    gw.failWith(500);
    try {
      const failed = await api.call("/ingest/batch", { items: [{ content: "Dark launches hide the feature." }] });
      expect(failed.body.results[0].status).toBe(502);
    } finally {
      gw.failWith(0);
    }
    // Nothing of it was kept: the same item goes in now.
    const again = await api.call("/ingest/batch", { items: [{ content: "Dark launches hide the feature." }] });
    expect(again.body.results[0]).toMatchObject({ status: 201, duplicate: false });
  });

  it("answers 502 naming the embeddings service's status when it fails, and 200 again once it is back", async () => {
    gw.failWith(500);
    try {
      const res = await api.search("rollback deploy");
      expect(res.status).toBe(502);
      expect(res.body.error.message).toContain("embeddings service answered 500");
    } finally {
      gw.failWith(0);
    }
    expect((await api.search("rollback deploy")).body.mode).toBe("hybrid");
  });

  it("refuses to start on an index whose vectors have another dimension", async () => {
    await main.stop();
    const { code, stderr } = await runMain(["--only", "router", "--vault", vault], {
      KB_ROUTER_TOKEN: TOKEN,
      PORT_BRAIN_API: "0",
      EMBEDDINGS_URL: gw.url,
      EMBEDDINGS_DIM: "64",
    });
    expect(code).toBe(1);
    expect(stderr).toContain("32");
    expect(stderr).toContain("64");
    expect(stderr.trim().split("\n")).toHaveLength(1);
  });
});

describe("router start-up with a database that does not answer", () => {
  it("exits 1 with a clear line", async () => {
    const { code, stderr } = await runMain(["--only", "router", "--vault", join(tempDir("nodb"), "v")], {
      KB_ROUTER_TOKEN: TOKEN,
      PORT_BRAIN_API: "0",
      DATABASE_URL: "postgres://postgres@127.0.0.1:1/nothing",
    });
    expect(code).toBe(1);
    expect(stderr).toStartWith("router: ");
  });
});
