// Agent mode as chat clients really run it (issue 15 parts 1-5), against the live service (real
// HTTP on loopback, the fixture agent replaying recorded stream-json), with the real client
// libraries: the official `openai` SDK, `ai` + `@ai-sdk/openai-compatible`, `@langchain/openai`.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "bun:test";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { ChatOpenAI } from "@langchain/openai";
import { streamText } from "ai";
import OpenAI from "openai";
import { AGENT, type AgentModeServer, flagOf, KEY, kindOf, makeHub, readSse, recordedStarts, startAgentModeServer, tempHome } from "./support/agent-mode";
import { until } from "./support/until";

let t: Awaited<ReturnType<typeof tempHome>>;
let s: AgentModeServer;
let client: OpenAI;
const agentEnv: Record<string, string | undefined> = {};
let record = "";
const ANSWER = "One test fails: `cancel > sends SIGTERM`. The runner never forwards the signal.";
const NARRATION = "Let me run the tests first.";
const PROMPT_TOKENS = 18 + 2048 + 36000;

beforeAll(async () => {
  t = await tempHome("chat-clients-");
  const hubUrl = await makeHub(join(t.home, "hub"));
  s = await startAgentModeServer({ home: t.home, hubUrl, kv: "file", agentEnv, keepAliveMs: 100 });
  client = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: KEY, maxRetries: 0 });
});

afterAll(async () => {
  await s.close();
  await t.cleanup();
});

beforeEach(() => {
  for (const k of Object.keys(agentEnv)) delete agentEnv[k];
  record = join(t.home, `record-${crypto.randomUUID()}.jsonl`);
  Object.assign(agentEnv, { PATH: process.env.PATH, FAKE_CLAUDE_RECORD: record, FAKE_CLAUDE_SCENARIO: "thinking-tool-final" });
});

/** A user of their own per test: visibility is sticky per user, so tests do not see each other's toggles. */
const someone = () => `user-${crypto.randomUUID().slice(0, 8)}`;
const userMsg = (content: string) => ({ role: "user" as const, content });

describe("part 1: separate chats stay separate", () => {
  it("two new chats without any id that open with the same message get two sessions, across users too; the follow-up resumes its own", async () => {
    const open = (user?: string) => s.call("/v1/chat/completions", { json: { model: AGENT, messages: [userMsg("hi")], ...(user ? { user } : {}) } });
    const a = await open();
    const b = await open();
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    await Promise.all([a.text(), b.text()]);
    expect(a.headers.get("x-conversation-tier")).toBe("content_hash");
    expect(b.headers.get("x-conversation-id")).toBe(a.headers.get("x-conversation-id"));
    expect(b.headers.get("x-session-id")).not.toBe(a.headers.get("x-session-id"));
    const starts = await recordedStarts(record);
    expect(starts.map((st) => flagOf(st.argv, "--resume"))).toEqual([undefined, undefined]);
    expect(starts.map((st) => flagOf(st.argv, "--session-id"))).toEqual([a.headers.get("x-session-id")!, b.headers.get("x-session-id")!]);

    // The key now maps to the latest opening's session: its follow-up (history + one more message) resumes it.
    const next = await s.call("/v1/chat/completions", {
      json: { model: AGENT, messages: [userMsg("hi"), { role: "assistant", content: ANSWER }, userMsg("and why?")] },
    });
    await next.text();
    expect(next.headers.get("x-session-id")).toBe(b.headers.get("x-session-id"));
    expect(flagOf((await recordedStarts(record))[2]!.argv, "--resume")).toBe(b.headers.get("x-session-id")!);
  });

  it("two same-opening chats running at the same time do not make each other busy", async () => {
    agentEnv.FAKE_CLAUDE_DELAY_MS = "40";
    const opening = { model: AGENT, messages: [userMsg("good morning")] };
    const [a, b] = await Promise.all([s.call("/v1/chat/completions", { json: opening }), s.call("/v1/chat/completions", { json: opening })]);
    expect([a.status, b.status]).toEqual([200, 200]);
    await Promise.all([a.text(), b.text()]);
    expect(a.headers.get("x-session-id")).not.toBe(b.headers.get("x-session-id"));
  });

  it("explicit conversation ids keep resuming as before", async () => {
    const headers = { "x-conversation-id": crypto.randomUUID() };
    const first = await s.call("/v1/chat/completions", { json: { messages: [userMsg("hi")] }, headers });
    await first.text();
    const again = await s.call("/v1/chat/completions", { json: { messages: [userMsg("hi")] }, headers });
    await again.text();
    expect(again.headers.get("x-session-id")).toBe(first.headers.get("x-session-id"));
  });
});

