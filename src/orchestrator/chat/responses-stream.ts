// A chat opening as the Responses API answers it: streaming (`event: <type>` + `data: <json>`
// per typed event, no [DONE]) or buffered into one response object. A failed turn ends the
// stream with response.failed; a failure of the service itself also sends an `error` event.
// Non-streaming, a failed turn is a DomainError (upstream, the agent's code), as on chat completions.
import { DomainError } from "../../common/domain-error";
import { log } from "../../common/logger";
import { ResponseBuilder, type ResponseContext, type ResponseStreamEvent } from "./responses-events";
import type { ChatOpening } from "./service";
import { eventStream } from "./sse-stream";

const logger = log("chat");

async function feed(opening: ChatOpening, b: ResponseBuilder): Promise<void> {
  if (opening.kind === "config") {
    b.text(JSON.stringify(opening.visibility));
    return;
  }
  for await (const ev of opening.events) b.push(ev);
}

export function responsesStream(opening: ChatOpening, ctx: ResponseContext, opts: { keepAliveMs?: number } = {}): ReadableStream<Uint8Array> {
  return eventStream(
    async (write) => {
      const emit = (ev: ResponseStreamEvent) => write(`event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`);
      const b = new ResponseBuilder(ctx, opening.visibility, emit);
      b.start();
      try {
        await feed(opening, b);
      } catch (err) {
        logger.error("responses stream failed:", err);
        b.fail("internal_error", `the service failed while streaming: ${(err as Error).message}`);
      }
      b.finish();
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
