// The shared error shape and middleware, over real HTTP: malformed JSON, validation,
// oversized bodies, unknown routes, request ids.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createRoute, z } from "@hono/zod-openapi";
import type { Server } from "bun";
import { bearerAuth } from "../src/common/middleware/bearer-auth";
import { createOpenApiApp } from "../src/common/openapi-app";
import { type MainProcess, startMain } from "./support/main-process";

type ErrorJson = { error: { code: string; message: string; details?: Array<{ path: string; message: string }> } };

// A route built with the same factory and middleware as the services, so JSON parsing and
// validation are exercised the way every later JSON route will be.
const echo = createRoute({
  method: "post",
  path: "/echo",
  request: {
    body: {
      content: {
        "application/json": { schema: z.object({ query: z.string().min(1), limit: z.number().int().min(1).max(100) }) },
      },
    },
  },
  responses: { 200: { description: "echo", content: { "application/json": { schema: z.object({ query: z.string() }) } } } },
});

describe("JSON routes built with the shared app factory", () => {
  let server: Server<undefined>;
  let base: string;
  beforeAll(() => {
    const app = createOpenApiApp(undefined, {
      logTag: "test",
      maxBodyBytes: 1024,
      authorize: bearerAuth({ tokens: [], openPaths: [], whenUnset: { mode: "open" } }),
    });
    app.openapi(echo, (c) => c.json({ query: c.req.valid("json").query }, 200));
    server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: app.fetch });
    base = `http://127.0.0.1:${server.port}`;
  });
  afterAll(() => server.stop(true));

  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/echo`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

  it("answers 400 invalid_json for malformed JSON, never 500", async () => {
    const res = await post('{"query": "x", ');
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorJson).error.code).toBe("invalid_json");
  });

  it("answers 400 naming every failing field", async () => {
    const res = await post(JSON.stringify({ query: "", limit: 1000 }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as ErrorJson;
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.details?.map((d) => d.path).sort()).toEqual(["limit", "query"]);
    expect(body.error.message).toContain("limit");
    expect(body.error.message).toContain("query");
  });

  it("answers 400 for a missing body field", async () => {
    const res = await post(JSON.stringify({ query: "x" }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorJson).error.details?.[0]?.path).toBe("limit");
  });

  it("answers 413 for a body over the limit, with or without Content-Length", async () => {
    const big = JSON.stringify({ query: "x".repeat(2000), limit: 1 });
    const res = await post(big);
    expect(res.status).toBe(413);
    expect(((await res.json()) as ErrorJson).error.code).toBe("payload_too_large");
    const chunked = await fetch(`${base}/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new Blob([big]).stream(),
    });
    expect(chunked.status).toBe(413);
  });

  it("passes a valid body through", async () => {
    const res = await post(JSON.stringify({ query: "ok", limit: 5 }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ query: "ok" });
  });
});

describe("the real process", () => {
  let main: MainProcess;
  const auth = { authorization: "Bearer t0k" };
  beforeAll(async () => {
    main = await startMain([], { KB_ROUTER_TOKEN: "t0k", MAX_BODY_BYTES: "2048" });
  });
  afterAll(() => main.stop());

  it("answers an unknown route with 404 JSON on both services", async () => {
    for (const base of [main.routerUrl, main.orchestratorUrl]) {
      const res = await fetch(`${base}/nothing/here`, { headers: auth });
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("application/json");
      expect(((await res.json()) as ErrorJson).error.code).toBe("not_found");
    }
  });

  it("answers 413 above MAX_BODY_BYTES on both services", async () => {
    for (const base of [main.routerUrl, main.orchestratorUrl]) {
      const res = await fetch(`${base}/ingest`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: "x".repeat(4096) });
      expect(res.status).toBe(413);
      expect(((await res.json()) as ErrorJson).error.code).toBe("payload_too_large");
    }
  });

  it("echoes a caller's X-Request-Id and makes one otherwise", async () => {
    const given = await fetch(`${main.routerUrl}/health`, { headers: { "x-request-id": "trace-42_a" } });
    expect(given.headers.get("x-request-id")).toBe("trace-42_a");
    const made = await fetch(`${main.orchestratorUrl}/health`);
    expect(made.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("logs method, path, status and duration for each request", async () => {
    await fetch(`${main.routerUrl}/health`, { headers: { "x-request-id": "log-check-1" } });
    await main.waitForOutput(/GET \/health 200 [\d.]+ms id=log-check-1/);
  });
});
