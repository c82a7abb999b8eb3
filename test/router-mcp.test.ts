// The router's MCP server on PORT_BRAIN_MCP, through the real process, with the SDK's own
// clients over each transport: Streamable HTTP (/mcp), HTTP+SSE (/sse), and HTTP+SSE given
// the one URL (/mcp). Same bearer rules as the API.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type MainProcess, runMain, startMain, tempDir } from "./support/main-process";
import { ROUTER_TEST_TOKEN as TOKEN } from "./support/router-client";

type Json = Record<string, any>;
type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: Json };

const AUTH = { authorization: `Bearer ${TOKEN}` };
const TRANSPORTS: Record<string, (url: string, headers: Record<string, string>) => Transport> = {
  "Streamable HTTP": (url, headers) => new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }),
  "HTTP+SSE at /sse": (url, headers) => new SSEClientTransport(new URL(`${url}/sse`), { requestInit: { headers } }),
  "HTTP+SSE at /mcp": (url, headers) => new SSEClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }),
};

let main: MainProcess;
let vault = "";
beforeAll(async () => {
  vault = join(tempDir("router-mcp"), "vault");
  main = await startMain(["--only", "router", "--vault", vault], { KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0" }, { expect: ["router"] });
});
afterAll(async () => {
  await main.stop();
});

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

it("listens on its own port, announced as router MCP", () => {
  expect(main.mcpUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(main.mcpUrl).not.toBe(main.routerUrl);
});

for (const [name, transport] of Object.entries(TRANSPORTS)) {
  const connect = async (headers: Record<string, string> = AUTH) => {
    const client = new Client({ name: "router-mcp-test", version: "1.0.0" });
    await client.connect(transport(main.mcpUrl!, headers));
    clients.push(client);
    return client;
  };
  const tool = async (client: Client, tool: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 30_000 })) as ToolResult;

  describe(`router MCP over ${name}`, () => {
    it("lists search, brief, ingest, marker, feed, tick, get, multi_get, recent and context", async () => {
      const { tools } = await (await connect()).listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["brief", "context", "feed", "get", "ingest", "marker", "multi_get", "recent", "search", "tick"]);
    });

    it("records what it ingests as from mcp unless a source is named, a blank one included", async () => {
      const client = await connect();
      for (const [source, expected] of [
        [undefined, "mcp"],
        ["   ", "mcp"],
        ["retro", "retro"],
      ] as const) {
        const content = `Source check ${name} ${expected} ${JSON.stringify(source)}`;
        const ingested = await tool(client, "ingest", { content, ...(source === undefined ? {} : { source }) });
        expect(ingested.isError).toBeFalsy();
        const note = await tool(client, "get", { path: ingested.structuredContent!.paths[0] });
        expect(note.structuredContent!.frontmatter.source).toBe(expected);
      }
    });

    it("ingests, then finds it with search and brief", async () => {
      const client = await connect();
      const word = `quokka${name.replace(/\W/g, "").toLowerCase()}`;
      const ingested = await tool(client, "ingest", { content: `# ${word}\nThe ${word} note explains rollbacks.`, tags: ["mcp"] });
      expect(ingested.isError).toBeFalsy();
      expect(ingested.structuredContent).toMatchObject({ kind: "note", indexed: true });
      const found = await tool(client, "search", { query: word });
      expect(found.structuredContent!.hits[0].path).toBe(ingested.structuredContent!.paths[0]);
      expect(found.structuredContent!.hits[0].explain).toBeUndefined();
      expect(found.structuredContent!.hits[0]).toMatchObject({ score: 1, coverage: 1 });
      // match "all": the note lacks the second word, so nothing; "any" still finds it by one word.
      const strict = await tool(client, "search", { query: `${word} zanzibarish`, match: "all" });
      expect(strict.structuredContent!.hits).toEqual([]);
      const loose = await tool(client, "search", { query: `${word} zanzibarish` });
      expect(loose.structuredContent!.hits[0]).toMatchObject({ path: ingested.structuredContent!.paths[0], coverage: 0.5 });
      const explained = await tool(client, "search", { query: word, explain: true });
      expect(explained.structuredContent!.hits[0].explain).toMatchObject({ bm25: { rank: 1 }, vector: null, fused: { rank: 1 }, rerank: null });
      expect(explained.structuredContent!.rerank).toMatchObject({ applied: false, reason: expect.stringMatching(/no reranker is configured/) });
      const brief = await tool(client, "brief", { query: word });
      expect(brief.structuredContent).toMatchObject({ synthesis: "extractive" });
      expect(JSON.parse(brief.content[0]!.text!).citations[0].path).toBe(ingested.structuredContent!.paths[0]);
    });

    it("records a marker once per idempotency key, into the vault", async () => {
      const client = await connect();
      const args = { type: "@lesson", content: `Lesson over ${name}`, attrs: { source: "mcp-test", session_id: "m1" }, idempotency_key: `mcp-${name}` };
      const first = await tool(client, "marker", args);
      const again = await tool(client, "marker", args);
      expect(first.structuredContent).toMatchObject({ type: "lesson", origin: "mcp", replayed: false, written: true });
      expect(again.structuredContent).toMatchObject({ id: first.structuredContent!.id, replayed: true });
      const log = readFileSync(join(vault, first.structuredContent!.path), "utf8");
      expect(log.split(`Lesson over ${name}`)).toHaveLength(2);
    });

    it("runs a tick with wait and serves the feed", async () => {
      const client = await connect();
      const tick = await tool(client, "tick", { wait: true, no_ai: true });
      expect(tick.structuredContent).toMatchObject({ status: "succeeded", trigger: "mcp", no_ai: true });
      const feed = await tool(client, "feed", { max_chars: 2000 });
      expect(feed.structuredContent).toMatchObject({ max_chars: 2000 });
      expect(feed.structuredContent!.lessons.length).toBeGreaterThan(0);
      expect(Array.isArray(feed.structuredContent!.hot_arcs)).toBe(true);
    });

    it("answers a domain error as a tool error", async () => {
      const client = await connect();
      const res = await tool(client, "marker", { type: "lesson", content: "x".repeat(5000) });
      expect(res.isError).toBe(true);
      expect(res.content[0]!.text).toContain("content_too_large");
    });

    it("refuses a client without the bearer", async () => {
      const client = new Client({ name: "router-mcp-test", version: "1.0.0" });
      await expect(client.connect(transport(main.mcpUrl!, {}))).rejects.toThrow();
      await expect(new Client({ name: "x", version: "1" }).connect(transport(main.mcpUrl!, { authorization: "Bearer wrong" }))).rejects.toThrow();
    });
  });
}

