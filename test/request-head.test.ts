// Over-long request lines and headers (issue 37 part 8), against the real process started as
// `bun run start` and the image start it (Bun's own head limit raised to 64 KiB): past the
// service's 16 KiB the answer is 414 or 431 in the JSON error shape (OpenAI's under /v1). Past
// Bun's limit, or when the process is started without raising it, Bun answers a bare 431
// before the service sees the request — the documented limit of what the service can shape.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { KEY } from "./support/orchestrator-process";
import { ROUTER_TEST_TOKEN } from "./support/router-client";

type Json = Record<string, any>;
const env = (extra: Record<string, string> = {}) => ({
  KB_ROUTER_TOKEN: ROUTER_TEST_TOKEN,
  TICK_INTERVAL_SECONDS: "0",
  SERVICE_API_KEYS: KEY,
  SERVICE_OTEL_ENABLED: "false",
  ...extra,
});

describe("with Bun's head limit raised, as package.json's start and the image run it", () => {
  let main: MainProcess;
  beforeAll(async () => {
    main = await startMain(["--vault", join(tempDir("request-head"), "v")], env({ BUN_OPTIONS: "--max-http-header-size=65536" }));
  });
  afterAll(() => main?.stop());

  const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers });
  const router = { authorization: `Bearer ${ROUTER_TEST_TOKEN}` };
  const orch = { authorization: `Bearer ${KEY}` };

  it("serves heads up to 16 KiB", async () => {
    expect((await get(`${main.routerUrl}/feed`, { ...router, "x-padding": "a".repeat(12_000) })).status).toBe(200);
    expect((await get(`${main.routerUrl}/notes?glob=${"a".repeat(12_000)}`, router)).status).toBeLessThan(500);
  });

  it("answers 431 headers_too_large in the JSON shape for headers over 16 KiB, on both services", async () => {
    const res = await get(`${main.routerUrl}/feed`, { ...router, "x-padding": "a".repeat(20_000) });
    expect(res.status).toBe(431);
    expect(((await res.json()) as Json).error).toMatchObject({ code: "headers_too_large", message: expect.stringContaining("16384 bytes") });
    const jobs = await get(`${main.orchestratorUrl}/jobs`, { ...orch, cookie: "c".repeat(30_000) });
    expect(jobs.status).toBe(431);
    expect(((await jobs.json()) as Json).error.code).toBe("headers_too_large");
    // Under /v1, OpenAI's shape.
    const models = await get(`${main.orchestratorUrl}/v1/models`, { ...orch, "x-padding": "a".repeat(20_000) });
    expect(models.status).toBe(431);
    expect(((await models.json()) as Json).error).toMatchObject({ code: "headers_too_large", type: "invalid_request_error" });
  });

  it("answers 414 uri_too_long in the JSON shape for a request line over 16 KiB", async () => {
    const res = await get(`${main.routerUrl}/notes?glob=${"a".repeat(20_000)}`, router);
    expect(res.status).toBe(414);
    expect(((await res.json()) as Json).error).toMatchObject({ code: "uri_too_long", message: expect.stringContaining("POST body") });
    const orchRes = await get(`${main.orchestratorUrl}/jobs?status=${"a".repeat(40_000)}`, orch);
    expect(orchRes.status).toBe(414);
    expect(((await orchRes.json()) as Json).error.code).toBe("uri_too_long");
  });

  it("past Bun's own 64 KiB, Bun answers a bare 431 before the service sees the request", async () => {
    const res = await get(`${main.routerUrl}/feed`, { ...router, "x-padding": "a".repeat(70_000) });
    expect(res.status).toBe(431);
    expect(await res.text()).toBe("");
    // And the service is still there.
    expect((await get(`${main.routerUrl}/feed`, router)).status).toBe(200);
  });
});

describe("started without raising Bun's limit (bun src/main.ts)", () => {
  let main: MainProcess;
  beforeAll(async () => {
    main = await startMain(["--only", "router", "--vault", join(tempDir("request-head-plain"), "v")], env(), { expect: ["router"] });
  });
  afterAll(() => main?.stop());

  it("Bun answers a head over 16 KiB with a bare 431, as documented", async () => {
    const res = await fetch(`${main.routerUrl}/feed`, { headers: { authorization: `Bearer ${ROUTER_TEST_TOKEN}`, "x-padding": "a".repeat(20_000) } });
    expect(res.status).toBe(431);
    expect(await res.text()).toBe("");
  });
});
