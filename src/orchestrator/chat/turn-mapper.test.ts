// Edge cases of the line → event mapping that the recorded scenarios do not cover.
import { describe, expect, it } from "bun:test";
import { parseAgentLine } from "../agent/stream-json";
import type { TurnEvent } from "./turn-events";
import { TurnMapper } from "./turn-mapper";

const se = (event: Record<string, unknown>, parent: string | null = null) =>
  JSON.stringify({ type: "stream_event", event, parent_tool_use_id: parent, session_id: "s" });
const result = (over: Record<string, unknown> = {}) =>
  JSON.stringify({ type: "result", subtype: "success", is_error: false, session_id: "s", usage: { input_tokens: 1, output_tokens: 2 }, ...over });

function map(lines: string[], end = true, frames = false): TurnEvent[] {
  const m = new TurnMapper({ frames });
  const out: TurnEvent[] = [];
  for (const l of lines) {
    const ev = parseAgentLine(l);
    if (ev) out.push(...m.push(ev));
  }
  if (end) out.push(...m.end({ failed: false, exitCode: 0, signal: null, garbageLines: 0, cancelled: false, timedOut: false }));
  return out;
}

const text = (index: number, t: string, parent: string | null = null) => [
  se({ type: "content_block_start", index, content_block: { type: "text", text: "" } }, parent),
  se({ type: "content_block_delta", index, delta: { type: "text_delta", text: t } }, parent),
  se({ type: "content_block_stop", index }, parent),
];

