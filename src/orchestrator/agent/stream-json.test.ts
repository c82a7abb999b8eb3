import { describe, expect, it } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { OutcomeCollector } from "./outcome";
import { type AgentEvent, parseAgentLine, readLines } from "./stream-json";

const SCENARIOS = join(import.meta.dir, "../../../test/fixtures/claude-stream-json");
const scenario = (name: string): AgentEvent[] =>
  readFileSync(join(SCENARIOS, `${name}.jsonl`), "utf8")
    .split("\n")
    .map(parseAgentLine)
    .filter((e): e is AgentEvent => e !== undefined);

const outcomeOf = (name: string, exitCode = 0) => {
  const c = new OutcomeCollector();
  for (const ev of scenario(name)) c.add(ev);
  return c.finish({ exitCode, signal: null, timedOut: false, cancelled: false, stderrTail: "" });
};

describe("parseAgentLine", () => {
  it("types every line of every recorded scenario, none unknown", () => {
    for (const file of readdirSync(SCENARIOS).filter((f) => f.endsWith(".jsonl"))) {
      const lines = readFileSync(join(SCENARIOS, file), "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "");
      const events = lines.map(parseAgentLine);
      expect(events.every((e) => e !== undefined && e.type !== "unknown")).toBe(true);
    }
  });

  it("reads the result line: subtype, is_error, text, usage, cost, session", () => {
    const result = scenario("text-only").find((e) => e.type === "result");
    expect(result).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "Hello! The build passes on main.",
      total_cost_usd: 0.0412,
      session_id: "6f1c2a9e-3b7d-4e2a-9c1f-2d8e5b7a4c10",
    });
  });

  it("reads the result line's counts as whole numbers, and drops ones that are not counts", () => {
    const line = (extra: object) => JSON.stringify({ type: "result", subtype: "success", is_error: false, result: "ok", ...extra });
    expect(parseAgentLine(line({ num_turns: 2.6, duration_ms: 1200.4 }))).toMatchObject({ num_turns: 3, duration_ms: 1200 });
    const odd = parseAgentLine(line({ num_turns: "3", duration_ms: -1 })) as { num_turns?: number; duration_ms?: number };
    expect(odd.num_turns).toBeUndefined();
    expect(odd.duration_ms).toBeUndefined();
  });

  it("keeps a sub-agent's parent_tool_use_id", () => {
    const sub = scenario("subagent").filter((e) => (e.type === "stream_event" || e.type === "user") && e.parent_tool_use_id === "toolu_01Task");
    expect(sub.length).toBe(11);
  });

  it("passes an unknown type through as unknown, with the original object", () => {
    expect(parseAgentLine('{"type":"brand_new","x":1}')).toEqual({ type: "unknown", original_type: "brand_new", raw: { type: "brand_new", x: 1 } });
  });

  it("ignores garbage, blank lines, arrays and objects without a type", () => {
    for (const line of ["", "   ", "not json", "{broken", "[1,2]", '{"no_type":true}', "Warning: something"]) {
      expect(parseAgentLine(line)).toBeUndefined();
    }
  });
});

describe("outcome", () => {
  it("counts prompt tokens as input + cache creation + cache read", () => {
    expect(outcomeOf("text-only").usage).toEqual({ prompt_tokens: 18 + 2048 + 36000, completion_tokens: 14, total_tokens: 18 + 2048 + 36000 + 14 });
  });

  it("succeeds on is_error false and exit 0", () => {
    const o = outcomeOf("tool-error");
    expect(o.failed).toBe(false);
    expect(o.resultText).toBe("I can't read that file: permission denied.");
  });

  it("fails on is_error true even when the subtype says success (auth failure)", () => {
    const o = outcomeOf("auth-failure");
    expect(o.subtype).toBe("success");
    expect(o.failed).toBe(true);
    expect(o.error).toBe("Invalid API key · Please run /login");
  });

  it("reports errors[] of error_during_execution", () => {
    const o = outcomeOf("error-during-execution");
    expect(o).toMatchObject({ failed: true, error: "API Error: 529 Overloaded", errors: ["API Error: 529 Overloaded"] });
    expect(o.lastAssistantText).toBe("Starting.");
  });

  it("reports max turns without a result text", () => {
    const o = outcomeOf("ends-on-tool-call");
    expect(o.failed).toBe(true);
    expect(o.error).toContain("error_max_turns");
  });

  it("never takes a sub-agent's text as the last text", () => {
    const c = new OutcomeCollector();
    const frame = (text: string, parent: string | null) =>
      parseAgentLine(JSON.stringify({ type: "assistant", message: { content: [{ type: "text", text }] }, parent_tool_use_id: parent }))!;
    c.add(frame("main thread", null));
    c.add(frame("sub-agent", "toolu_1"));
    expect(c.finish({ exitCode: 0, signal: null, timedOut: false, cancelled: false, stderrTail: "" }).lastAssistantText).toBe("main thread");
  });

  it("fails a clean result when the process exits non-zero", () => {
    expect(outcomeOf("text-only", 2)).toMatchObject({ failed: true, error: "the agent exited with code 2" });
  });

  it("fails without a result line, with the last stderr line", () => {
    const o = new OutcomeCollector().finish({ exitCode: 1, signal: null, timedOut: false, cancelled: false, stderrTail: "boot\nError: no credentials\n" });
    expect(o).toMatchObject({ failed: true, error: "the agent exited with code 1: Error: no credentials" });
  });
});

describe("readLines", () => {
  it("yields each line as soon as its newline arrives, before the stream ends", async () => {
    let push!: (s: string) => void;
    let close!: () => void;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (s) => controller.enqueue(new TextEncoder().encode(s));
        close = () => controller.close();
      },
    });
    const lines = readLines(stream);
    push('{"a":1}\n{"b":');
    expect((await lines.next()).value).toBe('{"a":1}');
    push("2}\r\nlast");
    expect((await lines.next()).value).toBe('{"b":2}');
    close();
    expect((await lines.next()).value).toBe("last");
    expect((await lines.next()).done).toBe(true);
  });

  it("joins a multi-byte character split across reads", async () => {
    const bytes = new TextEncoder().encode("héllo · wörld\n");
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.subarray(0, 2));
        c.enqueue(bytes.subarray(2, 9));
        c.enqueue(bytes.subarray(9));
        c.close();
      },
    });
    const out: string[] = [];
    for await (const l of readLines(stream)) out.push(l);
    expect(out).toEqual(["héllo · wörld"]);
  });
});
