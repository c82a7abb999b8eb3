// Agent mode beyond one turn, through real HTTP on loopback: conversation resolution (4 tiers)
// and user scoping, sessions resumed across requests and across a restart, sticky visibility
// across a restart, slash tokens, the busy rule, the correlation id, /v1/models, /completions
// and the OpenAI error bodies. State on the file fallback and on a real Redis.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "bun:test";
import { existsSync } from "node:fs";
import { chmod, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createParser } from "eventsource-parser";
import OpenAI, { RateLimitError } from "openai";
import { createClient } from "redis";
import { createOrchestratorApp } from "../src/orchestrator/app";
import { contentHash } from "../src/orchestrator/chat/resolution";
import type { ChatOpening } from "../src/orchestrator/chat/service";
import type { TurnEvent } from "../src/orchestrator/chat/turn-events";
import { loadOrchestratorConfig } from "../src/orchestrator/config";
import { createCompanionSync } from "../src/orchestrator/repos/companions";
import { transcriptPath } from "../src/orchestrator/telemetry/transcript";
import { makeRemote } from "./fixtures/git-remote";
import {
  AGENT,
  type AgentModeServer,
  FAKE_CLAUDE,
  flagOf,
  type KvKind,
  makeHub,
  readSse,
  recordedStarts,
  startAgentModeServer,
  tempHome,
} from "./support/agent-mode";
import { startOrchestrator } from "./support/orchestrator-process";
import { requireServer, TEST_REDIS_URL } from "./support/servers";
import { until } from "./support/until";

const redisUp = await requireServer("Redis");
const KINDS: KvKind[] = redisUp ? ["file", "redis"] : ["file"];

type Json = Record<string, any>;
const user = (content: string) => ({ role: "user", content });

function harness(kv: KvKind, configEnv: Record<string, string> = {}) {
  const h = {
    home: "",
    hubUrl: "",
    redisPrefix: `brain-stack-test:${crypto.randomUUID()}`,
    s: undefined as unknown as AgentModeServer,
    env: {} as Record<string, string | undefined>,
    record: "",
    cleanup: async () => {},
    start: () => startAgentModeServer({ home: h.home, hubUrl: h.hubUrl, kv, redisPrefix: h.redisPrefix, agentEnv: h.env, configEnv }),
    /** A new service on the same home and key-value store, as after a pod restart. */
    async restart() {
      await h.s.close();
      h.s = await h.start();
    },
    chat(body: Json, headers: Record<string, string> = {}) {
      return h.s.call("/v1/chat/completions", { json: { model: AGENT, ...body }, headers });
    },
    starts: () => recordedStarts(h.record),
  };
  beforeAll(async () => {
    const t = await tempHome("chat-sessions-");
    h.home = t.home;
    h.hubUrl = await makeHub(join(t.home, "hub"));
    h.s = await h.start();
    h.cleanup = async () => {
      await h.s.close();
      if (kv === "redis") {
        const r = createClient({ url: TEST_REDIS_URL });
        await r.connect();
        for await (const keys of r.scanIterator({ MATCH: `${h.redisPrefix}:*` })) if (keys.length > 0) await r.del(keys);
        await r.close();
      }
      await t.cleanup();
    };
  });
  afterAll(() => h.cleanup());
  beforeEach(() => {
    for (const k of Object.keys(h.env)) delete h.env[k];
    h.record = join(h.home, `record-${crypto.randomUUID()}.jsonl`);
    Object.assign(h.env, { PATH: process.env.PATH, FAKE_CLAUDE_SCENARIO: "text-only", FAKE_CLAUDE_RECORD: h.record });
  });
  return h;
}

async function redisTtl(prefix: string, key: string): Promise<number> {
  const r = createClient({ url: TEST_REDIS_URL });
  await r.connect();
  try {
    return await r.ttl(`${prefix}:${key}`);
  } finally {
    await r.close();
  }
}

