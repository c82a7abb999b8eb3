// /mcp over HTTP, both transports, behind the app's edge (same API keys as REST), through the
// shared MCP HTTP layer (common/mcp/http.ts), stateless:
//   Streamable HTTP  POST /mcp (any pod can answer any request; GET and DELETE → 405)
//   HTTP+SSE         GET /mcp/sse, or GET /mcp without Mcp-Session-Id / MCP-Protocol-Version
//                    headers (what an SSE-only client sends), then POST /mcp/messages?sessionId=…
// An SSE session lives in the process that opened it: behind a load balancer, SSE clients need
// sticky sessions; Streamable HTTP clients do not.

import { DEFAULT_KEEP_ALIVE_MS } from "../../common/http/sse";
import { mountMcp } from "../../common/mcp/http";
import { McpSessions } from "../../common/mcp/sessions";
import type { OrchestratorApp } from "../app-types";
import { createMcpServer, type McpDeps } from "../mcp/server";

const MCP_PATH = "/mcp";
const MCP_SSE_PATH = "/mcp/sse";
const MCP_MESSAGES_PATH = "/mcp/messages";

/** The open MCP SSE sessions of this process; close() ends them all (shutdown). */
export { McpSessions as McpSseSessions };

export function registerMcp(app: OrchestratorApp, deps: McpDeps, sessions: McpSessions): void {
  mountMcp(app, {
    createServer: () => createMcpServer(deps),
    paths: { mcp: MCP_PATH, sse: [MCP_SSE_PATH], messages: MCP_MESSAGES_PATH },
    mode: "stateless",
    sessions,
    keepAliveMs: DEFAULT_KEEP_ALIVE_MS,
  });
}
