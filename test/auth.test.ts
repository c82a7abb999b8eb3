// Auth as the specs say, seen over real HTTP against the real process.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
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
