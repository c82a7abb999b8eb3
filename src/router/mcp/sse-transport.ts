// The older MCP transport (HTTP+SSE, protocol 2024-11-05) on Web standard Request/Response,
// since the SDK's own SSEServerTransport needs node:http: GET opens an event stream whose
// first event, `endpoint`, names the URL to POST messages to (…?sessionId=<id>); the server's
// messages come back as `message` events. Keep-alive comments hold idle connections open.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

const encoder = new TextEncoder();

export class WebSseServerTransport implements Transport {
  readonly sessionId = crypto.randomUUID();
  readonly response: Response;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private keepAlive: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  /** `endpoint` is the path clients POST to, e.g. "/messages". */
  constructor(endpoint: string, keepAliveMs: number) {
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
        controller.enqueue(encoder.encode(`event: endpoint\ndata: ${endpoint}?sessionId=${this.sessionId}\n\n`));
      },
      cancel: () => void this.close(),
    });
    this.keepAlive = setInterval(() => this.write(": keep-alive\n\n"), keepAliveMs);
    this.response = new Response(stream, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", "x-accel-buffering": "no" },
    });
  }

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error("the SSE stream is closed");
    this.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  /** A POSTed body: a JSON-RPC message, or a batch of them. Throws on anything else. */
  handlePost(body: unknown): void {
    const list = Array.isArray(body) ? body : [body];
    const messages = list.map((m) => JSONRPCMessageSchema.parse(m));
    for (const m of messages) this.onmessage?.(m);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepAlive);
    try {
      this.controller.close();
    } catch {
      // already closed by the client
    }
    this.onclose?.();
  }

  private write(text: string): void {
    if (this.closed) return;
    try {
      this.controller.enqueue(encoder.encode(text));
    } catch (err) {
      this.onerror?.(err as Error);
      void this.close();
    }
  }
}
