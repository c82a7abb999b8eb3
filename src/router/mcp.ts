// The router's MCP server, on its own listener (PORT_BRAIN_MCP, default 8104), behind the same
// bearer rules as the API (fail closed without a token). Two transports:
//   Streamable HTTP  POST/GET/DELETE /mcp           (the SDK's Web standard transport, one session per client)
//   HTTP+SSE (older) GET /sse (also /mcp/sse, and GET /mcp without a session id, for SSE-only
//                    clients given the one URL), then POST /messages?sessionId=<id>
// Each session gets its own McpServer over the shared domain (mcp/tools.ts).
import { Hono } from "hono";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { createErrorHandler, createNotFoundHandler } from "../common/error-handler";
import { HttpError } from "../common/errors";
import { bearerAuth } from "../common/middleware/bearer-auth";
import { installServiceEdge, type EdgeBindings } from "../common/middleware/stack";
import { VERSION } from "../common/version";
import type { RouterDeps } from "./app";
import { WebSseServerTransport } from "./mcp/sse-transport";
import { createRouterMcpServer } from "./mcp/tools";


/** A Streamable HTTP session idle this long is closed (clients that never send DELETE). */
const SESSION_IDLE_MS = 30 * 60_000;
const MAX_SESSIONS = 1_000;

export interface RouterMcp {
  fetch: (req: Request, server?: unknown) => Response | Promise<Response>;
  /** Open sessions by transport. */
  sessions(): { streamable: number; sse: number };
  /** Ends every session and stream (shutdown). */
  close(): Promise<void>;
}

interface Session<T> {
  transport: T;
  server: McpServer;
  lastSeen: number;
}

const jsonRpcError = (status: number, code: number, message: string) =>
  Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status });

const noIdleTimeout = (env: EdgeBindings, req: Request) => env.server?.timeout?.(req, 0);

export function createRouterMcp(deps: RouterDeps): RouterMcp {
  const streamable = new Map<string, Session<WebStandardStreamableHTTPServerTransport>>();
  const sse = new Map<string, Session<WebSseServerTransport>>();
  const keepAliveMs = deps.config.signalHeartbeatSeconds * 1000;

  const app = new Hono<{ Bindings: EdgeBindings }>();
  app.onError(createErrorHandler(() => false));
  app.notFound(createNotFoundHandler(() => false));
  installServiceEdge(app, {
    openAi: () => false,
    logTag: "router-mcp",
    maxBodyBytes: deps.config.maxBodyBytes,
    authorize: bearerAuth({
      tokens: deps.config.tokens,
      openPaths: ["/health"],
      whenUnset: {
        mode: "fail-closed",
        code: "server_token_unset",
        message: "KB_ROUTER_TOKEN is not set: the router's MCP server refuses every request until it is (set KB_ROUTER_TOKEN or KB_ROUTER_TOKENS and restart)",
      },
    }),
  });

  app.get("/health", (c) => c.json({ status: "ok", service: "knowledge-router-mcp", version: VERSION }));

  app.post("/mcp", async (c) => {
    const body: unknown = await c.req.json().catch(() => {
      throw new HttpError(400, "invalid_json", "the request body is not valid JSON");
    });
    const id = c.req.header("mcp-session-id");
    if (id) {
      const s = streamable.get(id);
      if (!s) return jsonRpcError(404, -32001, `no MCP session ${id}: initialize a new one`);
      s.lastSeen = Date.now();
      return s.transport.handleRequest(c.req.raw, { parsedBody: body });
    }
    if (!isInitializeRequest(body)) return jsonRpcError(400, -32000, "no mcp-session-id header: send initialize first");
    sweepIdle();
    if (streamable.size >= MAX_SESSIONS) return jsonRpcError(503, -32000, `too many MCP sessions (${MAX_SESSIONS}); close some with DELETE /mcp`);
    const server = createRouterMcpServer(deps);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      keepAliveMs,
      onsessioninitialized: (sid) => void streamable.set(sid, { transport, server, lastSeen: Date.now() }),
      onsessionclosed: (sid) => void streamable.delete(sid),
    });
    transport.onclose = () => {
      if (transport.sessionId) streamable.delete(transport.sessionId);
    };
    await server.connect(transport);
    return transport.handleRequest(c.req.raw, { parsedBody: body });
  });

  const bySession = (req: Request, id: string | undefined) => {
    const s = id ? streamable.get(id) : undefined;
    if (!s) return undefined;
    s.lastSeen = Date.now();
    return s.transport.handleRequest(req);
  };
  app.get("/mcp", async (c) => {
    noIdleTimeout(c.env, c.req.raw);
    const id = c.req.header("mcp-session-id");
    if (!id) return openSse();
    return (await bySession(c.req.raw, id)) ?? jsonRpcError(404, -32001, `no MCP session ${id}: initialize a new one`);
  });
  app.delete("/mcp", async (c) => (await bySession(c.req.raw, c.req.header("mcp-session-id"))) ?? jsonRpcError(404, -32001, "no such MCP session"));

  const openSse = async () => {
    const transport = new WebSseServerTransport("/messages", keepAliveMs);
    const server = createRouterMcpServer(deps);
    sse.set(transport.sessionId, { transport, server, lastSeen: Date.now() });
    transport.onclose = () => void sse.delete(transport.sessionId);
    await server.connect(transport);
    return transport.response;
  };
  for (const path of ["/sse", "/mcp/sse"]) {
    app.get(path, (c) => {
      noIdleTimeout(c.env, c.req.raw);
      return openSse();
    });
  }

  app.post("/messages", async (c) => {
    const id = c.req.query("sessionId") ?? "";
    const s = sse.get(id);
    if (!s) throw new HttpError(404, "session_not_found", `no SSE session ${JSON.stringify(id)}: open GET /sse first`);
    const body: unknown = await c.req.json().catch(() => {
      throw new HttpError(400, "invalid_json", "the request body is not valid JSON");
    });
    try {
      s.transport.handlePost(body);
    } catch (err) {
      throw new HttpError(400, "invalid_request", `not a JSON-RPC message: ${(err as Error).message}`);
    }
    s.lastSeen = Date.now();
    return c.text("Accepted", 202);
  });

  function sweepIdle(): void {
    const cutoff = Date.now() - SESSION_IDLE_MS;
    for (const [id, s] of streamable) {
      if (s.lastSeen < cutoff) {
        streamable.delete(id);
        void s.transport.close().catch(() => {});
      }
    }
  }

  return {
    fetch: (req, server) => app.fetch(req, server as never),
    sessions: () => ({ streamable: streamable.size, sse: sse.size }),
    async close() {
      const all = [...streamable.values(), ...sse.values()];
      streamable.clear();
      sse.clear();
      await Promise.allSettled(all.map((s) => s.server.close()));
    },
  };
}
