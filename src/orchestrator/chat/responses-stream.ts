// A chat opening as the Responses API answers it: streaming (`event: <type>` + `data: <json>`
// per typed event, no [DONE]) or buffered into one response object. A failed turn ends the
// stream with response.failed; a failure of the service itself also sends an `error` event.
// Non-streaming, a failed turn is a DomainError (upstream, the agent's code), as on chat completions.
import { DomainError } from "../../common/domain-error";
import { log } from "../../common/logger";
import { eventStream } from "./completion-stream";
import { ResponseBuilder, type ResponseContext } from "./responses-events";
import type { ChatOpening } from "./service";

const logger = log("chat");

/** `afterBatch` runs after each read of the agent's output has been pushed (the stream writes then). */
async function feed(opening: ChatOpening, b: ResponseBuilder, afterBatch?: () => void): Promise<void> {
  if (opening.kind === "config") {
    b.text(JSON.stringify(opening.visibility));
    return;
  }
  for await (const batch of opening.batches) {
    for (const ev of batch) b.push(ev);
    afterBatch?.();
  }
}

export function responsesStream(opening: ChatOpening, ctx: ResponseContext, opts: { keepAliveMs?: number } = {}): ReadableStream<Uint8Array> {
  return eventStream(
    async (write) => {
      // Events gather while a read of the agent's output is pushed, then go out as one write.
      let pending = "";
      const send = () => {
        if (pending !== "") write(pending);
        pending = "";
      };
      const b = new ResponseBuilder(ctx, opening.visibility, {
        sse: (text) => {
          pending += text;
        },
      });
      b.start();
      send();
      try {
        await feed(opening, b, send);
      } catch (err) {
        logger.error("responses stream failed:", err);
        b.fail("internal_error", `the service failed while streaming: ${(err as Error).message}`);
      }
      b.finish();
      send();
    },
    { keepAliveMs: opts.keepAliveMs, cancel: () => opening.kind === "turn" && opening.cancel() },
  );
}

export async function bufferResponse(opening: ChatOpening, ctx: ResponseContext) {
  const b = new ResponseBuilder(ctx, opening.visibility);
  await feed(opening, b);
  if (b.failure) throw new DomainError("upstream", b.failure.code, `the agent failed: ${b.failure.message}`);
  return b.finish();
}
