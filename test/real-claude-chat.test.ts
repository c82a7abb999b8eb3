// The chat stream (agent mode) through the real Claude Code CLI against the fixture Anthropic
// API: the chunk table as the real CLI's stream-json maps to it, a retry shown as a status, a
// refused key ending the turn at once, and two turns of one conversation where the second
// request reaching the API carries the first turn (real --resume, real transcript).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { type AnthropicApi, startAnthropicApi } from "./fixtures/anthropic-api";
import { AGENT, type AgentModeServer, kindOf, makeHub, readSse, startAgentModeServer, tempHome } from "./support/agent-mode";
import { OFFLINE_ENV, realClaudeBinary } from "./support/real-claude";

let t: Awaited<ReturnType<typeof tempHome>>;
let s: AgentModeServer;
let api: AnthropicApi;

beforeAll(async () => {
  api = await startAnthropicApi();
  t = await tempHome("real-claude-chat-");
  const hubUrl = await makeHub(join(t.home, "hub"));
  s = await startAgentModeServer({
    home: t.home,
    hubUrl,
    kv: "file",
    configEnv: { SERVICE_CLAUDE_BINARY: realClaudeBinary(), MODEL_BASE_URL: api.url, MODEL_AUTH_TOKEN: "sk-ant-fixture-key" },
    agentEnv: { PATH: process.env.PATH, ...OFFLINE_ENV },
  });
});

afterAll(async () => {
  await s?.close();
  api?.stop();
  await t?.cleanup();
});

beforeEach(() => {
  api.requests.length = 0;
});

const chat = (content: string, conversation: string = crypto.randomUUID()) =>
  s.call("/v1/chat/completions", {
    json: { model: AGENT, stream: true, messages: [{ role: "user", content }] },
    headers: { "x-conversation-id": conversation },
  });

const choice = (c: Record<string, any>) => c.choices[0];
const userText = (m: { content: unknown }) =>
  typeof m.content === "string"
    ? m.content
    : (m.content as Array<{ type: string; text?: string }>)
        .filter((p) => p.type === "text")
        .map((p) => p.text)
        .join("\n");

describe("a streaming turn through the real CLI", () => {
  it("maps thinking, narration, the tool call, its result and the final per the chunk table, with a retry as a status", async () => {
    api.setScript([
      { error: 529 },
      {
        content: [
          { type: "thinking", thinking: "The user wants a greeting from the shell." },
          { type: "text", text: "Let me ask the shell." },
          { type: "tool_use", name: "Bash", input: { command: "echo hi-from-the-tool", description: "say hi" } },
        ],
        usage: { input_tokens: 50, output_tokens: 12, cache_read_input_tokens: 4 },
      },
      { content: [{ type: "text", text: "The shell says hi." }], usage: { input_tokens: 70, output_tokens: 6, cache_creation_input_tokens: 2 } },
    ]);
    const res = await chat("/show-all greet me through the shell");
    expect(res.status).toBe(200);
    const r = await readSse(res);
    expect(r.done).toBe(true);
    const kinds = r.chunks.map(kindOf).filter((k, i, all) => k !== "thinking" || all[i - 1] !== "thinking");
    expect(kinds).toEqual(["role", "status", "thinking", "narration", "tool_use", "tool_result", "final", "stop"]);

    const status = choice(r.chunks.find((c) => kindOf(c) === "status")!);
    expect(status.x_service_status).toBe("api_retry");
    expect(status.x_service_retry).toMatchObject({ attempt: 1, max_retries: 10, error_status: 529, error: "overloaded" });
    expect(status.delta.content).toContain("the model API failed (HTTP 529 overloaded); the agent retries (attempt 1 of 10)");

    const thinking = r.chunks
      .filter((c) => kindOf(c) === "thinking")
      .map((c) => choice(c).delta.reasoning_content)
      .join("");
    expect(thinking).toBe("The user wants a greeting from the shell.");
    expect(choice(r.chunks.find((c) => kindOf(c) === "narration")!).delta.content).toBe("Let me ask the shell.\n\n");
    const call = choice(r.chunks.find((c) => kindOf(c) === "tool_use")!);
    expect(call.x_service_tool_name).toBe("Bash");
    expect(call.delta.content).toContain("```tool_use:Bash\n");
    expect(call.delta.content).toContain('"command": "echo hi-from-the-tool"');
    const result = choice(r.chunks.find((c) => kindOf(c) === "tool_result")!);
    expect(result.x_service_tool_use_id).toBe(call.x_service_tool_use_id);
    expect(result.x_service_is_error).toBe(false);
    expect(result.delta.content).toContain("hi-from-the-tool");
    expect(choice(r.chunks.find((c) => kindOf(c) === "final")!).delta.content).toBe("The shell says hi.");
    // Usage from the real result line: the sums over the two answered requests.
    expect(r.chunks.at(-1)!.usage).toEqual({
      prompt_tokens: 50 + 4 + 70 + 2,
      completion_tokens: 18,
      total_tokens: 144,
      prompt_tokens_details: { cached_tokens: 4 },
    });
  }, 90_000);

  it("ends the turn at once with authentication_failed when the key is refused", async () => {
    api.setScript([{ error: 401, times: 50 }]);
    const t0 = Date.now();
    const r = await readSse(await chat("hello?"));
    expect(r.done).toBe(true);
    const kinds = r.chunks.map(kindOf);
    expect(kinds).toEqual(["role", "error", "stop"]);
    const error = r.chunks.find((c) => kindOf(c) === "error")!;
    expect(error.error).toMatchObject({ code: "authentication_failed", type: "agent_error" });
    expect(error.error.message).toContain("refused the agent's credentials (HTTP 401 authentication_failed)");
    expect(api.scriptedRequests().length).toBeLessThanOrEqual(2);
    expect(Date.now() - t0).toBeLessThan(30_000);
  }, 90_000);
});

