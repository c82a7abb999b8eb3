// A chat opening as an SSE response (spec: Events, "SSE chunks"): role open, the turn's chunks as
// they come (filtered by the visibility config), stop with usage, [DONE]. The shared SSE helper
// (common/http/sse.ts) keeps the connection alive while the agent is silent. Whatever happens,
// the stream ends with stop and [DONE]; a client that goes away cancels the agent.
import type { TokenUsage } from "../agent/outcome";
import { errorChunk, renderChunk, roleChunk, stopChunk, streamConfigChunk, type Chunk, type ChunkContext } from "./openai-chunks";
import type { ChatOpening } from "./service";
import { ZERO_USAGE } from "./turn-events";
import { log } from "../../common/logger";
import { DEFAULT_KEEP_ALIVE_MS, SSE_HEADERS, sseStream as commonSseStream } from "../../common/http/sse";

const logger = log("chat");

export { DEFAULT_KEEP_ALIVE_MS, SSE_HEADERS };

export function sseStream(opening: ChatOpening, ctx: ChunkContext, opts: { keepAliveMs?: number } = {}): ReadableStream<Uint8Array> {
  return commonSseStream({
    keepAliveMs: opts.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS,
    onCancel: () => {
      if (opening.kind === "turn") opening.cancel();
    },
    run: async (sink) => {
      const send = (c: Chunk) => sink.write(`data: ${JSON.stringify(c)}\n\n`);
      let usage: TokenUsage = ZERO_USAGE;
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
      sink.write("data: [DONE]\n\n");
    },
  });
}
