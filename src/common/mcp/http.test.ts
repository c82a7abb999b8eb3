// The shared MCP HTTP layer on a loopback Bun server, with the SDK's own clients: both
// transports in stateful and stateless mode, and the session cap.
import { afterAll, describe, expect, it } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Hono } from "hono";
import { z } from "zod";
import { until } from "../../../test/support/until";
import { createErrorHandler } from "../error-handler";
import { mountMcp } from "./http";
import { McpSessions } from "./sessions";

function echoServer(): McpServer {
  const s = new McpServer({ name: "echo", version: "1" });
  s.registerTool("echo", { inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: "text", text }] }));
  return s;
}

const servers: Array<{ stop(force: boolean): void }> = [];
afterAll(() => {
  for (const s of servers) s.stop(true);
});

function serve(mode: "stateful" | "stateless", sessions: McpSessions) {
  const app = new Hono();
  app.onError(createErrorHandler(() => false));
  mountMcp(app, { createServer: echoServer, paths: { mcp: "/mcp", sse: ["/sse"], messages: "/messages" }, mode, sessions, keepAliveMs: 1000 });
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req, srv) => app.fetch(req, { server: srv }) });
  servers.push(server);
  return `http://127.0.0.1:${server.port}`;
}

const call = async (client: Client) => (await client.callTool({ name: "echo", arguments: { text: "hi" } })).content;

for (const mode of ["stateful", "stateless"] as const) {
  describe(`mountMcp (${mode})`, () => {
    const sessions = new McpSessions({ perClient: 2, total: 10, idleMs: 60_000 });
    const base = serve(mode, sessions);

    it("serves Streamable HTTP and HTTP+SSE to the SDK's clients", async () => {
      for (const transport of [new StreamableHTTPClientTransport(new URL(`${base}/mcp`)), new SSEClientTransport(new URL(`${base}/sse`))]) {
        const client = new Client({ name: "t", version: "1" });
        await client.connect(transport);
        expect(await call(client)).toEqual([{ type: "text", text: "hi" }]);
        // DELETE /mcp ends a stateful session (stateless: 405, nothing held).
        if (transport instanceof StreamableHTTPClientTransport && mode === "stateful") await transport.terminateSession();
        await client.close();
      }
    });

    it("refuses a third held session of one client with 429 and Retry-After", async () => {
      const held = [new AbortController(), new AbortController()];
      for (const ac of held) expect((await fetch(`${base}/sse`, { signal: ac.signal })).status).toBe(200);
      const over = await fetch(`${base}/sse`);
      expect(over.status).toBe(429);
      expect(over.headers.get("retry-after")).toMatch(/^\d+$/);
      for (const ac of held) ac.abort();
      await until(() => sessions.size === 0, { ms: 5_000, what: "the aborted sessions to close" });
      expect(sessions.size).toBe(0);
    });
  });
}