for (const kv of KINDS) {
  describe(`sessions and visibility on the ${kv} store`, () => {
    const h = harness(kv);

    it("a first turn gets --session-id and the conversation; the next one --resume and only the last user message", async () => {
      const conv = crypto.randomUUID();
      const first = await h.chat({ messages: [user("What failed?")] }, { "x-conversation-id": conv });
      expect(first.status).toBe(200);
      const session = first.headers.get("x-session-id")!;
      const second = await h.chat(
        { messages: [user("What failed?"), { role: "assistant", content: "Hello! The build passes on main." }, user("And why?")] },
        { "x-conversation-id": conv },
      );
      expect(second.status).toBe(200);
      expect(second.headers.get("x-session-id")).toBe(session);
      const [a, b] = await h.starts();
      expect(flagOf(a!.argv, "--session-id")).toBe(session);
      expect(a!.argv[1]).toBe("What failed?");
      expect(flagOf(b!.argv, "--resume")).toBe(session);
      expect(b!.argv).not.toContain("--session-id");
      expect(b!.argv[1]).toBe("And why?");

      const key = `conv:${AGENT}:anonymous:${conv}`;
      const file = JSON.parse(await readFile(join(h.home, ".service", "agent_sessions.json"), "utf8"));
      expect(file[key].session_id).toBe(session);
      if (kv === "redis") {
        expect(await h.s.kv.get(key)).toBe(session);
        const ttl = await redisTtl(h.redisPrefix, key);
        expect(ttl).toBeGreaterThan(86_000);
        expect(ttl).toBeLessThanOrEqual(86_400);
      }
    });

    it("a session is resumed after a restart", async () => {
      const conv = crypto.randomUUID();
      const first = await h.chat({ messages: [user("Remember 42.")] }, { "x-conversation-id": conv });
      const session = first.headers.get("x-session-id")!;
      await first.text();
      await h.restart();
      if (kv === "redis") {
        // Redis alone must carry it: the file fallback is gone.
        await rm(join(h.home, ".service", "agent_sessions.json"));
      }
      const again = await h.chat(
        { messages: [user("Remember 42."), { role: "assistant", content: "ok" }, user("What number?")] },
        { "x-conversation-id": conv },
      );
      expect(again.status).toBe(200);
      const starts = await h.starts();
      expect(flagOf(starts[1]!.argv, "--resume")).toBe(session);
      expect(starts[1]!.argv[1]).toBe("What number?");
    });

    it("a mapping whose transcript is gone (another pod, a wiped home) starts a new session with the whole conversation", async () => {
      const conv = crypto.randomUUID();
      const first = await h.chat({ messages: [user("Remember 42.")] }, { "x-conversation-id": conv });
      const old = first.headers.get("x-session-id")!;
      await first.text();
      const transcript = transcriptPath(h.s.config, h.s.deps.agent.packageDir, old);
      expect(existsSync(transcript)).toBe(true);
      await rm(transcript);
      const again = await h.chat(
        { messages: [user("Remember 42."), { role: "assistant", content: "Noted." }, user("What number?")] },
        { "x-conversation-id": conv },
      );
      expect(again.status).toBe(200);
      await again.text();
      const fresh = again.headers.get("x-session-id")!;
      expect(fresh).not.toBe(old);
      const [, second] = await h.starts();
      expect(second!.argv).not.toContain("--resume");
      expect(flagOf(second!.argv, "--session-id")).toBe(fresh);
      expect(second!.argv[1]).toBe("<conversation_so_far>\nUser: Remember 42.\n\nAssistant: Noted.\n</conversation_so_far>\n\nWhat number?");
      // The mapping now names the new session.
      expect(JSON.parse(await readFile(join(h.home, ".service", "agent_sessions.json"), "utf8"))[`conv:${AGENT}:anonymous:${conv}`].session_id).toBe(fresh);
    });

    it("visibility toggles are sticky per agent and survive a restart", async () => {
      const set = await h.chat({ stream: true, messages: [user("/show-tools /show-thinking")] });
      const r = await readSse(set);
      expect(JSON.parse(r.chunks[1]!.choices[0].delta.content)).toMatchObject({ show_tools: true, show_thinking: true });
      await h.restart();
      if (kv === "redis") await rm(join(h.home, ".service", "stream_config", `${AGENT}.json`));
      else expect(JSON.parse(await readFile(join(h.home, ".service", "stream_config", `${AGENT}.json`), "utf8")).show_tools).toBe(true);
      const status = await h.chat({ messages: [user("/stream-status")] });
      const body = (await status.json()) as Json;
      expect(JSON.parse(body.choices[0].message.content)).toEqual({
        show_thinking: true,
        show_tools: true,
        show_text: true,
        show_narration: true,
        show_final: true,
        live_text: false,
      });
      // Back to the defaults for the other tests.
      await (await h.chat({ messages: [user("/hide-tools /hide-thinking")] })).text();
    });
  });
}