/** Open WebUI's title request: its default template's shape, the chat history inside. */
const titleRequest = (history: string) => ({
  model: AGENT,
  stream: false,
  max_completion_tokens: 1000,
  messages: [
    {
      role: "user",
      content:
        "### Task:\nGenerate a concise, 3-5 word title with an emoji summarizing the chat history.\n### Output:\n" +
        `JSON format: { "title": "your concise title here" }\n### Chat History:\n<chat_history>\nUSER: ${history}\n</chat_history>`,
    },
  ],
});

describe("part 2: Open WebUI's background tasks stay out of the chat", () => {
  it("a title request during a running turn answers at once, one-shot on the task model, and leaves the chat's session alone", async () => {
    const chatId = crypto.randomUUID();
    const headers = { "x-openwebui-chat-id": chatId, "x-openwebui-user-id": someone() };
    // A first turn maps the chat to a session.
    const first = await s.call("/v1/chat/completions", { json: { model: AGENT, messages: [userMsg("why does the suite fail?")] }, headers });
    await first.text();
    const session = first.headers.get("x-session-id")!;
    const convKey = `conv:${AGENT}:${headers["x-openwebui-user-id"]}:${chatId}`;
    const mapped = async () => JSON.parse(await readFile(join(t.home, ".service", "agent_sessions.json"), "utf8"))[convKey]?.session_id;
    expect(await mapped()).toBe(session);

    // The next turn hangs (the chat is busy) …
    agentEnv.FAKE_CLAUDE_HANG = "1";
    const controller = new AbortController();
    const running = await s.call("/v1/chat/completions", {
      json: { model: AGENT, stream: true, messages: [userMsg("why?")] },
      headers,
      signal: controller.signal,
    });
    expect(running.status).toBe(200);
    await until(async () => (await recordedStarts(record)).length === 2, 10_000);
    const busy = await s.call("/v1/chat/completions", { json: { model: AGENT, messages: [userMsg("hello?")] }, headers });
    expect(busy.status).toBe(429);

    // … and the title request, with the same headers and the /show-tools of the history inside, answers.
    delete agentEnv.FAKE_CLAUDE_HANG;
    agentEnv.FAKE_CLAUDE_SCENARIO = "text-only";
    const title = await s.call("/v1/chat/completions", { json: titleRequest("/show-tools why?"), headers });
    expect(title.status).toBe(200);
    expect(title.headers.get("x-client-task")).toBe("task");
    expect(title.headers.get("x-session-id")).toBeNull();
    const body = (await title.json()) as any;
    expect(body.choices[0].message.content).toBe("Hello! The build passes on main.");

    const task = (await recordedStarts(record))[2]!;
    expect(flagOf(task.argv, "--model")).toBe("haiku");
    expect(flagOf(task.argv, "--max-turns")).toBe("1");
    expect(flagOf(task.argv, "--tools")).toBe("");
    expect(task.argv).toContain("--strict-mcp-config");
    expect(task.argv).toContain("--no-session-persistence");
    expect(flagOf(task.argv, "--resume")).toBeUndefined();
    expect(flagOf(task.argv, "--session-id")).toBeUndefined();
    expect(flagOf(task.argv, "--append-system-prompt")).toBeUndefined();
    expect(task.cwd).not.toBe(s.deps.agent.packageDir);
    expect(task.argv[1]).toStartWith("### Task:");

    controller.abort();
    await until(async () => s.deps.chat.running === 0, 10_000);
    expect(await mapped()).toBe(session);
    // The history's /show-tools inside the task prompt toggled nothing.
    const status = (await (await s.call("/v1/chat/completions", { json: { messages: [userMsg("/stream-status")] }, headers })).json()) as any;
    expect(JSON.parse(status.choices[0].message.content).show_tools).toBe(false);
  });

  it("Open WebUI's request marker metadata.task is recognised too, streaming: the answer only, as final text", async () => {
    agentEnv.FAKE_CLAUDE_SCENARIO = "thinking-tool-final";
    const res = await s.call("/v1/chat/completions", {
      json: { model: AGENT, stream: true, metadata: { task: "follow_up_generation" }, messages: [userMsg("/show-all suggest follow-ups")] },
      headers: { "x-openwebui-chat-id": crypto.randomUUID() },
    });
    expect(res.headers.get("x-client-task")).toBe("follow_up_generation");
    const r = await readSse(res);
    expect(r.chunks.map(kindOf)).toEqual(["role", "final", "stop"]);
    expect(r.chunks[1]!.choices[0].delta.content).toBe(ANSWER);
  });
});

