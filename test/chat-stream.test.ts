// POST /v1/chat/completions against the live service (real HTTP on loopback) with the fixture
// agent replaying each recorded Claude Code scenario: the exact SSE chunk sequence and members
// read raw, and the official `openai` client streaming and not.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "bun:test";
import { join } from "node:path";
import OpenAI, { APIError } from "openai";
import {
  AGENT,
  type AgentModeServer,
  flagOf,
  kindOf,
  makeHub,
  readSse,
  recordedStarts,
  scenarioLines,
  startAgentModeServer,
  tempHome,
  writeScenario,
} from "./support/agent-mode";
import { until } from "./support/until";

let t: Awaited<ReturnType<typeof tempHome>>;
let s: AgentModeServer;
let client: OpenAI;
const agentEnv: Record<string, string | undefined> = {};
const RESET = "/hide-thinking /hide-tools /show-narration /show-final";
const USAGE = { prompt_tokens: 18 + 2048 + 36000, total_tokens: 0, completion_tokens: 0 };
const usage = (completion: number) => ({
  ...USAGE,
  completion_tokens: completion,
  total_tokens: USAGE.prompt_tokens + completion,
  prompt_tokens_details: { cached_tokens: 36000 },
});
const NO_USAGE = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, prompt_tokens_details: { cached_tokens: 0 } };

beforeAll(async () => {
  t = await tempHome("chat-stream-");
  const hubUrl = await makeHub(join(t.home, "hub"));
  s = await startAgentModeServer({ home: t.home, hubUrl, kv: "file", agentEnv, keepAliveMs: 100 });
  client = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: "test-key", maxRetries: 0 });
});

afterAll(async () => {
  await s.close();
  await t.cleanup();
});

beforeEach(async () => {
  for (const k of Object.keys(agentEnv)) delete agentEnv[k];
  Object.assign(agentEnv, { PATH: process.env.PATH, FAKE_CLAUDE_RECORD: join(t.home, `record-${crypto.randomUUID()}.jsonl`) });
  // Visibility is sticky per agent: back to the defaults before each test.
  await (await chat(RESET)).text();
});

function chat(content: string, opts: { stream?: boolean; headers?: Record<string, string> } = {}) {
  return s.call("/v1/chat/completions", {
    json: { model: AGENT, stream: opts.stream ?? true, messages: [{ role: "user", content }] },
    // A fresh conversation per request: the scenarios are single turns.
    headers: { "x-conversation-id": crypto.randomUUID(), ...opts.headers },
  });
}

async function streamed(scenario: string, content = "What is going on?") {
  agentEnv.FAKE_CLAUDE_SCENARIO = scenario;
  const res = await chat(content);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("text/event-stream");
  const r = await readSse(res);
  expect(r.done).toBe(true);
  expect(r.afterDone).toBe(0);
  // Every chunk: one id, the chunk object, the model, one choice at index 0.
  const ids = new Set(r.chunks.map((c) => c.id));
  expect(ids.size).toBe(1);
  for (const c of r.chunks) {
    expect(c.object).toBe("chat.completion.chunk");
    expect(c.model).toBe(AGENT);
    expect(typeof c.created).toBe("number");
    expect(c.choices).toHaveLength(1);
    expect(c.choices[0].index).toBe(0);
  }
  return r;
}

const choice = (c: Record<string, any>) => c.choices[0];
/** Request options naming a new conversation (a client that stops reading leaves its turn busy until the agent is stopped). */
const fresh = () => ({ headers: { "x-conversation-id": crypto.randomUUID() } });

