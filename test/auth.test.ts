// Auth as the specs say, seen over real HTTP against the real process.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mintScopedToken } from "../src/common/scoped-token";
import { type MainProcess, startMain } from "./support/main-process";

const TOKEN = "router-token-123";
const SECOND = "router-token-rotated";
const KEY = "service-key-abc";

describe("router with no server token (fail closed)", () => {
  let main: MainProcess;
  beforeAll(async () => {
    main = await startMain(["--only", "router"], {}, { expect: ["router"] });
  });
  afterAll(() => main.stop());

  for (const [method, path] of [
    ["GET", "/health"],
    ["POST", "/search"],
    ["GET", "/health/deep"],
    ["GET", "/feed"],
    ["GET", "/openapi.json"],
    ["GET", "/docs"],
    ["GET", "/no-such-route"],
  ] as const) {
    it(`answers 503 server_token_unset on ${method} ${path}`, async () => {
      const res = await fetch(`${main.routerUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: method === "POST" ? "{}" : undefined,
      });
      expect(res.status).toBe(503);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("server_token_unset");
      expect(body.error.message).toContain("KB_ROUTER_TOKEN");
    });
  }
});

describe("router with tokens", () => {
  let main: MainProcess;
  beforeAll(async () => {
    main = await startMain(["--only", "router"], { KB_ROUTER_TOKEN: TOKEN, KB_ROUTER_TOKENS: ` ${SECOND} , other ` }, { expect: ["router"] });
  });
  afterAll(() => main.stop());

  it("serves GET /health without a token", async () => {
    const res = await fetch(`${main.routerUrl}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok", service: "knowledge-router", version: expect.any(String) });
  });

  it("serves the API documents without a token", async () => {
    expect((await fetch(`${main.routerUrl}/openapi.json`)).status).toBe(200);
    const docs = await fetch(`${main.routerUrl}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get("content-type")).toContain("text/html");
  });

  it("answers 401 when the bearer is missing", async () => {
    const res = await fetch(`${main.routerUrl}/search`, { method: "POST", body: "{}" });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toStartWith("Bearer");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
  });

  it("answers 401 when the bearer is wrong, without echoing it", async () => {
    const res = await fetch(`${main.routerUrl}/feed`, { headers: { authorization: "Bearer not-the-token" } });
    expect(res.status).toBe(401);
    expect(await res.text()).not.toContain("not-the-token");
  });

  it("answers 401 for a non-bearer scheme", async () => {
    const res = await fetch(`${main.routerUrl}/feed`, { headers: { authorization: `Basic ${btoa(`x:${TOKEN}`)}` } });
    expect(res.status).toBe(401);
  });

  it("accepts KB_ROUTER_TOKEN and every KB_ROUTER_TOKENS entry (trimmed)", async () => {
    for (const t of [TOKEN, SECOND, "other"]) {
      const res = await fetch(`${main.routerUrl}/no-such-route`, { headers: { authorization: `Bearer ${t}` } });
      expect(res.status).toBe(404);
    }
  });

  it("never writes a token into its log", async () => {
    await fetch(`${main.routerUrl}/feed?token=${TOKEN}`, { headers: { authorization: `Bearer ${SECOND}` } });
    await fetch(`${main.routerUrl}/feed`, { headers: { authorization: "Bearer wrong-secret-value" } });
    await main.waitForOutput(/GET \/feed 401/);
    const log = main.output();
    for (const secret of [TOKEN, SECOND, "wrong-secret-value"]) expect(log).not.toContain(secret);
  });
});

describe("router with a scoped token (what an agent's hooks carry)", () => {
  let main: MainProcess;
  beforeAll(async () => {
    main = await startMain(["--only", "router"], { KB_ROUTER_TOKEN: TOKEN, KB_ROUTER_TOKENS: SECOND, TICK_INTERVAL_SECONDS: "0" }, { expect: ["router"] });
  });
  afterAll(() => main.stop());

  const send = (token: string, method: string, path: string, body?: unknown) =>
    fetch(`${main.routerUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: path === "/signal" ? "text/event-stream" : "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it("reaches the hooks' routes and reads the vault: GET /feed, GET /signal, POST /marker, POST /search, GET /notes…", async () => {
    const t = mintScopedToken(TOKEN, { sub: "job:auth-1", ttlSeconds: 600 });
    const marker = await send(t, "POST", "/marker", { type: "lesson", content: "Scoped tokens post markers." });
    expect(marker.status).toBe(201);
    expect((await send(t, "GET", "/feed")).status).toBe(200);
    // What the profile's words tell an agent to do: search the vault and read what it finds.
    const search = await send(t, "POST", "/search", { query: "scoped tokens" });
    expect(search.status).toBe(200);
    expect((await send(t, "GET", "/notes?limit=5")).status).toBe(200);
    expect((await send(t, "POST", "/notes/batch", { paths: ["raw/none.md"] })).status).toBe(200);
    expect((await send(t, "GET", "/notes/raw/none.md")).status).toBe(404); // through auth to the route
    const signal = await send(t, "GET", "/signal");
    expect(signal.status).toBe(200);
    expect(signal.headers.get("content-type")).toContain("text/event-stream");
    await signal.body?.cancel();
    // One signed with a rotated-in token (KB_ROUTER_TOKENS) works too.
    expect((await send(mintScopedToken(SECOND, { sub: "job:auth-2", ttlSeconds: 600 }), "GET", "/feed")).status).toBe(200);
  });

  for (const [method, path, body] of [
    ["POST", "/ingest", { content: "x", title: "x" }],
    ["POST", "/tick", {}],
    ["POST", "/brief", { query: "x" }],
    ["POST", "/dispatch", { task: "x" }],
    ["POST", "/signal", { content: "x", severity: "critical" }],
    ["GET", "/health/deep", undefined],
    ["GET", "/no-such-route", undefined],
  ] as const) {
    it(`is refused with 403 on ${method} ${path}, in the error shape, without echoing the token`, async () => {
      const t = mintScopedToken(TOKEN, { sub: "job:auth-3", ttlSeconds: 600 });
      const res = await send(t, method, path, body);
      expect(res.status).toBe(403);
      const text = await res.text();
      expect(text).not.toContain(t);
      const err = JSON.parse(text).error;
      expect(err.code).toBe("forbidden");
      expect(err.message).toContain("GET /feed, GET /signal, POST /marker");
    });
  }

  it("is refused with 401 once expired, and when signed with anything but a router token", async () => {
    const expired = mintScopedToken(TOKEN, { sub: "job:auth-4", ttlSeconds: 60, now: Date.now() - 120_000 });
    const res = await send(expired, "GET", "/feed");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain("invalid_token");
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("expired");
    const forged = await send(mintScopedToken("not-a-router-token", { sub: "job:auth-5", ttlSeconds: 600 }), "POST", "/marker", {
      type: "lesson",
      content: "forged",
    });
    expect(forged.status).toBe(401);
  });
});

describe("orchestrator with API keys", () => {
  let main: MainProcess;
  beforeAll(async () => {
    main = await startMain(["--only", "orchestrator"], { SERVICE_API_KEYS: `${KEY},second-key` }, { expect: ["orchestrator"] });
  });
  afterAll(() => main.stop());

  it("serves GET /health without a key", async () => {
    const res = await fetch(`${main.orchestratorUrl}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok", service: "job-orchestrator", version: expect.any(String) });
  });

  it("answers 401 with the error shape when the key is missing or wrong", async () => {
    for (const headers of [{}, { authorization: "Bearer nope" }] as Array<Record<string, string>>) {
      const res = await fetch(`${main.orchestratorUrl}/jobs`, { headers });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    }
  });

  it("answers 401 in OpenAI's error shape under /v1", async () => {
    const res = await fetch(`${main.orchestratorUrl}/v1/models`);
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: { message: string; type: string; code: string } };
    expect(body.error.type).toBe("authentication_error");
    expect(body.error.code).toBe("unauthorized");
    expect(body.error.message).toBeString();
  });

  it("accepts every configured key", async () => {
    for (const k of [KEY, "second-key"]) {
      const res = await fetch(`${main.orchestratorUrl}/no-such-route`, { headers: { authorization: `Bearer ${k}` } });
      expect(res.status).toBe(404);
    }
  });
});

describe("orchestrator without API keys", () => {
  let main: MainProcess;
  beforeAll(async () => {
    main = await startMain(["--only", "orchestrator"], {}, { expect: ["orchestrator"] });
  });
  afterAll(() => main.stop());

  it("serves on loopback and says so at start-up", async () => {
    expect(main.orchestratorUrl).toStartWith("http://127.0.0.1:");
    expect(main.output()).toContain("SERVICE_API_KEYS is not set");
    const res = await fetch(`${main.orchestratorUrl}/no-such-route`);
    expect(res.status).toBe(404);
  });
});
