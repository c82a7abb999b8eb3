// A chat opening as an SSE response (spec: Events, "SSE chunks"): role open, the turn's chunks as
// they come (filtered by the visibility config), stop with usage, [DONE]. eventStream() is the
// writer both this and the Responses API's typed events (responses-stream.ts) use. A comment line keeps
// the connection alive while the agent is silent (Bun and proxies drop idle connections:
// DESIGN, Known pitfalls). Whatever happens, the stream ends with stop and [DONE]; a client
// that goes away cancels the agent.
import { errorChunk, renderChunk, roleChunk, stopChunk, streamConfigChunk, usageChunk, type Chunk, type ChunkContext } from "./openai-chunks";
import type { ChatOpening } from "./service";
import { ZERO_USAGE, type ChatUsage } from "./usage";
import { log } from "../../common/logger";

const logger = log("chat");

export const DEFAULT_KEEP_ALIVE_MS = 15_000;

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  connection: "keep-alive",
  // nginx and friends: pass each event through as it is written.
  "x-accel-buffering": "no",
} as const;

/** What a producer writes to: raw SSE text (already framed), flushed once per burst. */
export type SseWrite = (text: string) => void;

/**
 * A text/event-stream body written by `produce` (Bun's direct stream: text goes straight into the
 * response's buffer, flushed once per burst), with a keep-alive comment whenever nothing was
 * written for keepAliveMs; `cancel` runs when the client goes away.
 */
export function eventStream(produce: (write: SseWrite) => Promise<void>, opts: { keepAliveMs?: number; cancel?: () => void } = {}): ReadableStream<Uint8Array> {
  const keepAliveMs = opts.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
  let closed = false;
  let timer: ReturnType<typeof setInterval> | undefined;

  return new ReadableStream({
    type: "direct",
    async pull(controller: { write(s: string): number | Promise<number>; flush(): unknown; close(): void }) {
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
      const write = (text: string) => {
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
      };
      timer = setInterval(() => {
        if (!wrote) write(": keep-alive\n\n");
        wrote = false;
      }, keepAliveMs);
      try {
        await produce(write);
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
      opts.cancel?.();
    },
  } as unknown as ConstructorParameters<typeof ReadableStream<Uint8Array>>[0]);
}

export function sseStream(opening: ChatOpening, ctx: ChunkContext, opts: { keepAliveMs?: number } = {}): ReadableStream<Uint8Array> {
  return eventStream(
    async (write) => {
      const send = (c: Chunk) => write(`data: ${JSON.stringify(c)}\n\n`);
      let usage: ChatUsage = ZERO_USAGE;
      send(roleChunk(ctx));
      try {
        if (opening.kind === "config") {
          send(streamConfigChunk(ctx, opening.visibility));
        } else {
          const v = opening.visibility;
          for await (const ev of opening.events) {
            if (ev.type === "usage") {
              usage = ev.usage;
              continue;
            }
            const c = renderChunk(ctx, ev, v);
            if (c) send(c);
          }
        }
      } catch (err) {
        logger.error("chat stream failed:", err);
        send(errorChunk(ctx, "internal_error", `the service failed while streaming: ${(err as Error).message}`));
      }
      send(stopChunk(ctx, usage));
      if (ctx.includeUsage) send(usageChunk(ctx, usage));
      write("data: [DONE]\n\n");
    },
    { keepAliveMs: opts.keepAliveMs, cancel: () => opening.kind === "turn" && opening.cancel() },
  );
}