describe("POST /v1/chat/completions, stream true: the chunk sequence", () => {
  it("text only: role open, the final answer, stop with usage, [DONE]", async () => {
    const r = await streamed("text-only");
    expect(r.chunks.map(kindOf)).toEqual(["role", "final", "stop"]);
    expect(r.chunks[0]!.choices[0]).toEqual({ index: 0, delta: { role: "assistant" }, finish_reason: null });
    expect(choice(r.chunks[1]!)).toEqual({
      index: 0,
      delta: { content: "Hello! The build passes on main." },
      finish_reason: null,
      x_service_event_type: "final",
    });
    expect(choice(r.chunks[2]!)).toEqual({ index: 0, delta: {}, finish_reason: "stop" });
    expect(r.chunks[2]!.usage).toEqual(usage(14));
  });

  it("thinking + tool call + tool result + final: by default narration then the final only", async () => {
    const r = await streamed("thinking-tool-final");
    expect(r.chunks.map(kindOf)).toEqual(["role", "narration", "final", "stop"]);
    expect(choice(r.chunks[1]!).delta).toEqual({ content: "Let me run the tests first.\n\n" });
    expect(choice(r.chunks[2]!).delta).toEqual({ content: "One test fails: `cancel > sends SIGTERM`. The runner never forwards the signal." });
  });

  it("thinking + tool call + tool result + final with /show-all: thinking token by token, the tool call once with its args, the result", async () => {
    const r = await streamed("thinking-tool-final", "/show-all why does the suite fail?");
    expect(r.chunks.map(kindOf)).toEqual(["role", "thinking", "thinking", "narration", "tool_use", "tool_result", "final", "stop"]);
    expect(choice(r.chunks[1]!)).toEqual({
      index: 0,
      delta: { reasoning_content: "The user wants the failing " },
      finish_reason: null,
      x_service_event_type: "thinking",
    });
    expect(choice(r.chunks[2]!).delta).toEqual({ reasoning_content: "test. I should run the suite first." });
    expect(choice(r.chunks[4]!)).toEqual({
      index: 0,
      delta: {
        content: '\n```tool_use:Bash\n{\n  "command": "bun test test/jobs.test.ts",\n  "description": "Run the job tests"\n}\n```\n',
      },
      finish_reason: null,
      x_service_event_type: "tool_use",
      x_service_tool_name: "Bash",
      x_service_tool_use_id: "toolu_01RunTests",
    });
    expect(choice(r.chunks[5]!)).toEqual({
      index: 0,
      delta: { content: "\n```tool_result\n(fail) cancel > sends SIGTERM [12.01ms]\n 41 pass\n 1 fail\n```\n" },
      finish_reason: null,
      x_service_event_type: "tool_result",
      x_service_tool_use_id: "toolu_01RunTests",
      x_service_is_error: false,
    });
    expect(r.chunks[7]!.usage).toEqual(usage(119));
    // The token was stripped before the agent saw the prompt.
    const [start] = await recordedStarts(agentEnv.FAKE_CLAUDE_RECORD!);
    expect(start!.argv[1]).toBe("why does the suite fail?");
  });

  it("two text blocks: narration for the first, final for the second, each text exactly once", async () => {
    const r = await streamed("two-text-blocks");
    expect(r.chunks.map(kindOf)).toEqual(["role", "narration", "final", "stop"]);
    expect(choice(r.chunks[1]!)).toEqual({
      index: 0,
      delta: { content: "I looked at the three open PRs.\n\n" },
      finish_reason: null,
      x_service_event_type: "narration",
    });
    expect(choice(r.chunks[2]!)).toEqual({
      index: 0,
      delta: { content: "Merge #12 first; #13 depends on it." },
      finish_reason: null,
      x_service_event_type: "final",
    });
    expect(choice(r.chunks[3]!)).toEqual({ index: 0, delta: {}, finish_reason: "stop" });
    expect(r.chunks[3]!.usage).toEqual({
      prompt_tokens: expect.any(Number),
      completion_tokens: expect.any(Number),
      total_tokens: r.chunks[3]!.usage.prompt_tokens + r.chunks[3]!.usage.completion_tokens,
      prompt_tokens_details: { cached_tokens: expect.any(Number) },
    });
  });

  it("a turn ending on a tool call: narration, tool_use, tool_result, no final; the error is reported, then stop", async () => {
    const r = await streamed("ends-on-tool-call", "/show-tools check the config");
    expect(r.chunks.map(kindOf)).toEqual(["role", "narration", "tool_use", "tool_result", "error", "stop"]);
    expect(choice(r.chunks[2]!).delta.content).toBe('\n```tool_use:Read\n{\n  "file_path": "/app/package/CLAUDE.md"\n}\n```\n');
    expect(choice(r.chunks[3]!).delta.content).toBe("\n```tool_result\n# Agent\nYou answer questions about deployments.\n```\n");
    const err = r.chunks[4]!;
    expect(choice(err).x_service_error_code).toBe("error_max_turns");
    expect(err.error).toEqual({ message: expect.stringContaining("turn limit"), type: "agent_error", param: null, code: "error_max_turns" });
    expect(r.chunks[5]!.usage).toEqual(usage(40));
  });

  it("a tool result with is_error: tool_result:error with x_service_is_error true, then the final", async () => {
    const r = await streamed("tool-error", "/show-tools read the shadow file");
    expect(r.chunks.map(kindOf)).toEqual(["role", "tool_use", "tool_result", "final", "stop"]);
    expect(choice(r.chunks[2]!)).toEqual({
      index: 0,
      delta: { content: "\n```tool_result:error\ncat: /etc/shadow: Permission denied\n```\n" },
      finish_reason: null,
      x_service_event_type: "tool_result",
      x_service_tool_use_id: "toolu_01Cat",
      x_service_is_error: true,
    });
    expect(choice(r.chunks[3]!).delta.content).toBe("I can't read that file: permission denied.");
  });

  it("an error result (error_during_execution): the narration, then the error from errors[]", async () => {
    const r = await streamed("error-during-execution");
    expect(r.chunks.map(kindOf)).toEqual(["role", "narration", "error", "stop"]);
    expect(choice(r.chunks[1]!).delta.content).toBe("Starting.\n\n");
    expect(choice(r.chunks[2]!)).toEqual({
      index: 0,
      delta: { content: "\n\n**Error:** API Error: 529 Overloaded\n" },
      finish_reason: null,
      x_service_event_type: "error",
      x_service_error_code: "error_during_execution",
    });
    expect(r.chunks[2]!.error.message).toBe("API Error: 529 Overloaded");
  });

  it("an auth failure reported as subtype success with is_error true: one error, never an answer", async () => {
    const r = await streamed("auth-failure", "/show-all hello");
    expect(r.chunks.map(kindOf)).toEqual(["role", "error", "stop"]);
    expect(choice(r.chunks[1]!).x_service_error_code).toBe("authentication_failed");
    expect(r.chunks[1]!.error).toEqual({ message: "Invalid API key · Please run /login", type: "agent_error", param: null, code: "authentication_failed" });
    expect(r.chunks[2]!.usage).toEqual(usage(0));
  });

  it("a sub-agent's text and tools are labelled and never become the main narration or final", async () => {
    const quiet = await streamed("subagent");
    expect(quiet.chunks.map(kindOf)).toEqual(["role", "final", "stop"]);
    expect(choice(quiet.chunks[1]!).delta.content).toBe("The last deploy failed: the registry timed out during the image pull.");

    const all = await streamed("subagent", "/show-all what failed?");
    expect(all.chunks.map((c) => `${kindOf(c)}${choice(c).x_service_parent_tool_use_id ? "@sub" : ""}`)).toEqual([
      "role",
      "tool_use",
      "narration@sub",
      "tool_use@sub",
      "tool_result@sub",
      "tool_result",
      "final",
      "stop",
    ]);
    expect(choice(all.chunks[2]!)).toEqual({
      index: 0,
      delta: { content: "Searching the deploy log.\n\n" },
      finish_reason: null,
      x_service_event_type: "narration",
      x_service_parent_tool_use_id: "toolu_01Task",
    });
    expect(choice(all.chunks[3]!).x_service_tool_name).toBe("Grep");
    const mainText = all.chunks.filter((c) => ["narration", "final"].includes(kindOf(c)) && !choice(c).x_service_parent_tool_use_id);
    expect(mainText.map((c) => choice(c).delta.content)).toEqual(["The last deploy failed: the registry timed out during the image pull."]);
  });

  it("a crash mid-stream (garbage, then exit 3): an error chunk, stop and [DONE], never a hung connection", async () => {
    const head = (await scenarioLines("text-only")).slice(0, 5);
    const crash = await writeScenario(t.home, "crash", [...head, "Segmentation fault (core dumped)", "{not json"]);
    agentEnv.FAKE_CLAUDE_EXIT = "3";
    const r = await streamed(crash);
    expect(r.chunks.map(kindOf)).toEqual(["role", "error", "stop"]);
    expect(choice(r.chunks[1]!).x_service_error_code).toBe("agent_exit");
    expect(r.chunks[1]!.error.message).toContain("exited with code 3");
    expect(r.chunks[1]!.error.message).toContain("2 line(s) that are not stream-json");
    expect(r.chunks[2]!.usage).toEqual(NO_USAGE);
  });

  it("a crash after a closed text block: the text is narration, not an answer, then the error", async () => {
    const head = (await scenarioLines("text-only")).slice(0, 9);
    const crash = await writeScenario(t.home, "crash-after-text", head);
    agentEnv.FAKE_CLAUDE_EXIT = "1";
    const r = await streamed(crash);
    expect(r.chunks.map(kindOf)).toEqual(["role", "narration", "error", "stop"]);
  });

  it("an agent that streams no blocks (no partial messages): the result text as legacy assistant text, with no type member", async () => {
    const lines = (await scenarioLines("text-only")).filter((l) => !l.includes('"type":"stream_event"'));
    const r = await streamed(await writeScenario(t.home, "no-partial", lines));
    expect(r.chunks.map(kindOf)).toEqual(["role", "text", "stop"]);
    expect(choice(r.chunks[1]!)).toEqual({ index: 0, delta: { content: "Hello! The build passes on main." }, finish_reason: null });
  });

  it("an agent that exits 0 without a result line is an error too", async () => {
    const r = await streamed(await writeScenario(t.home, "no-result", ["garbage only"]));
    expect(r.chunks.map(kindOf)).toEqual(["role", "error", "stop"]);
    expect(r.chunks[1]!.error.message).toContain("without a result line");
  });

  it("spawns the agent with the package's flags and the cached system prompt, in the package dir", async () => {
    await streamed("text-only", "What is going on?");
    const [start] = await recordedStarts(agentEnv.FAKE_CLAUDE_RECORD!);
    const argv = start!.argv;
    expect(argv.slice(0, 2)).toEqual(["-p", "What is going on?"]);
    expect(flagOf(argv, "--output-format")).toBe("stream-json");
    expect(argv).toContain("--verbose");
    expect(argv).toContain("--include-partial-messages");
    expect(flagOf(argv, "--model")).toBe("sonnet");
    expect(flagOf(argv, "--max-turns")).toBe("12");
    expect(flagOf(argv, "--permission-mode")).toBe("bypassPermissions");
    // CLAUDE.md + system.md of the package, in one flag.
    expect(flagOf(argv, "--append-system-prompt")).toBe("# Deploy helper\nYou answer questions about deployments.\n\nBe brief.");
    expect(argv.filter((a) => a === "--append-system-prompt" || a === "--system-prompt")).toHaveLength(1);
    expect(flagOf(argv, "--session-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(start!.cwd).toBe(s.deps.agent.packageDir);
  });

  it("maps stdout as it arrives: the chunks reach the client while the agent is still running", async () => {
    // The agent prints everything up to its result line, then waits: nothing has ended the turn.
    agentEnv.FAKE_CLAUDE_SCENARIO = "thinking-tool-final";
    agentEnv.FAKE_CLAUDE_HANG = "1";
    const abort = new AbortController();
    const res = await s.call("/v1/chat/completions", {
      json: { model: AGENT, stream: true, messages: [{ role: "user", content: "/show-all why?" }] },
      headers: { "x-conversation-id": crypto.randomUUID() },
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    const text = await readUntil(reader, '"x_service_event_type":"tool_result"');
    const kinds = [...text.matchAll(/"x_service_event_type":"(\w+)"/g)].map((m) => m[1]);
    expect(kinds).toEqual(["thinking", "thinking", "narration", "tool_use", "tool_result"]);
    // The agent has not exited and the turn is still open: these chunks were streamed, not buffered.
    expect(s.deps.chat.running).toBe(1);
    expect(await Bun.file(agentEnv.FAKE_CLAUDE_RECORD!).text()).not.toContain('"event":"signal"');
    expect(text).not.toContain('"finish_reason":"stop"');
    abort.abort();
    await reader.cancel().catch(() => {});
    await until(() => s.deps.chat.running === 0, 5000);
  });

  it("sends keep-alive comments while the agent is silent, and a client that leaves stops the agent", async () => {
    agentEnv.FAKE_CLAUDE_SCENARIO = "text-only";
    agentEnv.FAKE_CLAUDE_HANG = "1";
    const abort = new AbortController();
    const res = await s.call("/v1/chat/completions", {
      json: { model: AGENT, stream: true, messages: [{ role: "user", content: "hang" }] },
      headers: { "x-conversation-id": crypto.randomUUID() },
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    const text = await readUntil(reader, ": keep-alive");
    expect(text).toStartWith("data: ");
    // On a loaded machine a keep-alive can come before the agent is up: leave once it is.
    await until(async () => (await recordedStarts(agentEnv.FAKE_CLAUDE_RECORD!)).length === 1, 10_000);
    abort.abort();
    await reader.cancel().catch(() => {});
    // The agent got its signal, and the turn ended.
    await until(async () => (await Bun.file(agentEnv.FAKE_CLAUDE_RECORD!).text()).includes('"event":"signal"'), 5000);
    await until(() => s.deps.chat.running === 0, 5000);
  });
});

/** Reads an SSE body until `marker` has arrived; what was read. Fails if the stream ends first. */
async function readUntil(reader: { read(): Promise<{ value?: Uint8Array; done: boolean }> }, marker: string): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes(marker)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before ${marker}: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  return text;
}

/** Scenario, its final answer, and the narration shown before it by default (each text exactly once, ending with a paragraph break). */
const OK_SCENARIOS: Array<[string, string, string]> = [
  ["text-only", "Hello! The build passes on main.", ""],
  ["thinking-tool-final", "One test fails: `cancel > sends SIGTERM`. The runner never forwards the signal.", "Let me run the tests first.\n\n"],
  ["two-text-blocks", "Merge #12 first; #13 depends on it.", "I looked at the three open PRs.\n\n"],
  ["tool-error", "I can't read that file: permission denied.", ""],
  // The sub-agent's "Searching the deploy log." is not the main answer's text.
  ["subagent", "The last deploy failed: the registry timed out during the image pull.", ""],
];
const FAILING: Array<[string, string, string]> = [
  ["ends-on-tool-call", "error_max_turns", "turn limit"],
  ["error-during-execution", "error_during_execution", "API Error: 529 Overloaded"],
  ["auth-failure", "authentication_failed", "Invalid API key"],
];

describe("the official openai client", () => {
  for (const [scenario, answer, narration] of OK_SCENARIOS) {
    it(`${scenario}: chat.completions.create answers with the final text and usage`, async () => {
      agentEnv.FAKE_CLAUDE_SCENARIO = scenario;
      const res = await client.chat.completions.create({ model: AGENT, messages: [{ role: "user", content: "go" }] }, fresh());
      expect(res.object).toBe("chat.completion");
      expect(res.choices[0]!.message).toMatchObject({ role: "assistant", content: answer });
      expect(res.choices[0]!.finish_reason).toBe("stop");
      expect(res.usage?.prompt_tokens).toBe(38066);
    });

    it(`${scenario}: streaming, the content deltas are the narration then the final text, each once, and the last chunk has usage`, async () => {
      agentEnv.FAKE_CLAUDE_SCENARIO = scenario;
      const stream = await client.chat.completions.create({ model: AGENT, stream: true, messages: [{ role: "user", content: "go" }] }, fresh());
      let content = "";
      let last: OpenAI.ChatCompletionChunk | undefined;
      for await (const chunk of stream) {
        content += chunk.choices[0]?.delta.content ?? "";
        last = chunk;
      }
      expect(content).toBe(narration + answer);
      expect(last?.choices[0]?.finish_reason).toBe("stop");
      expect(last?.usage?.prompt_tokens).toBe(38066);
    });
  }

  for (const [scenario, code, message] of FAILING) {
    it(`${scenario}: not streaming, an APIError (502, code ${code})`, async () => {
      agentEnv.FAKE_CLAUDE_SCENARIO = scenario;
      const err = await client.chat.completions.create({ model: AGENT, messages: [{ role: "user", content: "go" }] }, fresh()).catch((e) => e);
      expect(err).toBeInstanceOf(APIError);
      expect(err.status).toBe(502);
      expect(err.code).toBe(code);
      expect(err.message).toContain(message);
    });

    it(`${scenario}: streaming, the error chunk raises an APIError`, async () => {
      agentEnv.FAKE_CLAUDE_SCENARIO = scenario;
      const stream = await client.chat.completions.create({ model: AGENT, stream: true, messages: [{ role: "user", content: "go" }] }, fresh());
      const err = await (async () => {
        for await (const _ of stream) {
          // read on
        }
      })().catch((e) => e);
      expect(err).toBeInstanceOf(APIError);
      expect(err.message).toContain(message);
    });
  }
});
