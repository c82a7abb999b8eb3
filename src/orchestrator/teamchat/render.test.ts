import { describe, expect, it } from "bun:test";
import type { TurnEvent } from "../chat/turn-events";
import { DEFAULT_VISIBILITY, type Visibility } from "../chat/visibility";
import { retryAfterMs } from "./connector";
import { splitMessage, TeamChatRenderer } from "./render";

const ALL: Visibility = { show_thinking: true, show_tools: true, show_text: true, show_narration: true, show_final: true, live_text: false };
const think = (text: string, parentToolUseId: string | null = null): TurnEvent => ({ type: "thinking", text, parentToolUseId });

function render(events: TurnEvent[], v: Visibility = ALL, flushChars = 2000): string[] {
  const r = new TeamChatRenderer(v, { flushChars });
  return [...events.flatMap((e) => r.push(e)), ...r.end()];
}

describe("TeamChatRenderer", () => {
  it("coalesces a thinking block into one message, sent at the next event", () => {
    const r = new TeamChatRenderer(ALL, { flushChars: 2000 });
    expect(r.push(think("Let me "))).toEqual([]);
    expect(r.push(think("look."))).toEqual([]);
    expect(r.push({ type: "narration", text: "Looking.", parentToolUseId: null })).toEqual(["**Reasoning:**\n\nLet me look.", "Looking."]);
  });

  it("a hidden event is still a block boundary: two thinking blocks around a hidden tool call are two messages", () => {
    const v = { ...ALL, show_tools: false };
    const out = render([think("first"), { type: "tool_call", id: "t", name: "Bash", input: {}, parentToolUseId: null }, think("second")], v);
    expect(out).toEqual(["**Reasoning:**\n\nfirst", "**Reasoning:**\n\nsecond"]);
  });

  it("shows the agent retrying the model API as **Retrying:**, hidden with narration", () => {
    const status: TurnEvent = {
      type: "status",
      code: "api_retry",
      message: "the model API failed (HTTP 529 overloaded); the agent retries (attempt 1 of 10) in 0.6 s",
      retry: { attempt: 1, max_retries: 10, retry_delay_ms: 600, error_status: 529, error: "overloaded" },
    };
    expect(render([status])).toEqual(["**Retrying:** the model API failed (HTTP 529 overloaded); the agent retries (attempt 1 of 10) in 0.6 s"]);
    expect(render([status], { ...ALL, show_narration: false })).toEqual([]);
  });

  it("flushes a long block once it passes flushChars", () => {
    const out = render(
      Array.from({ length: 10 }, () => think("abcdefghij")),
      ALL,
      25,
    );
    expect(out).toEqual(["abcdefghij".repeat(3), "abcdefghij".repeat(3), "abcdefghij".repeat(3), "abcdefghij"].map((t) => `**Reasoning:**\n\n${t}`));
  });

  it("labels sub-agent events and keeps them apart from the main thread's thinking", () => {
    const out = render([
      think("main"),
      think("sub", "toolu_1"),
      { type: "tool_call", id: "x", name: "Read", input: { file: "a" }, parentToolUseId: "toolu_1" },
    ]);
    expect(out).toEqual([
      "**Reasoning:**\n\nmain",
      "**Reasoning:** _(sub-agent)_\n\nsub",
      '**Tool call:** Read _(sub-agent)_\n\n```json\n{\n  "file": "a"\n}\n```',
    ]);
  });

  it("truncates tool results and uses a fence longer than any backtick run inside", () => {
    const [msg] = render([{ type: "tool_result", toolUseId: "t", content: `\`\`\`\n${"x".repeat(2000)}`, isError: true, parentToolUseId: null }]);
    expect(msg).toStartWith("**Tool result (error):**\n\n````\n```\n");
    expect(msg).toContain("… (504 more characters)");
    expect(msg).toEndWith("\n````");
  });

  it("default visibility: narration and final only; errors always; usage never", () => {
    const out = render(
      [
        think("hidden"),
        { type: "narration", text: "n", parentToolUseId: null },
        { type: "tool_call", id: "t", name: "Bash", input: {}, parentToolUseId: null },
        { type: "final", text: "f" },
        { type: "error", code: "agent_exit", message: "boom" },
        { type: "usage", usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, prompt_tokens_details: { cached_tokens: 0 } } },
      ],
      { ...DEFAULT_VISIBILITY },
    );
    expect(out).toEqual(["n", "f", "**Error:** boom"]);
  });
});

describe("splitMessage", () => {
  it("leaves a message that fits alone and splits a long one at line boundaries within the byte budget", () => {
    expect(splitMessage("short", 100)).toEqual(["short"]);
    const text = Array.from({ length: 50 }, (_, i) => `line ${i} ${"é".repeat(20)}`).join("\n");
    const parts = splitMessage(text, 500);
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) expect(new TextEncoder().encode(p).length).toBeLessThanOrEqual(500);
    expect(parts.join("\n")).toBe(text);
  });
});

describe("retryAfterMs", () => {
  it("reads delta-seconds and HTTP dates", () => {
    expect(retryAfterMs("2")).toBe(2000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs("soon")).toBeUndefined();
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs("Thu, 01 Jan 2026 00:00:03 GMT", now)).toBe(3000);
  });
});
