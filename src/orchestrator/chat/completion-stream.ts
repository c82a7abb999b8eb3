// A chat opening as an SSE response (spec: Events, "SSE chunks"): role open, the turn's chunks as
// they come (filtered by the visibility config), stop with usage, [DONE]. The shared SSE helper
// (common/http/sse.ts) keeps the connection alive while the agent is silent; eventStream() is the
// writer both this and the Responses API's typed events (responses-stream.ts) use. Whatever
// happens, the stream ends with stop and [DONE]; a client that goes away cancels the agent.

import { DEFAULT_KEEP_ALIVE_MS, SSE_HEADERS, sseStream } from "../../common/http/sse";
import { log } from "../../common/logger";
import { type Chunk, type ChunkContext, chunkRenderer, errorChunk, roleChunk, stopChunk, streamConfigChunk, usageChunk } from "./openai-chunks";
import type { ChatOpening } from "./service";
import { type ChatUsage, ZERO_USAGE } from "./usage";

const logger = log("chat");

export { DEFAULT_KEEP_ALIVE_MS, SSE_HEADERS };

/** What a producer writes to: raw SSE text (already framed), flushed once per burst. */
export type SseWrite = (text: string) => void;

/** A text/event-stream body written by `produce` through the shared SSE helper; `cancel` runs when the client goes away. */
export function eventStream(produce: (write: SseWrite) => Promise<void>, opts: { keepAliveMs?: number; cancel?: () => void } = {}): ReadableStream<Uint8Array> {
  return sseStream({ keepAliveMs: opts.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS, onCancel: opts.cancel, run: (sink) => produce((text) => sink.write(text)) });
}

/** A chat completion as `chat.completion.chunk` SSE: role, the turn's chunks, stop with usage, [DONE]. */
export function chatCompletionStream(opening: ChatOpening, ctx: ChunkContext, opts: { keepAliveMs?: number } = {}): ReadableStream<Uint8Array> {
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
          const render = chunkRenderer(ctx);
          // A read of the agent's output at a time: its chunks go out as one write.
          for await (const batch of opening.batches) {
            let text = "";
            for (const ev of batch) {
              if (ev.type === "usage") {
                usage = ev.usage;
                continue;
              }
              text += render(ev, v) ?? "";
            }
            if (text !== "") write(text);
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