describe("two turns of one conversation through the real CLI", () => {
  it("resumes the session: the second request at the API carries the first turn's messages", async () => {
    const conversation = crypto.randomUUID();
    api.setScript([{ content: [{ type: "text", text: "The capital of France is Paris." }] }]);
    const first = await readSse(await chat("What is the capital of France?", conversation));
    expect(choice(first.chunks.find((c) => kindOf(c) === "final")!).delta.content).toBe("The capital of France is Paris.");
    const firstRequest = api.scriptedRequests()[0]!;

    api.setScript([{ content: [{ type: "text", text: "About 2.1 million people." }] }]);
    const second = await readSse(await chat("And how many people live there?", conversation));
    expect(choice(second.chunks.find((c) => kindOf(c) === "final")!).delta.content).toBe("About 2.1 million people.");
    const secondRequest = api.scriptedRequests()[1]!;

    const messages = secondRequest.body.messages as Array<{ role: string; content: unknown }>;
    const users = messages.filter((m) => m.role === "user").map(userText);
    const assistants = messages.filter((m) => m.role === "assistant").map(userText);
    expect(users.some((u) => u.includes("What is the capital of France?"))).toBe(true);
    expect(assistants).toContain("The capital of France is Paris.");
    expect(users.at(-1)).toContain("And how many people live there?");
    // Only the new message was sent to the CLI: the history came from its transcript.
    expect(users.at(-1)).not.toContain("capital");
    expect(secondRequest.headers["x-claude-code-session-id"]).toBe(firstRequest.headers["x-claude-code-session-id"]);
  }, 90_000);
});

describe("a chat client's background task through the real CLI (issue 15 part 2)", () => {
  it("an Open WebUI title request runs one-shot on the task model with no tools and our task prompt, and answers", async () => {
    const res = await s.call("/v1/chat/completions", {
      json: {
        model: AGENT,
        stream: false,
        messages: [
          {
            role: "user",
            content: '### Task:\nGenerate a concise title.\n### Output:\nJSON format: { "title": "..." }\n<chat_history>\nUSER: hi\n</chat_history>',
          },
        ],
      },
      headers: { "x-openwebui-chat-id": crypto.randomUUID() },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-client-task")).toBe("task");
    expect(((await res.json()) as any).choices[0].message.content).toBe("Done.");
    const asked = api.requests.filter((r) => r.path.startsWith("/v1/messages") && JSON.stringify(r.body?.messages ?? "").includes("Generate a concise title"));
    expect(asked.length).toBeGreaterThan(0);
    for (const r of asked) {
      expect(String(r.body.model)).toContain("haiku");
      expect(r.body.tools ?? []).toEqual([]);
      expect(JSON.stringify(r.body.system)).toContain("background tasks for a chat application");
    }
  }, 90_000);
});