describe("part 3: visibility per user", () => {
  it("user B's stream is unaffected by user A's toggles; a user without toggles of their own follows the agent's config", async () => {
    const [a, b] = [someone(), someone()];
    const say = (user: string, content: string, viaBody = false) =>
      s.call("/v1/chat/completions", {
        json: { model: AGENT, stream: true, messages: [userMsg(content)], ...(viaBody ? { user } : {}) },
        headers: { "x-conversation-id": crypto.randomUUID(), ...(viaBody ? {} : { "x-openwebui-user-id": user }) },
      });
    const aStream = await readSse(await say(a, "/show-all why?"));
    expect(aStream.chunks.map(kindOf)).toContain("tool_use");
    const bStream = await readSse(await say(b, "why?", true));
    expect(bStream.chunks.map(kindOf)).toEqual(["role", "narration", "final", "stop"]);
    // A's toggles are sticky for A.
    expect((await readSse(await say(a, "and now?"))).chunks.map(kindOf)).toContain("thinking");
    expect(JSON.parse(await readFile(join(t.home, ".service", "stream_config", `${encodeURIComponent(`${AGENT}:${a}`)}.json`), "utf8")).show_tools).toBe(true);
  });
});

describe("part 4: text that reads right in any client", () => {
  it("concatenated content never glues two blocks (the openai SDK, streaming)", async () => {
    const stream = await client.chat.completions.create({ model: AGENT, stream: true, messages: [userMsg("why?")] }, { headers: { "x-user-id": someone() } });
    let content = "";
    for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? "";
    expect(content).toBe(`${NARRATION}\n\n${ANSWER}`);
  });

  it("/live-text: text deltas as they arrive, as legacy chunks with no type member, each once; sticky until /block-text", async () => {
    const user = someone();
    const say = (content: string) =>
      s.call("/v1/chat/completions", {
        json: { stream: true, messages: [userMsg(content)] },
        headers: { "x-user-id": user, "x-conversation-id": crypto.randomUUID() },
      });
    const live = await readSse(await say("/live-text why?"));
    const kinds = live.chunks.map(kindOf);
    expect(kinds[0]).toBe("role");
    expect(kinds.at(-1)).toBe("stop");
    expect(new Set(kinds.slice(1, -1))).toEqual(new Set(["text"]));
    expect(kinds.length).toBeGreaterThan(4);
    expect(live.chunks.map((c) => c.choices[0].delta.content ?? "").join("")).toBe(`${NARRATION}\n\n${ANSWER}`);
    expect((await readSse(await say("again"))).chunks.map(kindOf)).not.toContain("final");
    expect((await readSse(await say("/block-text again"))).chunks.map(kindOf)).toEqual(["role", "narration", "final", "stop"]);
  });

  it("SERVICE_STREAM_TEXT=live makes live text the default", async () => {
    const home = await tempHome("chat-live-");
    const live = await startAgentModeServer({
      home: home.home,
      hubUrl: await makeHub(join(home.home, "hub")),
      kv: "file",
      agentEnv,
      configEnv: { SERVICE_STREAM_TEXT: "live" },
    });
    try {
      const r = await readSse(await live.call("/v1/chat/completions", { json: { stream: true, messages: [userMsg("why?")] } }));
      expect(r.chunks.map(kindOf).filter((k) => k !== "text")).toEqual(["role", "stop"]);
      expect(r.chunks.map((c) => c.choices[0].delta.content ?? "").join("")).toBe(`${NARRATION}\n\n${ANSWER}`);
    } finally {
      await live.close();
      await home.cleanup();
    }
  });
});

