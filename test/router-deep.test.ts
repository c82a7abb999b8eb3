// GET /health/deep against fixture gateway and embeddings servers (real HTTP): the vault
// round-trip, the embeddings dimension read from the index's database (SQLite and a real
// PostgreSQL) and checked against a real embedding call, the one-token completion, and what
// a missing configuration or server token looks like.
import { afterEach, describe, expect, it } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import postgres from "postgres";
import { loadRouterConfig } from "../src/router/config";
import { deepReport } from "../src/router/health/deep";
import { migrate } from "../src/router/index/migrate";
import { createRouterRuntime } from "../src/router/runtime";
import { type Gateway, startGateway } from "./fixtures/openai-gateway";
import { tempDir } from "./support/main-process";
import { startTestRouter, type TestRouter } from "./support/router-runtime";

type Json = Record<string, any>;

const open: TestRouter[] = [];
const gateways: Gateway[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
  for (const g of gateways.splice(0)) g.stop();
  for (const c of cleanups.splice(0)) await c();
});

function gateway(opts: Parameters<typeof startGateway>[0] = {}): Gateway {
  const g = startGateway(opts);
  gateways.push(g);
  return g;
}

async function deep(env: Record<string, string>): Promise<{ status: string; probe: (name: string) => Json; body: Json; router: TestRouter }> {
  const r = await startTestRouter(env);
  open.push(r);
  const res = await r.call("/health/deep");
  expect(res.status).toBe(200);
  expect(res.body.probes.map((p: Json) => p.name)).toEqual(["vault", "embeddings", "completion"]);
  for (const p of res.body.probes) expect(typeof p.ms).toBe("number");
  return { status: res.body.status, probe: (name) => res.body.probes.find((p: Json) => p.name === name), body: res.body, router: r };
}

const withModels = (g: Gateway, extra: Record<string, string> = {}) => ({
  EMBEDDINGS_URL: g.url,
  EMBEDDINGS_DIM: "64",
  EMBEDDINGS_MODEL: "embed-fixture",
  EMBEDDINGS_API_KEY: "sk-good",
  LLM_API_BASE: `${g.url}/v1`,
  LLM_API_KEY: "sk-good",
  BRIEF_MODEL: "chat-fixture",
  ...extra,
});

describe("GET /health/deep", () => {
  it("probes the vault and skips what is not configured, saying which setting is missing", async () => {
    const { status, probe } = await deep({});
    expect(status).toBe("ok");
    expect(probe("vault")).toMatchObject({ verdict: "ok" });
    expect(probe("embeddings")).toMatchObject({ verdict: "skipped" });
    expect(probe("embeddings").message).toContain("EMBEDDINGS_URL");
    expect(probe("completion")).toMatchObject({ verdict: "skipped" });
    expect(probe("completion").message).toContain("LLM_API_BASE");
  });

  it("is all ok against a gateway whose model has the index's dimension and accepts the key", async () => {
    const g = gateway({ apiKey: "sk-good", dim: 64 });
    const { status, probe } = await deep(withModels(g));
    expect(status).toBe("ok");
    expect(probe("embeddings")).toMatchObject({ verdict: "ok" });
    expect(probe("embeddings").message).toContain("64 dimensions");
    expect(probe("embeddings").message).toContain("SQLite");
    expect(probe("completion")).toMatchObject({ verdict: "ok" });
    const embedCall = g.requests.find((q) => q.path === "/v1/embeddings")!;
    expect(embedCall.body.model).toBe("embed-fixture");
    const chatCall = g.requests.find((q) => q.path === "/v1/chat/completions")!;
    expect(chatCall.body).toMatchObject({ model: "chat-fixture", max_tokens: 1 });
    expect(chatCall.authorization).toBe("Bearer sk-good");
  });

  it("fails the embeddings probe when the model's dimension differs from the vector column", async () => {
    const g = gateway({ apiKey: "sk-good", dim: 32 });
    const { status, probe } = await deep(withModels(g));
    expect(status).toBe("fail");
    expect(probe("embeddings").verdict).toBe("fail");
    expect(probe("embeddings").message).toContain("returns 32 dimensions but the index's vector column holds 64");
    expect(probe("completion").verdict).toBe("ok");
  });

  it("fails the completion probe when the gateway rejects the key", async () => {
    const g = gateway({ apiKey: "sk-good", dim: 64 });
    const { status, probe } = await deep(withModels(g, { LLM_API_KEY: "sk-revoked", EMBEDDINGS_API_KEY: "sk-revoked" }));
    expect(status).toBe("fail");
    expect(probe("completion").verdict).toBe("fail");
    expect(probe("completion").message).toContain("rejected the configured key (401)");
    expect(probe("embeddings").verdict).toBe("fail");
    expect(probe("embeddings").message).toContain("401");
  });

  it("fails both network probes when the gateway is unreachable", async () => {
    const g = gateway();
    g.stop();
    const { status, probe } = await deep(withModels(g, { LLM_TIMEOUT_MS: "2000" }));
    expect(status).toBe("fail");
    expect(probe("embeddings").message).toContain("unreachable");
    expect(probe("completion").message).toContain("unreachable");
  });

  it("fails the vault probe when the vault cannot be written", async () => {
    const r = await startTestRouter({});
    open.push(r);
    rmSync(r.vault, { recursive: true, force: true });
    const res = await r.call("/health/deep");
    expect(res.body.status).toBe("fail");
    expect(res.body.probes[0]).toMatchObject({ name: "vault", verdict: "fail" });
  });

  it("reads the vector column of a PostgreSQL with pgvector (PGlite, over the wire)", async () => {
    // The CI PostgreSQL has no pgvector; PGlite's build has, served on a loopback socket.
    const db = await PGlite.create({ extensions: { vector } });
    const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 4 });
    await server.start();
    cleanups.push(async () => {
      await server.stop();
      await db.close();
    });
    const url = `postgres://postgres@${server.getServerConn()}/postgres`;
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    await migrate(sql, { embeddingDim: 64 });
    await sql.end();
    const home = tempDir("deep-pg");
    const probe = async (g: Gateway) =>
      (
        await deepReport({
          vault: home,
          dataDir: home,
          databaseUrl: url,
          timeoutMs: 5_000,
          embeddings: { url: g.url, apiKey: "sk-good", model: "embed-fixture", dim: 64, timeoutMs: 5_000 },
        })
      ).probes[1]!;
    const ok = await probe(gateway({ apiKey: "sk-good", dim: 64 }));
    expect(ok).toMatchObject({ name: "embeddings", verdict: "ok" });
    expect(ok.message).toContain("PostgreSQL column index_chunks.embedding");
    const bad = await probe(gateway({ apiKey: "sk-good", dim: 48 }));
    expect(bad.verdict).toBe("fail");
    expect(bad.message).toContain("returns 48 dimensions but the index's vector column holds 64");
  }, 60_000); // PGlite's WASM boot takes seconds on a busy machine

  it("is a hard failure without a server token: 503 server_token_unset, like every router path", async () => {
    const home = tempDir("deep-home");
    const runtime = await createRouterRuntime(loadRouterConfig({ TICK_INTERVAL_SECONDS: "0" }, home, { vault: join(home, "vault") }));
    cleanups.push(() => runtime.close());
    const res = await runtime.app.request("/health/deep", { headers: { authorization: "Bearer anything" } });
    expect(res.status).toBe(503);
    expect(((await res.json()) as Json).error.code).toBe("server_token_unset");
  });
});
