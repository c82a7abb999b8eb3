import { describe, expect, it } from "bun:test";
import type { ChatOpening } from "./service";
import { settled } from "./settled";

function turn() {
  const state = { cancelled: false, drained: false };
  const events = (async function* () {
    yield { type: "narration" } as never;
    state.drained = true;
  })();
  const batches = (async function* () {})();
  const opening = {
    kind: "turn",
    visibility: {} as never,
    info: {} as never,
    events,
    batches,
    cancel: () => {
      state.cancelled = true;
    },
  } as ChatOpening;
  return { opening, state };
}

describe("settled", () => {
  it("hands back the answer and leaves the turn alone when it builds", () => {
    const { opening, state } = turn();
    expect(settled(opening, () => "stream")).toBe("stream");
    expect(state.cancelled).toBe(false);
  });

  it("cancels the turn and runs it to its end (releasing the conversation) when the answer fails", async () => {
    const { opening, state } = turn();
    expect(() =>
      settled(opening, () => {
        throw new Error("no stream");
      }),
    ).toThrow("no stream");
    expect(state.cancelled).toBe(true);
    for (let i = 0; i < 100 && !state.drained; i++) await Promise.resolve();
    expect(state.drained).toBe(true);
  });
});
