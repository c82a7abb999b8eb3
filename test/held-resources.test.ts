// Limits on held resources (issue 14, part 6), against the real process: MCP sessions and SSE
// streams are capped per credential and in all, idle ones are closed, the stateless
// orchestrator holds no GET /mcp stream, and failed bearer attempts are throttled per address.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { until } from "./support/until";

const TOKEN = "limits-token-a";
const OTHER = "limits-token-b";
type Json = Record<string, any>;

const initialize = (token: string): RequestInit => ({
  method: "POST",
  headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
  body: JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "t", version: "1" } },
  }),
});

describe("router MCP sessions", () => {
  let main: MainProcess;
  const streams: AbortController[] = [];
  // Every stream the test holds open stays referenced: a Response the client drops is collected,
  // and collecting it cancels its body, which ends the session (as a client going away does).
  const held: Response[] = [];
  let otherSession = "";
  beforeAll(async () => {
    main = await startMain(
      ["--only", "router", "--vault", join(tempDir("limits-vault"), "v")],
      {
        KB_ROUTER_TOKEN: TOKEN,
        KB_ROUTER_TOKENS: OTHER,
        TICK_INTERVAL_SECONDS: "0",
        MCP_MAX_SESSIONS_PER_CLIENT: "3",
        MCP_MAX_SESSIONS: "5",
        MCP_SESSION_IDLE_SECONDS: "2",
        AUTH_FAILURE_LIMIT: "5",
      },
      { expect: ["router"] },
    );
  });
  afterAll(async () => {
    for (const s of streams) s.abort();
    await main.stop();
  });

  // A status that is not the one expected fails with what the server said, not only the number.
  // (The first chunk only: an event stream never ends.)
  const expectStatus = async (res: Response, status: number) => {
    if (res.status === status) return;
    const reader = res.body?.getReader();
    const first = reader ? await reader.read() : undefined;
    await reader?.cancel();
    throw new Error(`expected ${status}, got ${res.status} ${res.headers.get("content-type")}: ${new TextDecoder().decode(first?.value ?? new Uint8Array())}`);
  };

  const openSse = async (token: string) => {
    const ac = new AbortController();
    streams.push(ac);
    return fetch(`${main.mcpUrl}/sse`, { headers: { authorization: `Bearer ${token}` }, signal: ac.signal });
  };

  it("caps one credential's SSE streams and Streamable sessions with 429 and Retry-After; another credential still gets in", async () => {
    // Another credential's session, held from the start.
    const other = await fetch(`${main.mcpUrl}/mcp`, initialize(OTHER));
    await expectStatus(other, 200);
    otherSession = other.headers.get("mcp-session-id")!;
    expect(otherSession).toBeTruthy();
    await other.body?.cancel();
    for (let i = 0; i < 3; i++) {
      const res = await openSse(TOKEN);
      await expectStatus(res, 200);
      held.push(res);
    }
    const over = await openSse(TOKEN);
    await expectStatus(over, 429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await over.json()) as Json).error.code).toBe("too_many_sessions");
    const init = await fetch(`${main.mcpUrl}/mcp`, initialize(TOKEN));
    await expectStatus(init, 429);
    // Another credential still gets in.
    const second = await fetch(`${main.mcpUrl}/mcp`, initialize(OTHER));
    await expectStatus(second, 200);
    await second.body?.cancel();
    // The process-wide cap (5): 1 + 3 + 1 held; the next is refused.
    const full = await openSse(OTHER);
    await expectStatus(full, 429);
    expect(((await full.json()) as Json).error.message).toContain("MCP_MAX_SESSIONS");
  });

  it("closes idle sessions: past MCP_SESSION_IDLE_SECONDS the streams end, the sessions are gone, the credential is admitted again", async () => {
    // Nothing touches the held sessions now; a new stream is refused until they have timed out.
    const again = await until(
      async () => {
        const res = await openSse(TOKEN);
        if (res.status === 200) return res;
        await res.body?.cancel();
        return undefined;
      },
      { what: "a stream to be admitted again", every: 50 },
    );
    expect(again.headers.get("content-type")).toContain("text/event-stream");
    // Each held stream is ended by the server once it has been idle that long (they were opened
    // one after another, so they may time out at successive sweeps).
    expect(held).toHaveLength(3);
    for (const rest of await Promise.all(held.map((r) => r.text()))) expect(rest).toContain("event: endpoint");
    const ping = await fetch(`${main.mcpUrl}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${OTHER}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": otherSession,
        "mcp-protocol-version": "2025-03-26",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }),
    });
    expect(ping.status).toBe(404);
  });

  it("throttles failed bearer attempts per address (429 with Retry-After) and still serves the right token from that address", async () => {
    for (let i = 0; i < 5; i++)
      expect((await fetch(`${main.mcpUrl}/mcp`, { method: "POST", headers: { authorization: `Bearer wrong-${i}` } })).status).toBe(401);
    const blocked = await fetch(`${main.mcpUrl}/mcp`, { method: "POST", headers: { authorization: "Bearer wrong-again" } });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await blocked.json()) as Json).error.code).toBe("too_many_auth_failures");
    // Another client behind the same address, with the right token: served.
    const served = await fetch(`${main.mcpUrl}/mcp`, initialize(TOKEN));
    await expectStatus(served, 200);
    await served.body?.cancel();
    // The guesser is still held back, and so is a request with no token at all.
    expect((await fetch(`${main.mcpUrl}/mcp`, { method: "POST", headers: { authorization: "Bearer wrong-after" } })).status).toBe(429);
    expect((await fetch(`${main.mcpUrl}/mcp`, { method: "POST" })).status).toBe(429);
  });

  it("serves the right token on the API listener while a flood of wrong ones is throttled there", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await fetch(`${main.routerUrl}/feed`, { headers: { authorization: `Bearer flood-${i}` } })).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(new Set(statuses.slice(5))).toEqual(new Set([429]));
    const good = await fetch(`${main.routerUrl}/feed`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(good.status).toBe(200);
    expect(Array.isArray(((await good.json()) as Json).entries)).toBe(true);
  });
});

describe("orchestrator (stateless MCP)", () => {
  let main: MainProcess;
  beforeAll(async () => {
    main = await startMain(
      ["--only", "orchestrator"],
      { SERVICE_OTEL_ENABLED: "false", SERVICE_API_KEYS: TOKEN, AUTH_FAILURE_LIMIT: "3" },
      { expect: ["orchestrator"] },
    );
  });
  afterAll(() => main.stop());

  it("answers GET /mcp with a protocol-version header 405 at once instead of holding a stream", async () => {
    const res = await fetch(`${main.orchestratorUrl}/mcp`, {
      headers: { authorization: `Bearer ${TOKEN}`, accept: "text/event-stream", "mcp-protocol-version": "2025-03-26" },
      signal: AbortSignal.timeout(5_000),
    });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect((await fetch(`${main.orchestratorUrl}/mcp`, { method: "DELETE", headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(405);
  });

  it("throttles failed bearer attempts, and serves a valid key from the same address meanwhile", async () => {
    for (let i = 0; i < 3; i++) expect((await fetch(`${main.orchestratorUrl}/jobs`, { headers: { authorization: `Bearer nope-${i}` } })).status).toBe(401);
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${main.orchestratorUrl}/jobs`, { headers: { authorization: `Bearer flood-${i}` } });
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(((await res.json()) as Json).error.code).toBe("too_many_auth_failures");
    }
    const good = await fetch(`${main.orchestratorUrl}/jobs`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(good.status).toBe(200);
    expect(Array.isArray(((await good.json()) as Json).jobs)).toBe(true);
  });
});