describe("TurnMapper", () => {
  it("never re-emits assistant frames, even when they arrive before the block stops", () => {
    const lines = [
      se({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
      se({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi" } }),
      JSON.stringify({ type: "assistant", message: { content: [{ type: "text", text: "Hi" }] }, parent_tool_use_id: null }),
      se({ type: "content_block_stop", index: 0 }),
      result({ result: "Hi" }),
    ];
    expect(map(lines).filter((e) => e.type !== "usage")).toEqual([{ type: "final", text: "Hi" }]);
  });

  it("a sub-agent's block 0 does not disturb the main thread's block 0", () => {
    const lines = [
      se({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
      se({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "main " } }),
      ...text(0, "sub", "toolu_1"),
      se({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "answer" } }),
      se({ type: "content_block_stop", index: 0 }),
      result(),
    ];
    expect(map(lines).filter((e) => e.type !== "usage")).toEqual([
      { type: "narration", text: "sub", parentToolUseId: "toolu_1" },
      { type: "final", text: "main answer" },
    ]);
  });

  it("keeps tool input that is not JSON as raw text, and uses the start block's input when no delta came", () => {
    const lines = [
      se({ type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "t1", name: "Odd", input: {} } }),
      se({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "{broken" } }),
      se({ type: "content_block_stop", index: 0 }),
      se({ type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "t2", name: "Empty", input: { a: 1 } } }),
      se({ type: "content_block_stop", index: 1 }),
    ];
    expect(map(lines).filter((e) => e.type === "tool_call")).toEqual([
      { type: "tool_call", id: "t1", name: "Odd", input: "{broken", parentToolUseId: null },
      { type: "tool_call", id: "t2", name: "Empty", input: { a: 1 }, parentToolUseId: null },
    ]);
  });

  it("a result without any streamed block: its text is legacy assistant text", () => {
    expect(map([result({ result: "plain answer" })])[0]).toEqual({ type: "final", text: "plain answer", legacy: true });
  });

  it("a rejected rate_limit_event is an error; an allowed one is nothing", () => {
    const lines = [
      JSON.stringify({ type: "rate_limit_event", rate_limit_info: { status: "allowed" } }),
      JSON.stringify({ type: "rate_limit_event", rate_limit_info: { status: "rejected", rateLimitType: "five_hour", resetsAt: 1795000000 } }),
    ];
    expect(map(lines, false)).toEqual([
      { type: "error", code: "rate_limited", message: "the model provider's usage limit (five_hour) is reached; it resets at 2026-11-18T11:06:40.000Z" },
    ]);
  });

  it("tool results: a list of text parts joined, is_error only when true; none without its call", () => {
    const call = [
      se({ type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "t1", name: "Bash", input: {} } }),
      se({ type: "content_block_stop", index: 0 }),
      se({ type: "message_delta", delta: { stop_reason: "tool_use" } }),
    ];
    const resultOf = (id: string) => ({ type: "tool_result", tool_use_id: id, content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] });
    const line = JSON.stringify({
      type: "user",
      message: {
        content: [
          {
            type: "tool_result",
            tool_use_id: "t1",
            content: [
              { type: "text", text: "a" },
              { type: "text", text: "b" },
            ],
          },
        ],
      },
      parent_tool_use_id: null,
    });
    const stray = JSON.stringify({ type: "user", message: { content: [resultOf("t-never-called")] }, parent_tool_use_id: null });
    expect(map([...call, line, stray], false)).toEqual([
      { type: "tool_call", id: "t1", name: "Bash", input: {}, parentToolUseId: null },
      { type: "tool_result", toolUseId: "t1", content: "a\nb", isError: false, parentToolUseId: null },
    ]);
  });

  it("exactly one final per turn: earlier text blocks of the turn are narration", () => {
    const lines = [...text(0, "one"), ...text(1, "two"), ...text(2, "three"), result()];
    expect(map(lines).map((e) => e.type)).toEqual(["narration", "narration", "final", "usage"]);
  });

  it("turns a retry of the model API into a status, but not one retrying cannot fix", () => {
    const retry = (status: number, error: string) =>
      JSON.stringify({ type: "system", subtype: "api_retry", attempt: 2, max_retries: 10, retry_delay_ms: 1250, error_status: status, error, session_id: "s" });
    const out = map([retry(529, "overloaded"), retry(401, "authentication_failed"), ...text(0, "ok"), result({ result: "ok" })]);
    const statuses = out.filter((e) => e.type === "status");
    expect(statuses).toEqual([
      {
        type: "status",
        code: "api_retry",
        message: "the model API failed (HTTP 529 overloaded); the agent retries (attempt 2 of 10) in 1.3 s",
        retry: { attempt: 2, max_retries: 10, retry_delay_ms: 1250, error_status: 529, error: "overloaded" },
      },
    ]);
    expect(out.find((e) => e.type === "final")).toMatchObject({ text: "ok" });
  });

  it("ends a turn stopped on a refused key with the refusal's code", () => {
    const m = new TurnMapper();
    const out = m.end({
      failed: true,
      error: "the model API refused the agent's credentials",
      errorCode: "authentication_failed",
      exitCode: 143,
      signal: null,
      garbageLines: 0,
      cancelled: false,
      timedOut: false,
    });
    expect(out[0]).toEqual({ type: "error", code: "authentication_failed", message: "the model API refused the agent's credentials" });
  });
});

describe("TurnMapper without partial messages (background jobs)", () => {
  it("maps the assistant frames of a recorded turn to the same events, a block at a time", () => {
    const file = `${import.meta.dir}/../../../test/fixtures/claude-stream-json/thinking-tool-final.jsonl`;
    const lines = require("node:fs")
      .readFileSync(file, "utf8")
      .split("\n")
      .filter((l: string) => l.trim() !== "" && !l.includes('"type":"stream_event"'));
    const events = map(lines, true, true);
    expect(events.map((e) => e.type)).toEqual(["thinking", "narration", "tool_call", "tool_result", "final", "usage"]);
    // The chat stream keeps the spec's legacy text for a run without partial messages (and no
    // tool result without its call).
    expect(map(lines).map((e) => e.type)).toEqual(["final", "usage"]);
    expect(events[2]).toMatchObject({ type: "tool_call", name: "Bash", input: { command: "bun test test/jobs.test.ts" } });
    expect(events[4]).toMatchObject({ type: "final", text: expect.stringContaining("One test fails") });
  });
});
