// The older MCP transport ("HTTP+SSE", protocol 2024-11-05) on web streams: the client opens
// an event stream (GET), is told where to POST its messages by an `endpoint` event, and gets
// every answer as a `message` event on that stream. The SDK's own SSEServerTransport needs
// Node's ServerResponse; this is the same protocol for Bun's Request/Response.
import { randomUUID } from "node:crypto";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, type JSONRPCMessage, type MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";

const KEEP_ALIVE_MS = 15_000;
const encoder = new TextEncoder();

export class SseServerTransport implements Transport {
  readonly sessionId = randomUUID();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  private controller?: ReadableStreamDefaultController<Uint8Array>;
  private keepAlive?: ReturnType<typeof setInterval>;
  private closed = false;
  readonly stream: ReadableStream<Uint8Array>;

  /** `endpoint`: the path (relative to the server) the client POSTs its messages to. */
  constructor(private readonly endpoint: string) {
    this.stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
      },
      // The client went away.
      cancel: () => void this.close(),
    });
  }

  /** The streaming response for the GET that opened the session. */
  response(): Response {
    return new Response(this.stream, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache, no-transform",
        connection: "keep-alive",
        "x-accel-buffering": "no",
      },
    });
  }

  async start(): Promise<void> {
    const sep = this.endpoint.includes("?") ? "&" : "?";
    this.write(`event: endpoint\ndata: ${this.endpoint}${sep}sessionId=${this.sessionId}\n\n`);
    // Comments keep proxies (and Bun's idle timeout, where it applies) from closing a quiet stream.
    this.keepAlive = setInterval(() => this.write(": keep-alive\n\n"), KEEP_ALIVE_MS);
    this.keepAlive.unref?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error("the SSE stream is closed");
    this.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  /** A POSTed message for this session: 202 once handed to the server, 400 when it is not JSON-RPC. */
  async handlePost(req: Request): Promise<Response> {
    if (this.closed) return new Response("the SSE session has ended", { status: 404 });
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(await req.json());
    } catch (err) {
      this.onerror?.(err as Error);
      return Response.json(
        { jsonrpc: "2.0", id: null, error: { code: -32700, message: `invalid JSON-RPC message: ${(err as Error).message}` } },
        { status: 400 },
      );
    }
    this.onmessage?.(message, { requestInfo: { headers: Object.fromEntries(req.headers) } });
    return new Response("Accepted", { status: 202 });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepAlive);
    try {
      this.controller?.close();
    } catch {
      // already closed by the client
    }
    this.onclose?.();
  }

  private write(text: string): void {
    if (this.closed || !this.controller) return;
    try {
      this.controller.enqueue(encoder.encode(text));
    } catch (err) {
      this.onerror?.(err as Error);
      void this.close();
    }
  }
}
