// A web page must not drive a loopback service (issue 14, part 1): cross-site requests, DNS
// rebinding and form posts, against the real process over real HTTP, on both services and both
// MCP servers; CORS only for CORS_ORIGINS.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { type MainProcess, startMain, tempDir } from "./support/main-process";

const TOKEN = "guard-router-token";
const KEY = "guard-orchestrator-key";
type Json = Record<string, any>;

const expectError = async (res: Response, status: number, code: string) => {
  expect(res.status).toBe(status);
  const body = (await res.json()) as Json;
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
};

describe("orchestrator without API keys (loopback)", () => {
  let main: MainProcess;
  let url = "";
  beforeAll(async () => {
    main = await startMain(["--only", "orchestrator"], { SERVICE_OTEL_ENABLED: "false", ALLOWED_HOSTS: "devbox.internal" }, { expect: ["orchestrator"] });
    url = main.orchestratorUrl!;
  });
  afterAll(() => main.stop());

  it("refuses a cross-site form post to /admin/drain with 403 origin_not_allowed", async () => {
    const res = await fetch(`${url}/admin/drain?timeout=0`, {
      method: "POST",
      headers: { origin: "https://evil.example", "content-type": "application/x-www-form-urlencoded" },
      body: "a=1",
    });
    await expectError(res, 403, "origin_not_allowed");
  });

  it("refuses a cross-site text/plain post to /admin/sync and to /jobs", async () => {
    for (const path of ["/admin/sync", "/jobs"]) {
      const res = await fetch(`${url}${path}`, {
        method: "POST",
        headers: { origin: "http://localhost:9999", "content-type": "text/plain" },
        body: '{"task":"x"}',
      });
      await expectError(res, 403, "origin_not_allowed");
    }
  });

  it("answers 415 to a form or text/plain body even without an Origin", async () => {
    const form = await fetch(`${url}/jobs`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "task=x" });
    await expectError(form, 415, "unsupported_media_type");
    const text = await fetch(`${url}/admin/sync`, { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" });
    await expectError(text, 415, "unsupported_media_type");
    const jobs = (await (await fetch(`${url}/jobs`)).json()) as Json;
    expect(jobs.jobs).toEqual([]);
  });

  it("refuses a request whose Host names another site (DNS rebinding), POST /jobs included", async () => {
    const res = await fetch(`${url}/jobs`, {
      method: "POST",
      headers: { host: "rebind.evil.example", "content-type": "application/json" },
      body: JSON.stringify({ task: "steal" }),
    });
    await expectError(res, 403, "host_not_allowed");
    await expectError(await fetch(`${url}/jobs`, { headers: { host: "rebind.evil.example:8200" } }), 403, "host_not_allowed");
    const jobs = (await (await fetch(`${url}/jobs`)).json()) as Json;
    expect(jobs.jobs).toEqual([]);
  });

  it("serves the bind address, localhost and ALLOWED_HOSTS names", async () => {
    const port = new URL(url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `devbox.internal:${port}`, "LOCALHOST"]) {
      expect((await fetch(`${url}/jobs`, { headers: { host } })).status).toBe(200);
    }
  });

  it("serves a page of its own origin (same-origin Origin)", async () => {
    const res = await fetch(`${url}/admin/drain?timeout=0`, { method: "POST", headers: { origin: url, "content-type": "application/json" } });
    expect(res.status).toBe(200);
  });

  it("has CORS off: no Access-Control-Allow-Origin, and a preflight from another site is refused", async () => {
    const res = await fetch(`${url}/jobs`);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const pre = await fetch(`${url}/jobs`, { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "POST" } });
    await expectError(pre, 403, "origin_not_allowed");
  });

  it("refuses a cross-site request to its MCP endpoints", async () => {
    const post = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: { origin: "https://evil.example", "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "{}",
    });
    await expectError(post, 403, "origin_not_allowed");
    const sse = await fetch(`${url}/mcp/sse`, { headers: { host: "evil.example", accept: "text/event-stream" } });
    await expectError(sse, 403, "host_not_allowed");
  });
});

describe("CORS_ORIGINS on the orchestrator with keys", () => {
  let main: MainProcess;
  let url = "";
  const APP = "https://app.example.com";
  beforeAll(async () => {
    main = await startMain(
      ["--only", "orchestrator"],
      { SERVICE_OTEL_ENABLED: "false", SERVICE_API_KEYS: KEY, CORS_ORIGINS: `${APP}, https://other.example` },
      { expect: ["orchestrator"] },
    );
    url = main.orchestratorUrl!;
  });
  afterAll(() => main.stop());

  it("answers a listed origin's preflight with 204 and no token", async () => {
    const res = await fetch(`${url}/jobs`, {
      method: "OPTIONS",
      headers: { origin: APP, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(APP);
    expect(res.headers.get("access-control-allow-methods")).toContain("POST");
    expect(res.headers.get("access-control-allow-headers")).toContain("authorization");
  });

  it("adds Access-Control-Allow-Origin to a listed origin's answers (errors too), and still wants the key", async () => {
    const ok = await fetch(`${url}/jobs`, { headers: { origin: APP, authorization: `Bearer ${KEY}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(APP);
    expect(ok.headers.get("vary")).toContain("Origin");
    const denied = await fetch(`${url}/jobs`, { headers: { origin: APP } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get("access-control-allow-origin")).toBe(APP);
  });

  it("refuses an origin that is not listed", async () => {
    await expectError(await fetch(`${url}/jobs`, { headers: { origin: "https://evil.example", authorization: `Bearer ${KEY}` } }), 403, "origin_not_allowed");
  });

  it("with keys, serves any Host name (a proxy's), but not a foreign Origin", async () => {
    expect((await fetch(`${url}/jobs`, { headers: { host: "orchestrator.example.com", authorization: `Bearer ${KEY}` } })).status).toBe(200);
  });
});

describe("router and its MCP server", () => {
  let main: MainProcess;
  beforeAll(async () => {
    main = await startMain(
      ["--only", "router", "--vault", join(tempDir("guard-vault"), "v")],
      { KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0" },
      { expect: ["router"] },
    );
  });
  afterAll(() => main.stop());
  const auth = { authorization: `Bearer ${TOKEN}` };

  it("refuses a foreign Origin on the API and on both MCP transports", async () => {
    await expectError(
      await fetch(`${main.routerUrl}/search`, {
        method: "POST",
        headers: { ...auth, origin: "https://evil.example", "content-type": "application/json" },
        body: '{"query":"x"}',
      }),
      403,
      "origin_not_allowed",
    );
    await expectError(
      await fetch(`${main.mcpUrl}/mcp`, {
        method: "POST",
        headers: { ...auth, origin: "https://evil.example", "content-type": "application/json" },
        body: "{}",
      }),
      403,
      "origin_not_allowed",
    );
    await expectError(await fetch(`${main.mcpUrl}/sse`, { headers: { ...auth, origin: "https://evil.example" } }), 403, "origin_not_allowed");
  });

  it("takes only JSON bodies on state-changing routes and MCP messages", async () => {
    await expectError(
      await fetch(`${main.routerUrl}/ingest`, { method: "POST", headers: { ...auth, "content-type": "text/plain" }, body: '{"content":"x"}' }),
      415,
      "unsupported_media_type",
    );
    await expectError(
      await fetch(`${main.mcpUrl}/mcp`, { method: "POST", headers: { ...auth, "content-type": "text/plain" }, body: "{}" }),
      415,
      "unsupported_media_type",
    );
  });
});
