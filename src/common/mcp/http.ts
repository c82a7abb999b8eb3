// The one MCP HTTP layer of both services, mounted on an app behind the service edge (which
// checks the bearer, Origin and Host first: http/edge.ts):
//   Streamable HTTP  POST /mcp (+ GET for the session's event stream and DELETE, when stateful)
//   HTTP+SSE (older) GET <sse paths>, or GET /mcp with neither Mcp-Session-Id nor
//                    MCP-Protocol-Version (what an SSE-only client given the one URL sends),
//                    then POST <messages>?sessionId=<id>
// "stateful" keeps one Streamable HTTP session per client in this process (the router);
// "stateless" answers each POST with a fresh server and holds nothing (the orchestrator: any
// pod answers any request), so GET and DELETE /mcp answer 405 there.
// Every held session and stream is in one McpSessions: capped per credential and in all, closed
// when idle.
import { createHash } from "node:crypto";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Hono } from "hono";
import { HttpError } from "../errors";
import type { EdgeBindings } from "../http/edge";
import { liftIdleTimeout } from "../http/sse";
import { bearerFrom } from "../middleware/bearer-auth";
import { clientAddress } from "../middleware/client-address";
import { illFormedString } from "../validation";
import type { McpSessions } from "./sessions";
import type { SseServerTransport } from "./sse-transport";

/**
 * The MCP SDK's transports, loaded with the first MCP request: a service that is never asked
 * over MCP does not hold the SDK and its schemas in memory.
 */
let sdkLoading: Promise<typeof import("./sdk-transports")> | undefined;
const sdk = () => {
  sdkLoading ??= import("./sdk-transports");
  return sdkLoading;
};

export interface McpHttpOptions {
  /** A new MCP server (tools over the service's domain) for one session or request. */
  createServer: () => McpServer | Promise<McpServer>;
  paths: { mcp: string; sse: string[]; messages: string };
  mode: "stateful" | "stateless";
  sessions: McpSessions;
  keepAliveMs: number;
}

/** What the pool holds for one session: its transport, and how to end it. */
interface McpSession {
  close(): Promise<void>;
  sse?: SseServerTransport;
  streamable?: WebStandardStreamableHTTPServerTransport;
}

const jsonRpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });

/** A message holding a string no file, header or store can hold (a lone surrogate): refused as invalid params, by field. */
function illFormedMessage(body: unknown): Response | undefined {
  const broken = illFormedString(body);
  return broken ? jsonRpcError(400, -32602, `invalid params: ${broken.path}: ${broken.message}`) : undefined;
}

/** Who holds a session: the bearer token (hashed), else the client's address. */
function sessionOwner(req: Request, env: Partial<EdgeBindings> | undefined): string {
  const token = bearerFrom(req.headers.get("authorization") ?? undefined);
  if (token) return `t:${createHash("sha256").update(token).digest("hex").slice(0, 24)}`;
  return `a:${clientAddress(req, env?.server)}`;
}

const requireJson = (req: Request) => {
  const type = req.headers.get("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new HttpError(415, "unsupported_media_type", "MCP messages are JSON: send Content-Type: application/json");
  }
};

// biome-ignore lint/suspicious/noExplicitAny: any app, whatever its service's Env (Hono's generic is invariant)
export function mountMcp(app: Hono<any>, opts: McpHttpOptions): void {
  const { paths } = opts;
  const sessions = opts.sessions as McpSessions<McpSession>;
  const stateful = opts.mode === "stateful";

  const openSse = async (req: Request, env: Partial<EdgeBindings> | undefined): Promise<Response> => {
    const owner = sessionOwner(req, env);
    sessions.admit(owner);
    liftIdleTimeout(env?.server, req);
    const { SseServerTransport } = await sdk();
    const transport = new SseServerTransport(paths.messages, opts.keepAliveMs);
    const server = await opts.createServer();
    sessions.add(transport.sessionId, "sse", owner, { sse: transport, close: () => server.close() });
    transport.onclose = () => sessions.delete(transport.sessionId);
    await server.connect(transport);
    return transport.response();
  };

  for (const path of paths.sse) app.get(path, (c) => openSse(c.req.raw, c.env));

  app.post(paths.messages, async (c) => {
    const id = c.req.query("sessionId") ?? "";
    const s = sessions.use(id, "sse");
    if (!s?.sse) {
      throw new HttpError(404, "session_not_found", `no MCP SSE session ${JSON.stringify(id)} in this process; open a new one with GET ${paths.sse[0]}`);
    }
    requireJson(c.req.raw);
    return s.sse.handlePost(c.req.raw);
  });

  app.post(paths.mcp, async (c) => {
    const req = c.req.raw;
    liftIdleTimeout(c.env?.server, req);
    if (!stateful) {
      // Stateless: a fresh server and transport per request, gone with its response.
      const refused = illFormedMessage(
        await req
          .clone()
          .json()
          .catch(() => undefined),
      );
      if (refused) return refused;
      const { WebStandardStreamableHTTPServerTransport } = await sdk();
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      await (await opts.createServer()).connect(transport);
      return transport.handleRequest(req);
    }
    requireJson(req);
    const body: unknown = await req.json().catch(() => {
      throw new HttpError(400, "invalid_json", "the request body is not valid JSON");
    });
    const refused = illFormedMessage(body);
    if (refused) return refused;
    const id = c.req.header("mcp-session-id");
    if (id) {
      const s = sessions.use(id, "streamable");
      if (!s?.streamable) return jsonRpcError(404, -32001, `no MCP session ${id}: initialize a new one`);
      return s.streamable.handleRequest(req, { parsedBody: body });
    }
    const { isInitializeRequest, WebStandardStreamableHTTPServerTransport } = await sdk();
    if (!isInitializeRequest(body)) return jsonRpcError(400, -32000, "no Mcp-Session-Id header: send initialize first");
    const owner = sessionOwner(req, c.env);
    sessions.admit(owner);
    const server = await opts.createServer();
    const forget = (sid: string) => sessions.delete(sid);
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      // The SDK writes the session stream's keep-alive comments itself, at our interval.
      keepAliveMs: opts.keepAliveMs,
      onsessioninitialized: (sid) => sessions.add(sid, "streamable", owner, { streamable: transport, close: () => transport.close() }),
      onsessionclosed: forget,
    });
    transport.onclose = () => {
      if (transport.sessionId) forget(transport.sessionId);
      void server.close().catch(() => {});
    };
    await server.connect(transport);
    return transport.handleRequest(req, { parsedBody: body });
  });

  app.get(paths.mcp, async (c) => {
    const req = c.req.raw;
    const id = c.req.header("mcp-session-id");
    if (!id && !req.headers.has("mcp-protocol-version")) return openSse(req, c.env);
    if (!stateful) return notAllowed();
    const s = sessions.use(id, "streamable");
    if (!s?.streamable) return jsonRpcError(404, -32001, `no MCP session ${id ?? "(Mcp-Session-Id missing)"}: initialize a new one`);
    liftIdleTimeout(c.env?.server, req);
    return s.streamable.handleRequest(req);
  });

  app.delete(paths.mcp, async (c) => {
    if (!stateful) return notAllowed();
    const s = sessions.use(c.req.header("mcp-session-id"), "streamable");
    if (!s?.streamable) return jsonRpcError(404, -32001, "no such MCP session");
    return s.streamable.handleRequest(c.req.raw);
  });
}

const notAllowed = () => jsonRpcError(405, -32000, "this server is stateless: POST /mcp (Streamable HTTP), or GET the SSE path (HTTP+SSE)", { Allow: "POST" });
