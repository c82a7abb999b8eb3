// The one server-sent-events helper of both services (GET /signal, the chat stream, the MCP
// HTTP+SSE transport): the headers, Bun's idle timeout lifted for the request, a `: keep-alive`
// comment whenever the stream has been quiet for keepAliveMs (Bun and proxies drop idle
// connections: DESIGN, Known pitfalls), and Last-Event-ID read from header or query.
//
// The stream is Bun's direct stream: text is written straight into the response's buffer (no
// per-chunk queue or encoding step) and flushed once per burst.
import { HttpError } from "../http-error";

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
  // nginx and friends: pass each event through as it is written.
  "x-accel-buffering": "no",
} as const;

export const DEFAULT_KEEP_ALIVE_MS = 15_000;

/** What a handler knows of Bun's server (c.env.server): enough to lift the idle timeout. */
export interface IdleTimeoutServer {
  timeout?: (req: Request, seconds: number) => void;
}

/**
 * No idle timeout for this request: it streams (or waits) for longer than Bun's 255 s maximum.
 * Route handlers call keepOpen(c) (http/edge.ts), which finds the server in the context.
 */
export function liftIdleTimeout(server: IdleTimeoutServer | undefined, req: Request): void {
  server?.timeout?.(req, 0);
}

export interface SseEvent {
  id?: string | number;
  event?: string;
  /** A string is sent as is (one data: line per line); anything else as JSON. */
  data: unknown;
}

/** Where a stream's producer writes. Writes after the client went away are dropped. */
export interface SseSink {
  readonly closed: boolean;
  /** Raw SSE text (already framed). */
  write(text: string): void;
  event(e: SseEvent): void;
  comment(text: string): void;
}

export interface SseStreamOptions {
  keepAliveMs?: number;
  /** Produces the stream; it ends when this resolves (or throws). */
  run: (sink: SseSink) => Promise<void>;
  /** The client went away. */
  onCancel?: () => void;
}

/** One SSE event as text. Field values never carry a line break (that would forge fields). */
export function formatEvent(e: SseEvent): string {
  let out = "";
  if (e.event !== undefined) out += `event: ${oneLine(e.event)}\n`;
  if (e.id !== undefined) out += `id: ${oneLine(String(e.id))}\n`;
  const data = typeof e.data === "string" ? e.data : JSON.stringify(e.data);
  for (const line of data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}

const oneLine = (s: string) => s.replace(/[\r\n\0]/g, " ");

type DirectController = { write(s: string): number | Promise<number>; flush(): unknown; close(): void };

export function sseStream(opts: SseStreamOptions): ReadableStream<Uint8Array> {
  const keepAliveMs = opts.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
  let closed = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  return new ReadableStream({
    type: "direct",
    async pull(controller: DirectController) {
      let wrote = false;
      let scheduled = false;
      const flush = () => {
        scheduled = false;
        if (closed) return;
        try {
          controller.flush();
        } catch {
          closed = true;
        }
      };
      const sink: SseSink = {
        get closed() {
          return closed;
        },
        write(text) {
          if (closed) return;
          try {
            controller.write(text);
          } catch {
            closed = true;
            return;
          }
          wrote = true;
          if (!scheduled) {
            scheduled = true;
            setImmediate(flush);
          }
        },
        event: (e) => sink.write(formatEvent(e)),
        comment: (text) => sink.write(`: ${oneLine(text)}\n\n`),
      };
      timer = setInterval(() => {
        if (!wrote) sink.write(": keep-alive\n\n");
        wrote = false;
      }, keepAliveMs);
      try {
        await opts.run(sink);
      } finally {
        clearInterval(timer);
        if (!closed) {
          closed = true;
          try {
            controller.flush();
            controller.close();
          } catch {
            // the client already went away
          }
        }
      }
    },
    cancel() {
      closed = true;
      clearInterval(timer);
      opts.onCancel?.();
    },
  } as unknown as ConstructorParameters<typeof ReadableStream<Uint8Array>>[0]);
}

/** A 200 text/event-stream response around `stream`, with extra headers. */
export function sseResponse(stream: ReadableStream<Uint8Array>, headers: Record<string, string> = {}): Response {
  return new Response(stream, { status: 200, headers: { ...SSE_HEADERS, ...headers } });
}

/**
 * The id a reconnecting client last saw: the Last-Event-ID header, else `?last_event_id=`
 * (for clients that cannot set headers). Blank = none.
 */
export function lastEventIdOf(req: Request): string | undefined {
  const v = req.headers.get("last-event-id") ?? new URL(req.url).searchParams.get("last_event_id") ?? undefined;
  return v === undefined || v.trim() === "" ? undefined : v.trim();
}

/**
 * A reconnecting client's Last-Event-ID (header, else `?last_event_id=`) as an event id of a
 * stream whose ids are whole numbers; undefined when it sent none. Anything else is refused: at
 * most 15 digits, so the id survives as a JavaScript number.
 */
export function eventIdOf(v: string | undefined): number | undefined {
  if (v === undefined || v.trim() === "") return undefined;
  if (!/^\d{1,15}$/.test(v.trim()))
    throw new HttpError(400, "invalid_request", `Last-Event-ID must be an event id from this stream (a whole number), got ${JSON.stringify(v)}`);
  return Number(v.trim());
}
