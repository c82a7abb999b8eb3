// POST /v1/responses (issue 15 part 6) against the live service with the fixture agent: the raw
// typed events, the official `openai` SDK (responses, streaming and not) and `ai` with
// `@ai-sdk/openai`, whose default model calls the Responses API.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, type ModelMessage, streamText } from "ai";
import { createParser } from "eventsource-parser";
import OpenAI, { APIError } from "openai";
import { AGENT, type AgentModeServer, flagOf, KEY, makeHub, recordedStarts, startAgentModeServer, tempHome } from "./support/agent-mode";
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
  t = await tempHome("chat-responses-");
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

const someone = () => `user-${crypto.randomUUID().slice(0, 8)}`;

interface TypedEvent {
  event: string;
  data: Record<string, any>;
}

async function readEvents(res: Response): Promise<TypedEvent[]> {
  const out: TypedEvent[] = [];
  const parser = createParser({ onEvent: (ev) => out.push({ event: ev.event ?? "", data: JSON.parse(ev.data) }) });
  const decoder = new TextDecoder();
  for await (const part of res.body!) parser.feed(decoder.decode(part, { stream: true }));
  return out;
}

const post = (json: Record<string, unknown>, headers: Record<string, string> = {}) => s.call("/v1/responses", { json, headers });

