// The older MCP transport ("HTTP+SSE", protocol 2024-11-05) on web streams, for both MCP
// servers: the client opens an event stream (GET), is told where to POST its messages by an
// `endpoint` event, and gets every answer as a `message` event on that stream. The SDK's own
// SSEServerTransport needs Node's ServerResponse; this is the same protocol for Bun.
import { randomUUID } from "node:crypto";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema, type MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";
import { HttpError } from "../errors";
import { formatEvent, type SseSink, sseResponse, sseStream } from "../http/sse";
import { illFormedString } from "../validation";

export class SseServerTransport implements Transport {
  readonly sessionId = randomUUID();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  private sink?: SseSink;
  private pending: string[] = [];
  private closed = false;
  private ended?: () => void;

  /** `endpoint`: the path (relative to the server) the client POSTs its messages to. */
  constructor(
    private readonly endpoint: string,
    private readonly keepAliveMs: number,
  ) {}

  /** The streaming response for the GET that opened the session. */
  response(): Response {
    const done = new Promise<void>((resolve) => (this.ended = resolve));
    if (this.closed) this.ended!();
    const sep = this.endpoint.includes("?") ? "&" : "?";
    const stream = sseStream({
      keepAliveMs: this.keepAliveMs,
      run: async (sink) => {
        sink.event({ event: "endpoint", data: `${this.endpoint}${sep}sessionId=${this.sessionId}` });
        for (const text of this.pending.splice(0)) sink.write(text);
        this.sink = sink;
        await done;
      },
      // The client went away.
      onCancel: () => void this.close(),
    });
    return sseResponse(stream);
  }

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error("the SSE stream is closed");
    const text = formatEvent({ event: "message", data: message });
    if (this.sink) this.sink.write(text);
    else this.pending.push(text);
  }

  /** A POSTed message (or batch) for this session: 202 once handed to the server. */
  async handlePost(req: Request): Promise<Response> {
    if (this.closed) throw new HttpError(404, "session_not_found", "the SSE session has ended; open a new one");
    const body: unknown = await req.json().catch(() => {
      throw new HttpError(400, "invalid_json", "the request body is not valid JSON");
    });
    const broken = illFormedString(body);
    if (broken) throw new HttpError(400, "invalid_request", `invalid request: ${broken.path}: ${broken.message}`, [broken]);
    let messages: JSONRPCMessage[];
    try {
      messages = (Array.isArray(body) ? body : [body]).map((m) => JSONRPCMessageSchema.parse(m));
    } catch {
      throw new HttpError(400, "invalid_request", "the body is not a JSON-RPC 2.0 message (or a batch of them)");
    }
    const extra = { requestInfo: { headers: Object.fromEntries(req.headers) } };
    for (const m of messages) this.onmessage?.(m, extra);
    return new Response("Accepted", { status: 202 });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.ended?.();
    this.onclose?.();
  }
}