describe("the MCP listener", () => {
  it("answers 401 without a bearer and serves /health openly", async () => {
    expect((await fetch(`${main.mcpUrl}/mcp`, { method: "POST", body: "{}" })).status).toBe(401);
    expect((await fetch(`${main.mcpUrl}/health`)).status).toBe(200);
  });

  it("fails closed with 503 when no server token is set", async () => {
    const noToken = await startMain(["--only", "router", "--vault", join(tempDir("mcp-notoken"), "v")], { TICK_INTERVAL_SECONDS: "0" }, { expect: ["router"] });
    try {
      const res = await fetch(`${noToken.mcpUrl}/mcp`, { method: "POST", headers: { ...AUTH, "content-type": "application/json" }, body: "{}" });
      expect(res.status).toBe(503);
      expect(((await res.json()) as Json).error.code).toBe("server_token_unset");
    } finally {
      await noToken.stop();
    }
  }, 20_000);

  it("exits 1 naming PORT_BRAIN_MCP when its port is taken", async () => {
    const squatter = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("busy") });
    try {
      const { code, stderr } = await runMain(["--only", "router", "--vault", join(tempDir("mcp-port"), "v")], {
        KB_ROUTER_TOKEN: TOKEN,
        PORT_BRAIN_API: "0",
        PORT_BRAIN_MCP: String(squatter.port),
      });
      expect(code).toBe(1);
      expect(stderr).toContain(`port ${squatter.port}`);
      expect(stderr).toContain("PORT_BRAIN_MCP");
    } finally {
      squatter.stop(true);
    }
  }, 20_000);

  it("stops promptly on SIGTERM with an MCP SSE stream open", async () => {
    const m = await startMain(
      ["--only", "router", "--vault", join(tempDir("mcp-stop"), "v")],
      { KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0" },
      { expect: ["router"] },
    );
    const client = new Client({ name: "x", version: "1" });
    await client.connect(new SSEClientTransport(new URL(`${m.mcpUrl}/sse`), { requestInit: { headers: AUTH } }));
    const t0 = Date.now();
    expect(await m.stop("SIGTERM")).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5_000);
    await client.close().catch(() => {});
  }, 20_000);
});