describe("conversation resolution", () => {
  const h = harness("file");

  const resolved = async (body: Json, headers: Record<string, string> = {}) => {
    const res = await h.chat({ messages: [user(`hello ${crypto.randomUUID()}`)], ...body }, headers);
    expect(res.status).toBe(200);
    await res.text();
    return { tier: res.headers.get("x-conversation-tier"), id: res.headers.get("x-conversation-id"), session: res.headers.get("x-session-id") };
  };

  for (const header of ["X-Conversation-Id", "X-LibreChat-Conversation-Id", "X-OpenWebUI-Chat-Id", "X-Open-WebUI-Chat-Id"]) {
    it(`tier 1: the ${header} header`, async () => {
      expect(await resolved({}, { [header]: "chat-1234" })).toMatchObject({ tier: "header", id: "chat-1234" });
    });
  }

  it("tier 1: X-Conversation-Id wins over the chat clients' headers", async () => {
    expect(await resolved({}, { "X-OpenWebUI-Chat-Id": "owui", "X-Conversation-Id": "ours" })).toMatchObject({ id: "ours" });
  });

  it("tier 2: body.metadata.conversation_id", async () => {
    expect(await resolved({ metadata: { conversation_id: "meta-7" } })).toMatchObject({ tier: "body", id: "meta-7" });
  });

  it("tier 2: a UUID-shaped body.user", async () => {
    const id = crypto.randomUUID();
    expect(await resolved({ user: id })).toMatchObject({ tier: "body", id });
  });

  it("tier 3: the same system prompt and first user message continue one conversation", async () => {
    const first = `Plan the rollout ${crypto.randomUUID()}`;
    const messages = [{ role: "system", content: "You are terse." }, user(first)];
    const a = await h.chat({ messages });
    const b = await h.chat({ messages: [...messages, { role: "assistant", content: "ok" }, user("Go on")] });
    await a.text();
    await b.text();
    expect(a.headers.get("x-conversation-tier")).toBe("content_hash");
    expect(a.headers.get("x-conversation-id")).toBe(contentHash("You are terse.", first));
    expect(a.headers.get("x-conversation-id")).toMatch(/^[0-9a-f]{16}$/);
    expect(b.headers.get("x-session-id")).toBe(a.headers.get("x-session-id"));
    const starts = await h.starts();
    expect(starts[1]!.argv).toContain("--resume");
  });

  it("a non-UUID body.user scopes the conversation instead of naming it", async () => {
    const r = await resolved({ user: "user-42" }, { "X-Conversation-Id": "shared" });
    const other = await resolved({ user: "user-43" }, { "X-Conversation-Id": "shared" });
    expect(r.session).not.toBe(other.session);
  });

  it("user scoping: the same conversation id from two users is two sessions (X-User-Id, X-OpenWebUI-User-Id)", async () => {
    const conv = { "X-Conversation-Id": `team-${crypto.randomUUID()}` };
    const alice = await resolved({}, { ...conv, "X-User-Id": "alice" });
    const bob = await resolved({}, { ...conv, "X-User-Id": "bob" });
    const carol = await resolved({}, { ...conv, "X-OpenWebUI-User-Id": "carol" });
    const aliceAgain = await resolved({}, { ...conv, "X-User-Id": "alice" });
    expect(new Set([alice.session, bob.session, carol.session]).size).toBe(3);
    expect(aliceAgain.session).toBe(alice.session);
    const starts = await h.starts();
    expect(starts.map((s) => (s.argv.includes("--resume") ? "resume" : "new"))).toEqual(["new", "new", "new", "resume"]);
    const file = JSON.parse(await readFile(join(h.home, ".service", "agent_sessions.json"), "utf8"));
    expect(Object.keys(file)).toContain(`conv:${AGENT}:alice:${conv["X-Conversation-Id"]}`);
    expect(Object.keys(file)).toContain(`conv:${AGENT}:carol:${conv["X-Conversation-Id"]}`);
  });
});

