import { describe, expect, it } from "bun:test";
import { EVERYTHING_SHOWN } from "../../../test/support/chat-visibility";
import { ResponseBuilder, type ResponseContext, type ResponseStreamEvent } from "./responses-events";
import type { TurnEvent } from "./turn-events";
import { DEFAULT_VISIBILITY, type Visibility } from "./visibility";

const ALL = EVERYTHING_SHOWN;
const AWKWARD = ['quotes " and \\ backslash', "line\nbreak\r\nand\ttab", "\u2028\u2029 separators", "lone \ud800 surrogate", "emoji 🧠", "</script>", ""];

const ctx: ResponseContext = {
  id: "resp_ab12",
  hex: "ab12",
  createdAt: 1_700_000_000,
  model: 'agent "quoted"',
  instructions: null,
  previousResponseId: null,
  metadata: {},
  user: null,
};

/** A turn with every kind of event, deltas in several items (sequence numbers and item ids move on). */
function turn(): TurnEvent[] {
  const events: TurnEvent[] = [];
  for (const text of AWKWARD) events.push({ type: "thinking", text, parentToolUseId: null });
  events.push({ type: "text_delta", text: "first block", blockStart: true });
  for (const text of AWKWARD) events.push({ type: "text_delta", text, blockStart: false });
  events.push({ type: "narration", text: "first block", parentToolUseId: null });
  events.push({ type: "tool_call", id: "toolu_1", name: "Bash", input: { command: "ls" }, parentToolUseId: null });
  for (const text of AWKWARD) events.push({ type: "thinking", text, parentToolUseId: null });
  events.push({ type: "text_delta", text: "answer", blockStart: true });
  events.push({ type: "final", text: "answer" });
  events.push({ type: "error", code: "agent_exit", message: "gone" });
  return events;
}

/** The SSE text of the stream, through one sink or the other. */
function stream(sink: "objects" | "sse", v: Visibility): { text: string; events: ResponseStreamEvent[] } {
  const events: ResponseStreamEvent[] = [];
  let text = "";
  const b = new ResponseBuilder(
    ctx,
    v,
    sink === "objects"
      ? (ev) => {
          events.push(ev);
          text += `event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`;
        }
      : { sse: (t) => (text += t) },
  );
  b.start();
  for (const ev of turn()) b.push(ev);
  b.finish();
  return { text, events };
}

describe("ResponseBuilder's SSE text sink (the /v1/responses stream's hot path)", () => {
  for (const [name, v] of [
    ["everything shown", ALL],
    ["the defaults", DEFAULT_VISIBILITY],
    ["no live text", { ...ALL, live_text: false }],
  ] as const) {
    it(`writes byte for byte what the event objects serialise to, with ${name}, for awkward text`, () => {
      const { text, events } = stream("objects", v);
      expect(stream("sse", v).text).toBe(text);
      // And the events are what clients expect: numbered in order, deltas of the item they belong to.
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      for (const e of events.filter((e) => e.type.endsWith(".delta"))) expect(e.item_id).toMatch(/^(rs|msg)_ab12_\d+$/);
    });
  }

  it("sends each thinking delta as its own reasoning_summary_text.delta, in order", () => {
    const { events } = stream("objects", ALL);
    const deltas = events.filter((e) => e.type === "response.reasoning_summary_text.delta");
    expect(deltas.map((e) => e.delta)).toEqual([...AWKWARD, ...AWKWARD]);
    expect(deltas[0]).toEqual({
      type: "response.reasoning_summary_text.delta",
      sequence_number: 4,
      item_id: "rs_ab12_0",
      output_index: 0,
      summary_index: 0,
      delta: AWKWARD[0],
    });
  });
});
