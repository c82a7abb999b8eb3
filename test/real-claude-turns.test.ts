// Issue 36: Claude Code as it runs today, through the real CLI against the fixture Anthropic API,
// on every chat surface (chat completions, the Responses API, team chat): a background
// sub-agent whose outcome comes in a follow-up turn after the first result line, a sub-agent's
// tool calls shown tagged, a model stream cut mid-block and retried, and a conversation that is
// free the moment its agent has exited.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "bun:test";
import { join } from "node:path";
import OpenAI from "openai";
import { type AnthropicApi, isSubAgentRequest, startAnthropicApi, type Turn } from "./fixtures/anthropic-api";
import { type BotPlatform, startBotPlatform } from "./fixtures/bot-platform";
import { AGENT, kindOf, makeHub, readSse, tempHome } from "./support/agent-mode";
import { OFFLINE_ENV, realClaudeBinary } from "./support/real-claude";
import { OWNER, SERVICE_KEY, startTeamChatServer, type TeamChatServer } from "./support/teamchat";
import { until } from "./support/until";

let t: Awaited<ReturnType<typeof tempHome>>;
let api: AnthropicApi;
let platform: BotPlatform;
let s: TeamChatServer;
let client: OpenAI;

beforeAll(async () => {
  api = await startAnthropicApi();
  t = await tempHome("real-claude-turns-");
  platform = await startBotPlatform();
  s = await startTeamChatServer({
    home: t.home,
    hubUrl: await makeHub(join(t.home, "hub")),
    platform,
    agentEnv: { PATH: process.env.PATH, ...OFFLINE_ENV },
    configEnv: {
      SERVICE_CLAUDE_BINARY: realClaudeBinary(),
      MODEL_BASE_URL: api.url,
      MODEL_AUTH_TOKEN: "sk-ant-fixture-key",
      TEAMCHAT_OWNER_OBJECT_ID: OWNER,
    },
  });
  client = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: SERVICE_KEY, maxRetries: 0 });
});

afterAll(async () => {
  await s?.close();
  platform?.stop();
  api?.stop();
  await t?.cleanup();
});

beforeEach(() => {
  api.requests.length = 0;
  api.setSubAgentScript(undefined);
});

const chat = (content: string, o: { conversation?: string; user?: string; signal?: AbortSignal } = {}) =>
  fetch(`${s.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${SERVICE_KEY}`,
      "content-type": "application/json",
      "x-conversation-id": o.conversation ?? crypto.randomUUID(),
      ...(o.user && { "x-user-id": o.user }),
    },
    body: JSON.stringify({ model: AGENT, stream: true, messages: [{ role: "user", content }] }),
    signal: o.signal,
  });

const choice = (c: Record<string, any>) => c.choices[0];
const ofKind = (chunks: Record<string, any>[], kind: string) => chunks.filter((c) => kindOf(c) === kind).map(choice);

const HELPER_STARTED = "I started a helper.";
const HELPER_RUNNING = "The helper is running; I will tell you what it finds.";
const FOLLOW_UP = "The helper finished: the build is green.";

/** The main thread starts a background sub-agent, answers, and after the sub-agent is done answers again. */
function backgroundSubAgent(): void {
  api.setScript([
    {
      content: [
        { type: "text", text: HELPER_STARTED },
        { type: "tool_use", name: "Agent", input: { description: "check the build", prompt: "Run the build check", subagent_type: "general-purpose" } },
      ],
      usage: { input_tokens: 100, output_tokens: 10 },
    },
    { content: [{ type: "text", text: HELPER_RUNNING }], usage: { input_tokens: 200, output_tokens: 20 } },
    { content: [{ type: "text", text: FOLLOW_UP }], usage: { input_tokens: 400, output_tokens: 40 } },
  ]);
  api.setSubAgentScript([
    // Slow enough that the main thread has answered before the sub-agent is done.
    {
      content: [
        { type: "text", text: "Checking the build." },
        { type: "tool_use", name: "Bash", input: { command: "echo SUB-AGENT-BASH-RAN", description: "check" } },
      ],
      delayMs: 500,
    },
    { content: [{ type: "text", text: "The build is green." }] },
  ]);
}

const HALF = "HALF-ANSWER-ABANDONED one two three four five six seven eight nine ten";
const WHOLE = "The whole answer, from its first word to its last.";