describe("conversation resolution with SERVICE_CONV_HASH_FALLBACK=false", () => {
  const h = harness("file", { SERVICE_CONV_HASH_FALLBACK: "false" });

  it("tier 4: without an id the request is ephemeral: a new session each time, nothing stored", async () => {
    const messages = [user("Same opening every time")];
    const a = await h.chat({ messages });
    const b = await h.chat({ messages });
    await a.text();
    await b.text();
    expect(a.headers.get("x-conversation-tier")).toBe("ephemeral");
    expect(a.headers.get("x-session-id")).not.toBe(b.headers.get("x-session-id"));
    const starts = await h.starts();
    expect(starts.every((s) => s.argv.includes("--session-id"))).toBe(true);
    expect(existsSync(join(h.home, ".service", "agent_sessions.json"))).toBe(false);
  });
});

describe("slash tokens", () => {
  const h = harness("file");
  afterEach(async () => {
    await (await h.chat({ messages: [user("/hide-thinking /hide-tools /show-narration /show-final")] })).text();
  });

  it("/stream-status answers inline with the config and spawns nothing", async () => {
    const r = await readSse(await h.chat({ stream: true, messages: [user("/stream-status")] }));
    expect(r.chunks.map((c) => c.choices[0].x_service_event_type ?? c.choices[0].finish_reason ?? "role")).toEqual(["role", "stream_config", "stop"]);
    expect(JSON.parse(r.chunks[1]!.choices[0].delta.content)).toEqual({
      show_thinking: false,
      show_tools: false,
      show_text: true,
      show_narration: true,
      show_final: true,
      live_text: false,
    });
    expect(r.done).toBe(true);
    expect(await h.starts()).toEqual([]);
  });

  it("/stream-status with other words still spawns nothing", async () => {
    const res = await h.chat({ messages: [user("what is /stream-status showing?")] });
    expect(JSON.parse(((await res.json()) as Json).choices[0].message.content).show_final).toBe(true);
    expect(await h.starts()).toEqual([]);
  });

  it("a message of tokens only changes the config and spawns nothing", async () => {
    const res = await h.chat({ messages: [user("/hide-all")] });
    expect(JSON.parse(((await res.json()) as Json).choices[0].message.content)).toEqual({
      show_thinking: false,
      show_tools: false,
      show_text: true,
      show_narration: false,
      show_final: true,
      live_text: false,
    });
    expect(await h.starts()).toEqual([]);
  });

  it("tokens anywhere are stripped; unknown slash words and paths reach the agent untouched", async () => {
    const res = await h.chat({ messages: [user("Run /usr/bin/env /show-tools then /deploy it /show-thinking please")] });
    expect(res.status).toBe(200);
    await res.text();
    const [start] = await h.starts();
    expect(start!.argv[1]).toBe("Run /usr/bin/env then /deploy it please");
  });

  it("a toggle applies to the answer it comes with, and every chunk is filtered by it", async () => {
    h.env.FAKE_CLAUDE_SCENARIO = "thinking-tool-final";
    const kinds = async (content: string) =>
      (await readSse(await h.chat({ stream: true, messages: [user(content)] }, { "x-conversation-id": crypto.randomUUID() }))).chunks.map(
        (c) => c.choices[0].x_service_event_type ?? (c.choices[0].finish_reason ? "stop" : "role"),
      );
    expect(await kinds("/show-tools go")).toEqual(["role", "narration", "tool_use", "tool_result", "final", "stop"]);
    expect(await kinds("/hide-narration go")).toEqual(["role", "tool_use", "tool_result", "final", "stop"]);
    expect(await kinds("/show-thinking /hide-tools /hide-final go")).toEqual(["role", "thinking", "thinking", "stop"]);
    expect(await kinds("/hide-all go")).toEqual(["role", "final", "stop"]);
  });
});

