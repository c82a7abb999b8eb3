// An opened turn holds its conversation's lock until its events have run out: a surface that
// fails to build its answer (a stream, a body) must end the turn, or the conversation stays busy.
import type { ChatOpening } from "./service";

/**
 * Builds the answer to an opened turn; if that fails, the turn is cancelled and run to its end
 * (which releases the conversation's lock) before the error goes on.
 */
export function settled<T>(opening: ChatOpening, answer: () => T): T {
  try {
    return answer();
  } catch (err) {
    if (opening.kind === "turn") {
      opening.cancel();
      void (async () => {
        for await (const _ of opening.events);
      })().catch(() => {});
    }
    throw err;
  }
}
