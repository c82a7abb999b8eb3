import { describe, expect, it } from "bun:test";
import { EVERYTHING_SHOWN } from "../../../test/support/chat-visibility";
import { chunkRenderer, newChunkContext, renderChunk } from "./openai-chunks";
import type { TurnEvent } from "./turn-events";
import { DEFAULT_VISIBILITY, type Visibility } from "./visibility";

const ALL = EVERYTHING_SHOWN;
const AWKWARD = [
  "plain",
  'quotes " and \\ backslash',
  "line\nbreak\r\nand\ttab",
  "\u2028\u2029 separators",
  "lone \ud800 surrogate",
  "emoji 🧠",
  "</script>",
  "",
];

/** What the stream sent before the fast path: the chunk object through JSON.stringify. */
const slow = (ctx: ReturnType<typeof newChunkContext>, ev: TurnEvent, v: Visibility) => {
  const c = renderChunk(ctx, ev, v);
  return c && `data: ${JSON.stringify(c)}\n\n`;
};

describe("chunkRenderer (the chat stream's hot path)", () => {
  for (const includeUsage of [false, true]) {
    it(`writes exactly the chunks renderChunk makes${includeUsage ? " (include_usage)" : ""}, for every kind of event and awkward text`, () => {
      const events: TurnEvent[] = [];
      for (const text of AWKWARD) {
        events.push({ type: "thinking", text, parentToolUseId: null });
        events.push({ type: "thinking", text, parentToolUseId: "toolu_1" });
        events.push({ type: "text_delta", text, blockStart: true });
        events.push({ type: "text_delta", text, blockStart: false });
        events.push({ type: "narration", text, parentToolUseId: null });
        events.push({ type: "final", text });
      }
      events.push({ type: "tool_call", id: "toolu_2", name: "Bash", input: { command: "ls" }, parentToolUseId: null });
      events.push({ type: "error", code: "agent_exit", message: "gone" });
      const model = 'agent "quoted"';
      for (const v of [ALL, DEFAULT_VISIBILITY, { ...ALL, show_tools: false }]) {
        // Two contexts alike, one per path: text_delta changes the context (textSent) as it renders.
        const a = newChunkContext(model, { includeUsage });
        const b = { ...a };
        const render = chunkRenderer(a);
        const fast = events.map((ev) => render(ev, v));
        expect(fast).toEqual(events.map((ev) => slow(b, ev, v)));
        for (const text of fast) if (text !== undefined) expect(() => JSON.parse(text.slice(6))).not.toThrow();
      }
    });
  }

  it("hides what the visibility config hides", () => {
    const render = chunkRenderer(newChunkContext("m"));
    expect(render({ type: "thinking", text: "hmm", parentToolUseId: null }, DEFAULT_VISIBILITY)).toBeUndefined();
    expect(render({ type: "thinking", text: "hmm", parentToolUseId: null }, { ...DEFAULT_VISIBILITY, show_thinking: true })).toContain(
      '"reasoning_content":"hmm"',
    );
  });
});