describe("one running turn per conversation", () => {
  const h = harness("file");

  it("a second request while a turn runs gets 429 with Retry-After and an OpenAI error, and starts nothing", async () => {
    h.env.FAKE_CLAUDE_DELAY_MS = "60";
    const conv = { "x-conversation-id": crypto.randomUUID() };
    const running = await h.chat({ stream: true, messages: [user("slow one")] }, conv);
    expect(running.status).toBe(200);
    const busy = await h.chat({ messages: [user("slow one"), { role: "assistant", content: "…" }, user("and?")] }, conv);
    expect(busy.status).toBe(429);
    expect(busy.headers.get("retry-after")).toBe("5");
    expect(await busy.json()).toEqual({
      error: { message: expect.stringContaining("still running"), type: "rate_limit_error", param: null, code: "conversation_busy" },
    });
    const sdk = new OpenAI({ baseURL: `${h.s.url}/v1`, apiKey: "test-key", maxRetries: 0 });
    const err = await sdk.chat.completions.create({ model: AGENT, messages: [{ role: "user", content: "x" }] }, { headers: conv }).catch((e) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    // Another conversation is not held up.
    const other = await h.chat({ messages: [user("other")] }, { "x-conversation-id": crypto.randomUUID() });
    expect(other.status).toBe(200);
    await other.text();

    expect((await readSse(running)).done).toBe(true);
    expect(await h.starts()).toHaveLength(2);
    // Once it has answered, the conversation takes the next message.
    delete h.env.FAKE_CLAUDE_DELAY_MS;
    const next = await h.chat({ messages: [user("slow one"), { role: "assistant", content: "…" }, user("and?")] }, conv);
    expect(next.status).toBe(200);
  });
});

describe("a conversation frees when its agent exits (issue 36 part 4)", () => {
  const h = harness("file");

  it("the next message starts a turn once the agent has exited, however little of the last turn has been read", async () => {
    const conv = crypto.randomUUID();
    const request = (text: string) => ({ messages: [user(text)], header: (name: string) => (name === "x-conversation-id" ? conv : undefined) });
    const first = await h.s.deps.chat.open(request("hi"));
    if (first.kind !== "turn") throw new Error("expected a turn");
    // One read of the turn, then nothing: a client that is slow, or gone, must not hold the conversation.
    const read = await first.events.next();
    const second = await until(
      async () => {
        try {
          return await h.s.deps.chat.open(request("hi again"));
        } catch (err) {
          if ((err as { code?: string }).code === "conversation_busy") return undefined;
          throw err;
        }
      },
      { what: "the conversation to take the next message after the agent exited" },
    );
    expect(second.kind).toBe("turn");
    // Both turns read to their ends: each is answered in full.
    const finals = async (o: ChatOpening, seen: TurnEvent[] = []) => {
      if (o.kind === "turn") for await (const ev of o.events) seen.push(ev);
      return seen.filter((e) => e.type === "final").map((e) => e.text);
    };
    expect(await finals(first, read.done ? [] : [read.value])).toEqual(["Hello! The build passes on main."]);
    expect(await finals(second)).toEqual(["Hello! The build passes on main."]);
  });
});

describe("correlation id, models, /completions and errors", () => {
  const h = harness("file", { MAX_BODY_BYTES: "65536" });

  it("the non-streaming path hands the agent SERVICE_CORRELATION_ID and echoes it; the streaming path does not", async () => {
    const plain = await h.chat({ messages: [user("hi")] }, { "x-conversation-id": crypto.randomUUID() });
    const generated = plain.headers.get("x-correlation-id")!;
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);
    await plain.text();
    const given = await h.chat({ messages: [user("hi")] }, { "x-conversation-id": crypto.randomUUID(), "x-correlation-id": "relay-77" });
    expect(given.headers.get("x-correlation-id")).toBe("relay-77");
    await given.text();
    const streamed = await h.chat({ stream: true, messages: [user("hi")] }, { "x-conversation-id": crypto.randomUUID() });
    expect(streamed.headers.get("x-correlation-id")).toBeNull();
    await streamed.text();
    const starts = await h.starts();
    expect(starts.map((s) => s.env.SERVICE_CORRELATION_ID)).toEqual([generated, "relay-77", undefined]);
  });

  it("GET /v1/relay/{correlation_id} replays a non-streaming turn's events as SSE, resumes after Last-Event-ID, ends with done", async () => {
    const id = `relay-${crypto.randomUUID()}`;
    const reply = await h.chat({ messages: [user("hi")] }, { "x-conversation-id": crypto.randomUUID(), "x-correlation-id": id });
    const answer = ((await reply.json()) as Json).choices[0].message.content;
    const read = async (headers: Record<string, string> = {}) => {
      const res = await h.s.call(`/v1/relay/${id}`, { headers });
      expect(res.headers.get("content-type")).toContain("text/event-stream");
      const events: Array<{ id?: string; event?: string; data: string }> = [];
      createParser({ onEvent: (e) => events.push(e) }).feed(await res.text());
      return events;
    };
    const all = await read();
    expect(all.at(-1)!.event).toBe("done");
    expect(all.map((e) => e.id)).toEqual(all.map((_, i) => String(i + 1))); // sequence numbers on files (Redis: test/relay.test.ts)
    expect(JSON.parse(all.find((e) => e.event === "final")!.data).text).toBe(answer);
    const rest = await read({ "last-event-id": all[1]!.id! });
    expect(rest.map((e) => e.id)).toEqual(all.slice(2).map((e) => e.id));
    const unknown = await h.s.call(`/v1/relay/${crypto.randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as Json).error.code).toBe("relay_not_found");
  });

  it("GET /v1/models lists the agent (and the openai client reads it)", async () => {
    const res = await h.s.call("/v1/models");
    expect(await res.json()).toEqual({ object: "list", data: [{ id: AGENT, object: "model", created: expect.any(Number), owned_by: "brain-stack" }] });
    const sdk = new OpenAI({ baseURL: `${h.s.url}/v1`, apiKey: "test-key", maxRetries: 0 });
    const ids: string[] = [];
    for await (const m of sdk.models.list()) ids.push(m.id);
    expect(ids).toEqual([AGENT]);
    expect((await sdk.models.retrieve(AGENT)).id).toBe(AGENT);
    const missing = await h.s.call("/v1/models/gpt-4o");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as Json).error).toMatchObject({ type: "not_found_error", code: "model_not_found" });
  });

  it("answers 401 in OpenAI's error shape without a valid key", async () => {
    for (const [path, init] of [
      ["/v1/chat/completions", { method: "POST", body: JSON.stringify({ messages: [user("hi")] }), headers: { "content-type": "application/json" } }],
      ["/v1/models", {}],
    ] as const) {
      const res = await fetch(`${h.s.url}${path}`, init);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: { message: expect.any(String), type: "authentication_error", param: null, code: "unauthorized" } });
    }
    const sdk = new OpenAI({ baseURL: `${h.s.url}/v1`, apiKey: "wrong", maxRetries: 0 });
    expect(await sdk.models.list().catch((e) => e.status)).toBe(401);
    expect(await h.starts()).toEqual([]);
  });

  it("answers 400 in OpenAI's error shape for a bad body, naming the field", async () => {
    const empty = await h.chat({ messages: [] });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as Json).error).toMatchObject({ type: "invalid_request_error", param: "messages", code: "invalid_request" });
    const lastNotUser = await h.chat({ messages: [user("hi"), { role: "assistant", content: "hello" }] });
    expect(lastNotUser.status).toBe(400);
    expect(((await lastNotUser.json()) as Json).error.message).toContain("role user");
    const notJson = await h.s.call("/v1/chat/completions", { method: "POST", body: "{", headers: { "content-type": "application/json" } });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as Json).error.type).toBe("invalid_request_error");
    expect(await h.starts()).toEqual([]);
  });

  it("every other /v1 error is in OpenAI's shape too: unknown path, wrong method, body too large; nothing spawned", async () => {
    const unknown = await h.s.call("/v1/embeddings", { json: { input: "x" } });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({
      error: { message: expect.stringContaining("/v1/embeddings"), type: "not_found_error", param: null, code: "not_found" },
    });
    const method = await h.s.call("/v1/chat/completions", { method: "GET" });
    expect(method.status).toBe(404);
    expect(((await method.json()) as Json).error).toMatchObject({ type: "not_found_error", param: null });
    const big = await h.chat({ messages: [user("x".repeat(70_000))] });
    expect(big.status).toBe(413);
    expect(await big.json()).toEqual({ error: { message: expect.any(String), type: "invalid_request_error", param: null, code: "payload_too_large" } });
    const sdk = new OpenAI({ baseURL: `${h.s.url}/v1`, apiKey: "test-key", maxRetries: 0 });
    const err = await sdk.chat.completions.create({ model: AGENT, messages: [] }).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.param).toBe("messages");
    expect(await h.starts()).toEqual([]);
  });

  it("POST /completions: {message} → {reply, conversation_id, session_id, usage}; the conversation_id continues it", async () => {
    const first = await h.s.call("/completions", { json: { message: "What failed?" } });
    expect(first.status).toBe(200);
    const a = (await first.json()) as Json;
    expect(a).toEqual({
      reply: "Hello! The build passes on main.",
      conversation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      session_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      usage: { prompt_tokens: 38066, completion_tokens: 14, total_tokens: 38080, prompt_tokens_details: { cached_tokens: 36000 } },
    });
    const second = (await (await h.s.call("/completions", { json: { message: "And why?", conversation_id: a.conversation_id } })).json()) as Json;
    expect(second.session_id).toBe(a.session_id);
    const starts = await h.starts();
    expect(flagOf(starts[1]!.argv, "--resume")).toBe(a.session_id);
    expect(starts[1]!.argv[1]).toBe("And why?");
    expect(starts[0]!.env.SERVICE_CORRELATION_ID).toBe(first.headers.get("x-correlation-id")!);

    h.env.FAKE_CLAUDE_SCENARIO = "auth-failure";
    const failed = await h.s.call("/completions", { json: { message: "hi" } });
    expect(failed.status).toBe(502);
    expect(((await failed.json()) as Json).error).toMatchObject({ code: "authentication_failed" });
    const bad = await h.s.call("/completions", { json: { message: "  " } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).error).toMatchObject({ code: "invalid_request", details: [{ path: "message" }] });
  });
});

describe("agent mode off", () => {
  it("the routes still exist: chat answers 503 agent_mode_off in OpenAI's shape, the model list is empty", async () => {
    const t = await tempHome("agent-mode-off-");
    const config = loadOrchestratorConfig({ SERVICE_API_KEYS: "test-key" }, t.home);
    // No agentMode in the deps: the app still registers the chat routes, answering 503.
    const app = createOrchestratorApp({ config, jobs: {} as never, profiles: {} as never, companions: createCompanionSync(config) });
    const auth = { authorization: "Bearer test-key", "content-type": "application/json" };
    try {
      const chat = await app.request("/v1/chat/completions", { method: "POST", headers: auth, body: JSON.stringify({ messages: [user("hi")] }) });
      expect(chat.status).toBe(503);
      expect(await chat.json()).toEqual({
        error: { message: expect.stringContaining("HUB_AGENT"), type: "server_error", param: null, code: "agent_mode_off" },
      });
      const completions = await app.request("/completions", { method: "POST", headers: auth, body: JSON.stringify({ message: "hi" }) });
      expect(completions.status).toBe(503);
      expect(((await completions.json()) as Json).error.code).toBe("agent_mode_off");
      const responses = await app.request("/v1/responses", { method: "POST", headers: auth, body: JSON.stringify({ input: "hi" }) });
      expect(responses.status).toBe(503);
      expect(((await responses.json()) as Json).error.code).toBe("agent_mode_off");
      expect(await (await app.request("/v1/models", { headers: auth })).json()).toEqual({ object: "list", data: [] });
    } finally {
      await t.cleanup();
    }
  });
});

describe("chat turns and the jobs gate (the real service process)", () => {
  it("a turn answers (and is logged) while SERVICE_MAX_PARALLEL_JOBS jobs hold every slot and more wait in the queue", async () => {
    const t = await tempHome("chat-gate-");
    const packageDir = join(t.home, "package");
    // The agent CLI: jobs (run in their own directory) hang until cancelled; chat turns (run in the package dir) answer.
    const wrapper = join(t.home, "claude-wrapper");
    await writeFile(wrapper, `#!/bin/sh\nif [ "$(pwd)" != "${packageDir}" ]; then export FAKE_CLAUDE_HANG=1; fi\nexec "${FAKE_CLAUDE}" "$@"\n`);
    await chmod(wrapper, 0o755);
    const hubUrl = await makeHub(join(t.home, "hub"));
    const o = await startOrchestrator({
      env: {
        SERVICE_MAX_PARALLEL_JOBS: "1",
        SERVICE_HUB_URL: hubUrl,
        HUB_AGENT: AGENT,
        SERVICE_CLONE_ROOT: join(t.home, "clones"),
        SERVICE_PACKAGE_DIR: packageDir,
        SERVICE_CLAUDE_BINARY: wrapper,
      },
    });
    try {
      const first = await o.submit({ task: "Explain until stopped" });
      const second = await o.submit({ task: "Explain afterwards" });
      await o.until(first.id, (j) => j.status === "running");
      await until(() => o.agentLog().some((e) => e.event === "start" && e.argv?.includes("Explain until stopped")));
      expect((await o.job(second.id)).status).toBe("queued");

      const conv = crypto.randomUUID();
      const res = await o.call("/v1/chat/completions", {
        method: "POST",
        json: { model: AGENT, messages: [user("Are you there?")] },
        headers: { "x-conversation-id": conv, "x-caller-agent": "triage-bot" },
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as Json).choices[0].message.content).toBe("Hello! The build passes on main.");
      // Each request logs conv_key, tier, agent, stateless (and the calling agent).
      await o.main.waitForOutput(`chat turn conv_key=conv:${AGENT}:anonymous:${conv} tier=header agent=${AGENT} stateless=false`);
      expect(o.main.output()).toMatch(new RegExp(`conv_key=conv:${AGENT}:anonymous:${conv} .* caller=triage-bot`));
      // The gate is as it was: the chat turn neither took nor freed a slot.
      expect((await o.job(first.id)).status).toBe("running");
      expect((await o.job(second.id)).status).toBe("queued");
      for (const id of [second.id, first.id]) await o.call(`/jobs/${id}`, { method: "DELETE" });
      await o.until(first.id, (j) => j.status !== "running");
    } finally {
      await o.stop("SIGKILL");
      await t.cleanup();
    }
  });
});

describe("jobs in agent mode (the real service process)", () => {
  it("refuses a job naming a repository with 409 agent_mode and clones nothing; a job without one runs", async () => {
    const t = await tempHome("agent-jobs-");
    const remote = makeRemote();
    const reposRoot = join(t.home, "repos");
    const o = await startOrchestrator({
      env: {
        SERVICE_HUB_URL: await makeHub(join(t.home, "hub")),
        HUB_AGENT: AGENT,
        SERVICE_CLONE_ROOT: join(t.home, "clones"),
        SERVICE_PACKAGE_DIR: join(t.home, "package"),
        SERVICE_REPOS_ROOT: reposRoot,
      },
    });
    try {
      const refused = await o.call("/jobs", { method: "POST", json: { task: "Fix the flaky test", repo_url: remote.url } });
      expect(refused.status).toBe(409);
      const body = (await refused.json()) as Json;
      expect(body.error.code).toBe("agent_mode");
      expect(body.error.message).toContain(AGENT);
      expect(body.error.details).toEqual([{ path: "repo_url", message: "not accepted in agent mode" }]);
      expect(existsSync(reposRoot)).toBe(false);
      expect(((await (await o.call("/jobs")).json()) as Json).jobs).toEqual([]);

      const job = await o.submit({ task: "Summarise the deployment checklist" });
      const done = await o.until(job.id, (j) => j.status !== "queued" && j.status !== "running");
      expect(done.status).toBe("succeeded");
      expect(existsSync(reposRoot)).toBe(false);
    } finally {
      await o.stop("SIGKILL");
      await t.cleanup();
    }
  });
});
