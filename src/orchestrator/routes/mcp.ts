// /mcp over HTTP, both transports, behind the app's bearer auth (same API keys as REST):
//   Streamable HTTP  POST /mcp (stateless: any pod can answer any request; GET and DELETE → 405)
//   HTTP+SSE         GET /mcp/sse, or GET /mcp without Mcp-Session-Id / MCP-Protocol-Version
//                    headers (what an SSE-only client sends), then POST /mcp/messages?sessionId=…
// An SSE session lives in the process that opened it: behind a load balancer, SSE clients need
// sticky sessions; Streamable HTTP clients do not.
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { HttpError } from "../../common/errors";
import { log } from "../../common/logger";
import type { OrchestratorApp } from "../app";
import { createMcpServer, type McpDeps } from "../mcp/server";
import { SseServerTransport } from "../mcp/sse-transport";
import { keepOpen } from "./keep-open";

const logger = log("mcp");

export const MCP_PATH = "/mcp";
export const MCP_SSE_PATH = "/mcp/sse";
export const MCP_MESSAGES_PATH = "/mcp/messages";
/** Open SSE sessions per process; past this a new one is refused (503) rather than exhausting memory. */
const MAX_SSE_SESSIONS = 1000;

/** The open SSE sessions of this process; close() ends them all (shutdown). */
export class McpSseSessions extends Map<string, SseServerTransport> {
  async close(): Promise<void> {
    await Promise.all([...this.values()].map((t) => t.close()));
  }
}

export function registerMcpRoutes(app: OrchestratorApp, deps: McpDeps, sessions: McpSseSessions): void {

  const openSse = async (): Promise<Response> => {
    if (sessions.size >= MAX_SSE_SESSIONS) {
      throw new HttpError(503, "too_many_sessions", `${MAX_SSE_SESSIONS} MCP SSE sessions are open; close one or use Streamable HTTP (POST /mcp)`);
    }
    const transport = new SseServerTransport(MCP_MESSAGES_PATH);
    sessions.set(transport.sessionId, transport);
    transport.onclose = () => sessions.delete(transport.sessionId);
    transport.onerror = (err) => logger.debug(`SSE session ${transport.sessionId}: ${err.message}`);
    await createMcpServer(deps).connect(transport);
    return transport.response();
  };

  app.get(MCP_SSE_PATH, async (c) => {
    keepOpen(c);
    return openSse();
  });

  app.post(MCP_MESSAGES_PATH, async (c) => {
    const id = c.req.query("sessionId") ?? "";
    const transport = sessions.get(id);
    if (!transport) {
      throw new HttpError(404, "session_not_found", `no MCP SSE session ${id || "(sessionId missing)"} in this process; open a new one with GET ${MCP_SSE_PATH}`);
    }
    return transport.handlePost(c.req.raw);
  });

  app.all(MCP_PATH, async (c) => {
    keepOpen(c);
    const req = c.req.raw;
    const streamable = req.headers.has("mcp-session-id") || req.headers.has("mcp-protocol-version");
    if (req.method === "GET" && !streamable && (req.headers.get("accept") ?? "").includes("text/event-stream")) {
      return openSse();
    }
    // Stateless: a fresh server and transport per request, gone with its response.
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await createMcpServer(deps).connect(transport);
    return transport.handleRequest(req);
  });
}