/** The model's stream is cut in the middle of its first block; the CLI retries and gets the whole answer. */
const cutThenWhole = (): Turn[] => [{ content: [{ type: "text", text: HALF }], cut: true }, { content: [{ type: "text", text: WHOLE }] }];

describe("a background sub-agent (issue 36 parts 1 and 2)", () => {
  it("chat: the follow-up answer is the turn's one final; the first answer is narration; usage sums both turns", async () => {
    backgroundSubAgent();
    const r = await readSse(await chat("check the build in the background"));
    expect(r.done).toBe(true);
    const finals = ofKind(r.chunks, "final");
    expect(finals.map((c) => c.delta.content)).toEqual([FOLLOW_UP]);
    expect(ofKind(r.chunks, "narration").map((c) => c.delta.content)).toEqual([`${HELPER_STARTED}\n\n`, `${HELPER_RUNNING}\n\n`]);
    // The follow-up is the last thing said, after the sub-agent ran.
    expect(kindOf(r.chunks.at(-2)!)).toBe("final");
    expect(api.scriptedRequests().filter((q) => isSubAgentRequest(q.body))).toHaveLength(2);
    // Both result lines' usage (the main loop's three requests), not the first one's alone.
    expect(r.chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 700, completion_tokens: 70 });
  }, 120_000);

  it("chat with /show-all: the sub-agent's text, Bash call and result appear tagged with the Agent call's id, every result after its call", async () => {
    backgroundSubAgent();
    const r = await readSse(await chat("/show-all check the build in the background", { user: "sub-agent-viewer" }));
    expect(r.done).toBe(true);
    const calls = ofKind(r.chunks, "tool_use");
    const agent = calls.find((c) => c.x_service_tool_name === "Agent");
    const bash = calls.find((c) => c.x_service_tool_name === "Bash");
    expect(agent).toBeDefined();
    expect(agent.x_service_parent_tool_use_id).toBeUndefined();
    expect(bash).toBeDefined();
    expect(bash.x_service_parent_tool_use_id).toBe(agent.x_service_tool_use_id);
    expect(bash.delta.content).toContain("echo SUB-AGENT-BASH-RAN");
    const bashResult = ofKind(r.chunks, "tool_result").find((c) => c.x_service_tool_use_id === bash.x_service_tool_use_id);
    expect(bashResult.x_service_parent_tool_use_id).toBe(agent.x_service_tool_use_id);
    expect(bashResult.delta.content).toContain("SUB-AGENT-BASH-RAN");
    const subText = ofKind(r.chunks, "narration").filter((c) => c.x_service_parent_tool_use_id === agent.x_service_tool_use_id);
    expect(subText.map((c) => c.delta.content)).toEqual(["Checking the build.\n\n", "The build is green.\n\n"]);
    // Every tool_result chunk comes after the tool_use chunk of its id.
    const seen = new Set<string>();
    for (const c of r.chunks) {
      if (kindOf(c) === "tool_use") seen.add(choice(c).x_service_tool_use_id);
      if (kindOf(c) === "tool_result") expect(seen.has(choice(c).x_service_tool_use_id)).toBe(true);
    }
    expect(ofKind(r.chunks, "final").map((c) => c.delta.content)).toEqual([FOLLOW_UP]);
  }, 120_000);

  it("Responses API: the follow-up answer is the one final_answer message", async () => {
    backgroundSubAgent();
    const response = await client.responses.create({ model: AGENT, input: "check the build in the background" });
    expect(response.status).toBe("completed");
    const messages = response.output.filter((o) => o.type === "message") as Array<{ phase?: string; content: Array<{ text: string }> }>;
    const finals = messages.filter((m) => m.phase === "final_answer");
    expect(finals.map((m) => m.content.map((c) => c.text).join(""))).toEqual([FOLLOW_UP]);
    expect(response.output_text).toEndWith(FOLLOW_UP);
    expect(response.usage).toMatchObject({ input_tokens: 700, output_tokens: 70 });
  }, 120_000);

  it("/completions (the agents TUI): the reply is the follow-up answer", async () => {
    backgroundSubAgent();
    const res = await fetch(`${s.url}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${SERVICE_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ message: "check the build in the background", conversation_id: crypto.randomUUID() }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { reply: string }).reply).toBe(FOLLOW_UP);
  }, 120_000);
});

describe("a model stream cut mid-block and retried (issue 36 parts 3 and 5)", () => {
  it("chat: only the whole answer, after the retry's status line (which ends with a paragraph break)", async () => {
    api.setScript(cutThenWhole());
    const r = await readSse(await chat("answer me"));
    expect(r.done).toBe(true);
    expect(JSON.stringify(r.chunks)).not.toContain("HALF-ANSWER");
    expect(r.chunks.map(kindOf)).toEqual(["role", "status", "final", "stop"]);
    expect(ofKind(r.chunks, "status")[0].delta.content).toEndWith("_\n\n");
    expect(ofKind(r.chunks, "final")[0].delta.content).toBe(WHOLE);
    // The half really went out: the fixture cut the first request mid-block.
    expect(api.scriptedRequests()).toHaveLength(2);
  }, 120_000);

  it("Responses API: output_text is the whole answer, with no trace of the half", async () => {
    api.setScript(cutThenWhole());
    const response = await client.responses.create({ model: AGENT, input: "answer me" });
    expect(response.status).toBe("completed");
    expect(JSON.stringify(response.output)).not.toContain("HALF-ANSWER");
    expect(response.output_text).toEndWith(WHOLE);
    expect(api.scriptedRequests()).toHaveLength(2);
  }, 120_000);

  it("team chat: the messages posted hold the whole answer only", async () => {
    api.setScript(cutThenWhole());
    const activity = platform.activity({ text: "answer me" });
    expect((await s.post(activity, await platform.sign())).status).toBe(202);
    const conv = activity.conversation.id as string;
    await until(() => platform.messages(conv).some((m) => m.text.includes(WHOLE)), { ms: 90_000, what: "the answer in team chat" });
    await s.teamChat.bot.idle();
    const texts = platform.messages(conv).map((m) => m.text);
    expect(texts.join("\n")).not.toContain("HALF-ANSWER");
    expect(texts.at(-1)).toBe(WHOLE);
  }, 120_000);
});

/** The pid of the process whose command line holds `text` (the agent's argv holds its session id). */
async function pidOf(text: string): Promise<number | undefined> {
  const p = Bun.spawn(["pgrep", "-f", text], { stdout: "pipe" });
  const out = await new Response(p.stdout).text();
  await p.exited;
  const pid = Number.parseInt(out.trim().split("\n")[0] ?? "", 10);
  return Number.isFinite(pid) ? pid : undefined;
}

/**
 * Whether a process has exited: a zombie whose last thread is gone (its parent, the service, can
 * reap it now), or reaped already. Not "pgrep no longer sees it", nor a zombie main thread: the
 * CLI's other threads go on tearing it down for a while after either.
 */
async function hasExited(pid: number): Promise<boolean> {
  try {
    const status = await Bun.file(`/proc/${pid}/status`).text();
    return /^State:\s*Z/m.test(status) && /^Threads:\s*1$/m.test(status);
  } catch {
    return true;
  }
}

describe("stop, then regenerate (issue 36 part 4)", () => {
  it("a message sent the moment the aborted turn's agent has exited starts a turn, not 429", async () => {
    const conversation = crypto.randomUUID();
    api.setScript([{ content: [{ type: "text", text: "Thinking about it" }], hang: true }]);
    const abort = new AbortController();
    const first = await chat("take your time", { conversation, signal: abort.signal });
    expect(first.status).toBe(200);
    const session = first.headers.get("x-session-id")!;
    await api.waitForRequest((q) => q.scripted, 60_000);
    const pid = await pidOf(session);
    expect(pid).toBeNumber();
    // The client's "stop".
    abort.abort();
    await first.body?.cancel().catch(() => {});
    await until(() => hasExited(pid!), { ms: 15_000, every: 2, what: "the aborted turn's agent to exit" });
    // Its "regenerate", at once.
    api.setScript([{ content: [{ type: "text", text: "Here it is." }] }]);
    const again = await chat("take your time", { conversation });
    expect(again.status).toBe(200);
    const r = await readSse(again);
    expect(ofKind(r.chunks, "final").map((c) => c.delta.content)).toEqual(["Here it is."]);
  }, 120_000);
});