describe("part 5: usage as OpenAI sends it", () => {
  it("include_usage: usage in its own chunk before [DONE] with choices [], usage null on every other chunk", async () => {
    const r = await readSse(
      await s.call("/v1/chat/completions", {
        json: { stream: true, stream_options: { include_usage: true }, messages: [userMsg("why?")] },
        headers: { "x-user-id": someone() },
      }),
    );
    expect(r.done).toBe(true);
    const last = r.chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({
      prompt_tokens: PROMPT_TOKENS,
      completion_tokens: 119,
      total_tokens: PROMPT_TOKENS + 119,
      prompt_tokens_details: { cached_tokens: 36000 },
    });
    for (const c of r.chunks.slice(0, -1)) expect(c.usage).toBeNull();
    expect(kindOf(r.chunks.at(-2)!)).toBe("stop");
  });

  it("the openai SDK: cached tokens in prompt_tokens_details, streaming (include_usage) and not", async () => {
    const done = await client.chat.completions.create({ model: AGENT, messages: [userMsg("why?")] }, { headers: { "x-user-id": someone() } });
    expect(done.usage?.prompt_tokens_details?.cached_tokens).toBe(36000);
    const stream = await client.chat.completions.create({ model: AGENT, stream: true, stream_options: { include_usage: true }, messages: [userMsg("why?")] });
    const usages = [];
    for await (const chunk of stream) if (chunk.usage) usages.push(chunk.usage);
    expect(usages).toHaveLength(1);
    expect(usages[0]!.prompt_tokens_details?.cached_tokens).toBe(36000);
  });

  it("@langchain/openai: usage counted once, with the cache reads", async () => {
    const model = new ChatOpenAI({ model: AGENT, apiKey: KEY, configuration: { baseURL: `${s.url}/v1` }, maxRetries: 0 });
    let text = "";
    let usage: any;
    for await (const chunk of await model.stream("why?")) {
      text += chunk.content as string;
      if (chunk.usage_metadata) usage = usage ? { ...usage, n: usage.n + 1 } : { ...chunk.usage_metadata, n: 1 };
    }
    expect(text).toBe(`${NARRATION}\n\n${ANSWER}`);
    expect(usage.n).toBe(1);
    expect(usage.input_tokens).toBe(PROMPT_TOKENS);
    expect(usage.output_tokens).toBe(119);
    expect(usage.input_token_details?.cache_read).toBe(36000);
    const reply = await model.invoke("why?");
    expect(reply.usage_metadata?.input_tokens).toBe(PROMPT_TOKENS);
    expect(reply.usage_metadata?.input_token_details?.cache_read).toBe(36000);
  });

  it("ai + @ai-sdk/openai-compatible: the text once, usage with the cache reads", async () => {
    const provider = createOpenAICompatible({ name: "brain-stack", baseURL: `${s.url}/v1`, apiKey: KEY, includeUsage: true });
    const result = streamText({ model: provider(AGENT), prompt: "why?", headers: { "x-user-id": someone() } });
    expect(await result.text).toBe(`${NARRATION}\n\n${ANSWER}`);
    const usage = await result.usage;
    expect(usage.inputTokens).toBe(PROMPT_TOKENS);
    expect(usage.inputTokenDetails.cacheReadTokens).toBe(36000);
    expect(usage.outputTokens).toBe(119);
  });
});
