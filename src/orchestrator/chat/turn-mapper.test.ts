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
    const resultOf = (id: string) => ({
      type: "tool_result",
      tool_use_id: id,
      content: [
        { type: "text", text: "a" },
        { type: "text", text: "b" },
      ],
    });
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

/** The lines of a recorded scenario (test/fixtures/claude-stream-json/). */
const recorded = (name: string): string[] =>
  require("node:fs")
    .readFileSync(`${import.meta.dir}/../../../test/fixtures/claude-stream-json/${name}.jsonl`, "utf8")
    .split("\n")
    .filter((l: string) => l.trim() !== "");

/** What a client is shown of an event, compactly. */
const shown = (e: TurnEvent) => {
  const tag = "parentToolUseId" in e && e.parentToolUseId !== null ? " (sub)" : "";
  switch (e.type) {
    case "narration":
    case "final":
      return `${e.type}${tag}: ${e.text}`;
    case "tool_call":
      return `tool_call${tag}: ${e.name}`;
    case "tool_result":
      return `tool_result${tag}`;
    default:
      return e.type;
  }
};

describe("TurnMapper on Claude Code 2.1.332's background sub-agent (issue 36 parts 1 and 2)", () => {
  const EXPECTED = [
    "narration: I started a helper.",
    "tool_call: Agent",
    "tool_result",
    "narration: Helper is running.",
    "narration (sub): Checking the date.",
    "tool_call (sub): Bash",
    "tool_result (sub)",
    "narration (sub): It is Friday.",
    "final: The helper finished: it is Friday.",
    "usage",
  ];

  it("maps the follow-up turn: the last answer is the one final, the sub-agent's work is tagged, usage is summed", () => {
    const events = map(recorded("background-subagent"));
    expect(events.map(shown)).toEqual(EXPECTED);
    const bash = events.find((e) => e.type === "tool_call" && e.name === "Bash") as Extract<TurnEvent, { type: "tool_call" }>;
    const agent = events.find((e) => e.type === "tool_call" && e.name === "Agent") as Extract<TurnEvent, { type: "tool_call" }>;
    expect(bash.parentToolUseId).toBe(agent.id);
    expect(bash.input).toMatchObject({ command: "echo SUB-BASH-RAN" });
    // Every tool result follows its call.
    const calls = events.filter((e) => e.type === "tool_call").map((e) => (e as { id: string }).id);
    for (const r of events.filter((e) => e.type === "tool_result")) expect(calls).toContain((r as { toolUseId: string }).toolUseId);
    // The two result lines: 100 + 200 input tokens for the first turn, 400 for the follow-up.
    expect(events.at(-1)).toMatchObject({ type: "usage", usage: { prompt_tokens: 700, completion_tokens: 70 }, numTurns: 3 });
  });

  it("the same when the first result line comes before the follow-up turn, not after it", () => {
    const lines = recorded("background-subagent");
    const first = lines.findIndex((l) => l.includes('"type":"result"'));
    const init = lines.findLastIndex((l) => l.includes('"subtype":"init"'));
    expect(first).toBeGreaterThan(init);
    const [result] = lines.splice(first, 1);
    lines.splice(init, 0, result!);
    expect(map(lines).map(shown)).toEqual(EXPECTED);
  });

  it("a run without partial messages (a job) maps the same frames to the same events", () => {
    const lines = recorded("background-subagent").filter((l) => !l.includes('"type":"stream_event"'));
    expect(map(lines, true, true).map(shown)).toEqual(EXPECTED);
  });
});

describe("TurnMapper on a cut model stream (issue 36 part 3)", () => {
  it("drops the abandoned half block; the retried answer is the final, after the retry's status", () => {
    const events = map(recorded("cut-stream-retry"));
    expect(events.map(shown)).toEqual(["status", "final: The whole answer, start to end.", "usage"]);
    expect(JSON.stringify(events)).not.toContain("HALF-ANSWER");
  });

  it("keeps the blocks that were complete, drops the cut tool call, and the resumed answer is the final", () => {
    const events = map(recorded("cut-stream-resume"));
    expect(events.map(shown)).toEqual(["narration: FIRST-BLOCK-COMPLETE.", "final: The whole answer, start to end.", "usage"]);
    expect(JSON.stringify(events)).not.toContain("CUT-TOOL");
  });

  it("a half block is not shown before it is known complete, even when nothing more arrives for a while", () => {
    const lines = recorded("cut-stream-retry");
    const stop = lines.findIndex((l) => l.includes('"abandoned_blocks"'));
    const m = new TurnMapper();
    const before: TurnEvent[] = [];
    for (const l of lines.slice(0, stop)) m.push(parseAgentLine(l)!, before);
    expect(before).toEqual([]);
  });
});