describe("POST /v1/responses, stream true: the typed events", () => {
  it("by default: created, in_progress, the narration (commentary) and the answer (final_answer) as message items, completed with usage", async () => {
    const res = await post({ model: AGENT, stream: true, input: "why does the suite fail?" }, { "x-user-id": someone() });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    const events = await readEvents(res);
    for (const e of events) expect(e.data.type).toBe(e.event);
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    const item = [
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
    ];
    expect(events.map((e) => e.event)).toEqual(["response.created", "response.in_progress", ...item, ...item, "response.completed"]);
    expect(events[0]!.data.response).toMatchObject({ object: "response", status: "in_progress", model: AGENT, output: [] });
    expect(events[2]!.data.item).toMatchObject({ type: "message", role: "assistant", phase: "commentary", content: [] });
    expect(events[4]!.data.delta).toBe(`${NARRATION}\n\n`);
    expect(events[8]!.data.item.phase).toBe("final_answer");
    expect(events[10]!.data.delta).toBe(ANSWER);
    const done = events.at(-1)!.data.response;
    expect(done.status).toBe("completed");
    expect(done.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(done.output.map((o: any) => o.content[0].text)).toEqual([`${NARRATION}\n\n`, ANSWER]);
    expect(done.usage).toEqual({
      input_tokens: PROMPT_TOKENS,
      input_tokens_details: { cached_tokens: 36000 },
      output_tokens: 119,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: PROMPT_TOKENS + 119,
    });
  });

  it("with thinking visible: a reasoning item whose summary streams token by token", async () => {
    const events = await readEvents(await post({ stream: true, input: "/show-thinking why?" }, { "x-user-id": someone() }));
    const deltas = events.filter((e) => e.event === "response.reasoning_summary_text.delta").map((e) => e.data.delta);
    expect(deltas).toEqual(["The user wants the failing ", "test. I should run the suite first."]);
    expect(events[2]!.data.item).toMatchObject({ type: "reasoning", summary: [] });
    expect(events.map((e) => e.event)).toContain("response.reasoning_summary_part.added");
    const rs = events.at(-1)!.data.response.output[0];
    expect(rs).toMatchObject({ type: "reasoning", summary: [{ type: "summary_text", text: deltas.join("") }] });
  });

  it("with tools visible: the tool call and its result as commentary items holding the same fenced blocks as chat completions", async () => {
    const r = await client.responses.create({ model: AGENT, input: "/show-tools why?", user: someone() });
    const texts = r.output.map((o: any) => [o.phase, o.content[0].text]);
    expect(texts).toEqual([
      ["commentary", `${NARRATION}\n\n`],
      ["commentary", '\n```tool_use:Bash\n{\n  "command": "bun test test/jobs.test.ts",\n  "description": "Run the job tests"\n}\n```\n'],
      ["commentary", expect.stringMatching(/^\n```tool_result\n/)],
      ["final_answer", ANSWER],
    ]);
  });

  it("with live text: one message item per text block, its deltas as they arrive, the phase named when the block closes", async () => {
    const events = await readEvents(await post({ stream: true, input: "/live-text why?" }, { "x-user-id": someone() }));
    const deltas = events.filter((e) => e.event === "response.output_text.delta").map((e) => e.data.delta);
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.join("")).toBe(`${NARRATION}\n\n${ANSWER}`);
    const done = events.at(-1)!.data.response;
    expect(done.output.map((o: any) => [o.phase, o.content[0].text])).toEqual([
      ["commentary", NARRATION],
      ["final_answer", `\n\n${ANSWER}`],
    ]);
  });

  it("a failed turn ends with response.failed and the agent's error, never response.completed", async () => {
    agentEnv.FAKE_CLAUDE_SCENARIO = "auth-failure";
    const events = await readEvents(await post({ stream: true, input: "hello" }));
    expect(events.at(-1)!.event).toBe("response.failed");
    expect(events.at(-1)!.data.response.status).toBe("failed");
    expect(events.at(-1)!.data.response.error).toEqual({ code: "authentication_failed", message: expect.stringContaining("Invalid API key") });
    expect(events.map((e) => e.event)).not.toContain("response.completed");
  });

  it("/stream-status answers with the config as the output text and spawns nothing", async () => {
    const r = await client.responses.create({ model: AGENT, input: "/stream-status" });
    expect(JSON.parse(r.output_text)).toMatchObject({ show_thinking: false, show_tools: false, live_text: false });
    expect(await recordedStarts(record)).toEqual([]);
  });
});

describe("conversations: previous_response_id, instructions, metadata", () => {
  it("previous_response_id resumes the response's session with only the new message; instructions and metadata come through", async () => {
    const first = await client.responses.create({
      model: AGENT,
      instructions: "Answer in one line.",
      input: "why does it fail?",
      metadata: { ticket: "OPS-1" },
    });
    expect(first.metadata).toEqual({ ticket: "OPS-1" });
    expect(first.instructions).toBe("Answer in one line.");
    const second = await client.responses.create({ model: AGENT, previous_response_id: first.id, input: "and how do I fix it?" });
    expect(second.previous_response_id).toBe(first.id);
    const starts = await recordedStarts(record);
    const session = flagOf(starts[0]!.argv, "--session-id")!;
    expect(starts[0]!.argv[1]).toContain("<client_instructions>\nAnswer in one line.\n</client_instructions>");
    expect(flagOf(starts[1]!.argv, "--resume")).toBe(session);
    expect(starts[1]!.argv[1]).toBe("and how do I fix it?");
  });

  it("two new responses with the same input are two conversations", async () => {
    await client.responses.create({ model: AGENT, input: "hi" });
    await client.responses.create({ model: AGENT, input: "hi" });
    const starts = await recordedStarts(record);
    expect(starts.map((st) => flagOf(st.argv, "--resume"))).toEqual([undefined, undefined]);
    expect(flagOf(starts[0]!.argv, "--session-id")).not.toBe(flagOf(starts[1]!.argv, "--session-id"));
  });

  it("an unknown previous_response_id is a 400 in OpenAI's shape, and nothing runs", async () => {
    const err = await client.responses.create({ model: AGENT, previous_response_id: "resp_0123456789abcdef0123456789abcdef", input: "hi" }).catch((e) => e);
    expect(err).toBeInstanceOf(APIError);
    expect(err.status).toBe(400);
    expect(err.code).toBe("previous_response_not_found");
    expect(err.param).toBe("previous_response_id");
    expect(await recordedStarts(record)).toEqual([]);
  });

  it("the same auth: no key or a wrong one is a 401 in OpenAI's shape, and nothing runs", async () => {
    for (const authorization of [undefined, "Bearer wrong-key"]) {
      const res = await fetch(`${s.url}/v1/responses`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ input: "hi" }),
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as any).error).toMatchObject({ message: expect.any(String), type: expect.any(String) });
    }
    expect(await recordedStarts(record)).toEqual([]);
  });

  it("bad bodies: no input, an empty input, a last item that is not the user's", async () => {
    for (const json of [{ model: AGENT }, { input: "" }, { input: [{ role: "assistant", content: "hello" }] }, { input: [] }]) {
      const res = await post(json);
      expect(res.status).toBe(400);
      const body = (await res.json()) as any;
      expect(body.error).toMatchObject({ type: expect.any(String), message: expect.any(String) });
    }
    expect(await recordedStarts(record)).toEqual([]);
  });

  it("the same busy rule: a second request of a running conversation gets 429 with Retry-After", async () => {
    agentEnv.FAKE_CLAUDE_HANG = "1";
    const first = await client.responses.create({ model: AGENT, input: "hi", stream: true });
    const reader = first[Symbol.asyncIterator]();
    const created = await reader.next();
    expect(created.value?.type).toBe("response.created");
    const id = (created.value as any).response.id;
    await until(async () => (await recordedStarts(record)).length === 1, 10_000);
    const busy = await post({ previous_response_id: id, input: "hello?" });
    expect(busy.status).toBe(429);
    expect(busy.headers.get("retry-after")).toBe("5");
    first.controller.abort();
    await until(async () => s.deps.chat.running === 0, 10_000);
  });
});

describe("the official openai SDK", () => {
  it("responses.create: output_text is the narration then the answer, usage with cached tokens", async () => {
    const r = await client.responses.create({ model: AGENT, input: "why?" });
    expect(r.status).toBe("completed");
    expect(r.output_text).toBe(`${NARRATION}\n\n${ANSWER}`);
    expect(r.usage?.input_tokens_details.cached_tokens).toBe(36000);
  });

  it("responses.stream: the text deltas add up to output_text, the final response is complete", async () => {
    const stream = client.responses.stream({ model: AGENT, input: "why?" });
    let text = "";
    stream.on("response.output_text.delta", (e) => {
      text += e.delta;
    });
    const final = await stream.finalResponse();
    expect(text).toBe(`${NARRATION}\n\n${ANSWER}`);
    expect(final.output_text).toBe(text);
    expect(final.usage?.total_tokens).toBe(PROMPT_TOKENS + 119);
  });

  it("a failed turn, not streaming: 502 with the agent's code", async () => {
    agentEnv.FAKE_CLAUDE_SCENARIO = "error-during-execution";
    const err = await client.responses.create({ model: AGENT, input: "go" }).catch((e) => e);
    expect(err).toBeInstanceOf(APIError);
    expect(err.status).toBe(502);
    expect(err.code).toBe("error_during_execution");
  });
});

describe("ai + @ai-sdk/openai (its default model calls the Responses API)", () => {
  const openai = () => createOpenAI({ baseURL: `${s.url}/v1`, apiKey: KEY });

  it("generateText: the text, usage with the cache reads", async () => {
    const r = await generateText({ model: openai()(AGENT), prompt: "why?" });
    expect(r.text).toBe(`${NARRATION}\n\n${ANSWER}`);
    expect(r.usage.inputTokens).toBe(PROMPT_TOKENS);
    expect(r.usage.inputTokenDetails.cacheReadTokens).toBe(36000);
  });

  it("streamText, then a second turn with the first's messages: it resumes the same session", async () => {
    const first = streamText({ model: openai()(AGENT), prompt: "why?" });
    expect(await first.text).toBe(`${NARRATION}\n\n${ANSWER}`);
    const messages: ModelMessage[] = [{ role: "user", content: "why?" }, ...(await first.response).messages, { role: "user", content: "and the fix?" }];
    const second = streamText({ model: openai()(AGENT), messages });
    await second.text;
    const starts = await recordedStarts(record);
    expect(starts).toHaveLength(2);
    expect(flagOf(starts[1]!.argv, "--resume")).toBe(flagOf(starts[0]!.argv, "--session-id"));
    expect(starts[1]!.argv[1]).toBe("and the fix?");
  });

  it("a failed turn surfaces as an error", async () => {
    agentEnv.FAKE_CLAUDE_SCENARIO = "auth-failure";
    const r = streamText({ model: openai()(AGENT), prompt: "hello", onError: () => {} });
    let failed = false;
    for await (const part of r.fullStream) if (part.type === "error") failed = true;
    expect(failed).toBe(true);
  });
});
