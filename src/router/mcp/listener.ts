// The router's MCP server, on its own listener (PORT_BRAIN_MCP, default 8104), behind the same
// edge as the API (bearer, fail closed without a token; Origin and Host checks). The transports,
// sessions and their limits are the shared MCP HTTP layer (common/mcp/http.ts), stateful:
//   Streamable HTTP  POST/GET/DELETE /mcp           (one session per client)
//   HTTP+SSE (older) GET /sse (also /mcp/sse, and GET /mcp without a session id, for SSE-only
//                    clients given the one URL), then POST /messages?sessionId=<id>
// Each session gets its own McpServer over the shared domain (tools.ts).
import { Hono } from "hono";
import { edgeProtection, mcpLimitsOf } from "../../common/config/edge-settings";
import { createErrorHandler, createNotFoundHandler } from "../../common/error-handler";
import { type EdgeBindings, installServiceEdge } from "../../common/http/edge";
import { mountMcp } from "../../common/mcp/http";
import { McpSessions } from "../../common/mcp/sessions";
import { bearerAuth } from "../../common/middleware/bearer-auth";
import { VERSION } from "../../common/version";
import type { RouterDeps } from "../app-types";

export interface RouterMcp {
  fetch: (req: Request, server?: unknown) => Response | Promise<Response>;
  /** Open sessions by transport. */
  sessions(): { streamable: number; sse: number };
  /** Ends every session and stream (shutdown). */
  close(): Promise<void>;
}

export function createRouterMcp(deps: RouterDeps): RouterMcp {
  const sessions = new McpSessions(mcpLimitsOf(deps.config));
  const app = new Hono<{ Bindings: EdgeBindings }>();
  app.onError(createErrorHandler(() => false));
  app.notFound(createNotFoundHandler(() => false));
  installServiceEdge(app, {
    openAi: () => false,
    logTag: "router-mcp",
    maxBodyBytes: deps.config.maxBodyBytes,
    ...edgeProtection(deps.config, deps.config.tokens.length > 0),
    authorize: bearerAuth({
      tokens: deps.config.tokens,
      openPaths: ["/health"],
      scopedTokens: true,
      whenUnset: {
        mode: "fail-closed",
        code: "server_token_unset",
        message: "KB_ROUTER_TOKEN is not set: the router's MCP server refuses every request until it is (set KB_ROUTER_TOKEN or KB_ROUTER_TOKENS and restart)",
      },
    }),
  });

  app.get("/health", (c) => c.json({ status: "ok", service: "knowledge-router-mcp", version: VERSION }));
  mountMcp(app, {
    // The tools (and the SDK behind them) load with the first MCP session.
    createServer: async () => (await import("./tools")).createRouterMcpServer(deps),
    paths: { mcp: "/mcp", sse: ["/sse", "/mcp/sse"], messages: "/messages" },
    mode: "stateful",
    sessions,
    keepAliveMs: deps.config.signalHeartbeatSeconds * 1000,
  });

  return {
    fetch: (req, server) => app.fetch(req, server as never),
    sessions: () => ({ streamable: sessions.count("streamable"), sse: sessions.count("sse") }),
    close: () => sessions.close(),
  };
}
