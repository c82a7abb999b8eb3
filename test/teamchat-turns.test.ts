// Team chat end to end over loopback: a fixture bot platform posts activities to POST
// /api/messages with valid tokens, the fixture agent replays recorded Claude Code turns, and the
// platform's activities endpoint records what the bot sent back. Rendering per the spec's table
// (Events, "Team-chat rendering") and coalescing, visibility per conversation, slash tokens, the
// owner filter and one-to-one scope, the busy rule, sessions and history in the key-value store.
import { afterAll, beforeAll, beforeEach, describe, expect, it, setSystemTime } from "bun:test";
import { existsSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { createClient } from "redis";
import { encodeKeyName } from "../src/common/kv/key-filename";
import { safeFileName } from "../src/orchestrator/chat/visibility";
import { REPLIES } from "../src/orchestrator/teamchat/bot";
import { Connector, SendError } from "../src/orchestrator/teamchat/connector";
import { OutboundToken } from "../src/orchestrator/teamchat/outbound-token";
import { APP_ID, APP_PASSWORD, type BotPlatform, SCOPE, startBotPlatform } from "./fixtures/bot-platform";
import { AGENT, flagOf, makeHub, recordedStarts, scenarioLines, tempHome, writeScenario } from "./support/agent-mode";
import { requireServer, TEST_REDIS_URL } from "./support/servers";
import { OWNER, startTeamChatServer, type TeamChatServer } from "./support/teamchat";
import { until } from "./support/until";

const redisUp = await requireServer("Redis");

let t: Awaited<ReturnType<typeof tempHome>>;
let platform: BotPlatform;
let s: TeamChatServer;
const agentEnv: Record<string, string | undefined> = {};
let record = "";

const THINKING = "The user wants the failing test. I should run the suite first.";
const FINAL = "One test fails: `cancel > sends SIGTERM`. The runner never forwards the signal.";

beforeAll(async () => {
  t = await tempHome("teamchat-turns-");
  const hubUrl = await makeHub(join(t.home, "hub"));
  platform = await startBotPlatform();
  s = await startTeamChatServer({
    home: t.home,
    hubUrl,
    platform,
    agentEnv,
    configEnv: {
      TEAMCHAT_OWNER_OBJECT_ID: OWNER,
      TEAMCHAT_FLUSH_CHARS: "100",
      TEAMCHAT_MAX_MESSAGES: "3",
      TEAMCHAT_CONVERSATION_TTL: "600",
    },
  });
});

afterAll(async () => {
  await s.close();
  platform.stop();
  await t.cleanup();
});

beforeEach(() => {
  record = join(t.home, `record-${crypto.randomUUID()}.jsonl`);
  for (const k of Object.keys(agentEnv)) delete agentEnv[k];
  Object.assign(agentEnv, { PATH: process.env.PATH, FAKE_CLAUDE_SCENARIO: "text-only", FAKE_CLAUDE_RECORD: record });
});

/** Sends a message in a conversation (a new one unless given) with a valid token. */
async function say(text: string, o: Parameters<BotPlatform["activity"]>[0] = {}) {
  const activity = platform.activity({ text, ...o });
  const res = await s.post(activity, await platform.sign());
  return { res, activity, conv: activity.conversation.id as string };
}

/** Until no turn is in progress (a turn ends a moment after its last reply: the history is written then). */
const settled = () => until(() => s.teamChat.bot.running === 0, { what: "the turns to end" });

const texts = (conv: string) => platform.messages(conv).map((m) => m.text);

describe("rendering (spec: Team-chat rendering)", () => {
  it("with /show-all: typing, then reasoning, narration, tool call, tool result and the final answer, each its own message, in order", async () => {
    agentEnv.FAKE_CLAUDE_SCENARIO = "thinking-tool-final";
    const { res, conv } = await say("/show-all What is failing?");
    expect(res.status).toBe(202);
    await platform.waitForMessages(5, conv);
    await s.teamChat.bot.idle();
    const sent = platform.activities.filter((a) => a.conversationId === conv).map((a) => a.activity);
    expect(sent[0]!.type).toBe("typing");
    expect(texts(conv)).toEqual([
      `**Reasoning:**\n\n${THINKING}`,
      "Let me run the tests first.",
      '**Tool call:** Bash\n\n```json\n{\n  "command": "bun test test/jobs.test.ts",\n  "description": "Run the job tests"\n}\n```',
      "**Tool result:**\n\n```\n(fail) cancel > sends SIGTERM [12.01ms]\n 41 pass\n 1 fail\n```",
      FINAL,
    ]);
    for (const m of platform.messages(conv)) {
      expect(m.textFormat).toBe("markdown");
      expect(m.conversation.id).toBe(conv);
      expect(m.recipient.aadObjectId).toBe(OWNER);
    }
    // The slash token never reached the agent.
    expect((await recordedStarts(record))[0]!.argv[1]).toBe("What is failing?");
  });

  it("by default only the narration and the final answer are shown", async () => {
    agentEnv.FAKE_CLAUDE_SCENARIO = "thinking-tool-final";
    const { conv } = await say("What is failing?");
    await platform.waitForMessages(2, conv);
    await s.teamChat.bot.idle();
    expect(texts(conv)).toEqual(["Let me run the tests first.", FINAL]);
  });

  it("tool errors say so, and a failed turn ends with **Error:**", async () => {
    agentEnv.FAKE_CLAUDE_SCENARIO = "tool-error";
    const a = await say("/show-tools Deploy it");
    const msgs = await platform.waitForMessages(3, a.conv);
    expect(msgs.some((m) => m.text.startsWith("**Tool result (error):**\n\n```"))).toBe(true);

    agentEnv.FAKE_CLAUDE_SCENARIO = "auth-failure";
    const b = await say("Hello?");
    const [err] = await platform.waitForMessages(1, b.conv);
    expect(err!.text).toStartWith("**Error:** ");
    expect(err!.text).toContain("Invalid API key");
  });

  it("thinking deltas are coalesced: one message per TEAMCHAT_FLUSH_CHARS (100 here), never one per token", async () => {
    const base = JSON.parse((await scenarioLines("text-only")).at(-1)!);
    const ev = (event: unknown) => JSON.stringify({ type: "stream_event", event, session_id: base.session_id, parent_tool_use_id: null });
    const deltas = Array.from({ length: 20 }, (_, i) => `step ${String(i).padStart(2, "0")} of the careful plan; `);
    const file = await writeScenario(t.home, "long-thinking", [
      ev({ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }),
      ...deltas.map((d) => ev({ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: d } })),
      ev({ type: "content_block_stop", index: 0 }),
      ev({ type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }),
      ev({ type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Planned." } }),
      ev({ type: "content_block_stop", index: 1 }),
      JSON.stringify({ ...base, result: "Planned." }),
    ]);
    agentEnv.FAKE_CLAUDE_SCENARIO = file;
    const { conv } = await say("/show-thinking Plan it");
    await until(() => texts(conv).includes("Planned."), { what: "the final answer" });
    const reasoning = texts(conv).filter((m) => m.startsWith("**Reasoning:**"));
    // 20 deltas of 29 characters: flushed at 116 characters (4 deltas) → 5 messages, the last at the block's end.
    expect(reasoning).toHaveLength(5);
    expect(reasoning.map((m) => m.replace("**Reasoning:**\n\n", "")).join(" ")).toBe(deltas.join("").trim());
    expect(texts(conv).at(-1)).toBe("Planned.");
  });
});

describe("visibility and slash tokens, per conversation", () => {
  it("toggles in one chat do not change another, and are kept under {HUB_AGENT}:teamchat:{conversation_id}", async () => {
    agentEnv.FAKE_CLAUDE_SCENARIO = "thinking-tool-final";
    const a = await say("/show-all /hide-narration");
    const [status] = await platform.waitForMessages(1, a.conv);
    expect(status!.text).toStartWith("**Stream settings for this chat:** thinking on · tools on · narration off · final on");
    expect(await recordedStarts(record)).toHaveLength(0);

    await settled();
    const again = await say("What is failing?", { conversationId: a.conv });
    expect(again.res.status).toBe(202);
    await platform.waitForMessages(5, a.conv);
    const b = await say("What is failing?");
    await platform.waitForMessages(2, b.conv);
    await s.teamChat.bot.idle();
    expect(
      texts(a.conv)
        .slice(1)
        .map((m) => m.split("\n")[0]),
    ).toEqual(["**Reasoning:**", "**Tool call:** Bash", "**Tool result:**", FINAL]);
    expect(texts(b.conv)).toEqual(["Let me run the tests first.", FINAL]);

    const file = join(s.config.stateDir, "stream_config", `${safeFileName(`${AGENT}:teamchat:${a.conv}`)}.json`);
    expect(JSON.parse(await readFile(file, "utf8"))).toMatchObject({ show_thinking: true, show_tools: true, show_narration: false });
    expect(existsSync(join(s.config.stateDir, "stream_config", `${AGENT}.json`))).toBe(false);
  });

  it("/stream-status answers with the chat's settings and spawns nothing", async () => {
    const { conv } = await say("/stream-status");
    const [m] = await platform.waitForMessages(1, conv);
    expect(m!.text).toBe(
      '**Stream settings for this chat:** thinking off · tools off · narration on · final on\n\n`{"show_thinking":false,"show_tools":false,"show_text":true,"show_narration":true,"show_final":true}`',
    );
    expect(await recordedStarts(record)).toHaveLength(0);
  });
});

describe("who is served (spec: owner filter, Team-chat scope)", () => {
  it("another user gets a polite refusal and no turn", async () => {
    const { res, conv } = await say("Deploy main", { aadObjectId: "99999999-0000-4000-8000-000000000bad" });
    expect(res.status).toBe(202);
    const [m] = await platform.waitForMessages(1, conv);
    expect(m!.text).toBe(REPLIES.notOwner);
    await s.teamChat.bot.idle();
    expect(await recordedStarts(record)).toHaveLength(0);
  });

  it("the owner is matched on aadObjectId whatever its case", async () => {
    const { conv } = await say("Hi", { aadObjectId: OWNER.toUpperCase() });
    const [m] = await platform.waitForMessages(1, conv);
    expect(m!.text).toBe("Hello! The build passes on main.");
  });

  it("group chats and channels get a clear reply and no turn", async () => {
    const g = await say("Deploy main", { conversationType: "groupChat" });
    const c = await say("Deploy main", { conversationType: "channel" });
    expect((await platform.waitForMessages(1, g.conv))[0]!.text).toBe(REPLIES.notPersonal);
    expect((await platform.waitForMessages(1, c.conv))[0]!.text).toBe(REPLIES.notPersonal);
    await s.teamChat.bot.idle();
    expect(await recordedStarts(record)).toHaveLength(0);
  });

  it("activities that are not messages are acknowledged (200) and nothing is sent; a re-delivered message is not run twice", async () => {
    const update = platform.activity({ type: "conversationUpdate" });
    expect((await s.post(update, await platform.sign())).status).toBe(200);
    const { activity, conv } = await say("Hi");
    await platform.waitForMessages(1, conv);
    expect((await s.post(activity, await platform.sign())).status).toBe(200);
    await s.teamChat.bot.idle();
    expect(platform.activities.filter((a) => a.conversationId === update.conversation.id)).toHaveLength(0);
    expect(await recordedStarts(record)).toHaveLength(1);
  });
});

describe("turns (spec: Errors, Limits)", () => {
  it("POST /api/messages answers 202 before the turn has run (the platform retries slow webhooks)", async () => {
    const activity = platform.activity({ text: "What failed?" });
    const conv = activity.conversation.id as string;
    // No reply of this conversation is delivered until release(): a route that waited for the turn would never answer.
    const release = platform.hold((a) => a.conversation?.id === conv);
    try {
      const res = await s.post(activity, await platform.sign());
      expect(res.status).toBe(202);
      expect(platform.activities.filter((a) => a.conversationId === conv)).toHaveLength(0);
    } finally {
      release();
    }
    expect((await platform.waitForMessages(1, conv))[0]!.text).toBe("Hello! The build passes on main.");
  });

  it("a message while a turn runs gets the still-working reply and starts nothing; the running turn still answers", async () => {
    const conv = `a:1busy${crypto.randomUUID().replaceAll("-", "")}`;
    // The first turn lasts until its typing activity is delivered, which the platform holds.
    const release = platform.hold((a) => a.type === "typing" && a.conversation?.id === conv);
    try {
      const first = await say("What failed?", { conversationId: conv });
      expect(first.res.status).toBe(202);
      const second = await say("Are you there?", { conversationId: conv });
      expect(second.res.status).toBe(202);
      const [busy] = await platform.waitForMessages(1, conv);
      expect(busy!.text).toBe(REPLIES.stillWorking);
      expect(busy!.replyToId).toBe(second.activity.id);
    } finally {
      release();
    }
    const msgs = await platform.waitForMessages(2, conv);
    expect(msgs.map((m) => m.text)).toEqual([REPLIES.stillWorking, "Hello! The build passes on main."]);
    await s.teamChat.bot.idle();
    const starts = await recordedStarts(record);
    expect(starts).toHaveLength(1);
    expect(starts[0]!.argv[1]).toBe("What failed?");
    // Once the turn has ended, the next message runs.
    await say("And now?", { conversationId: conv });
    await platform.waitForMessages(3, conv);
    expect(await recordedStarts(record)).toHaveLength(2);
  });

  it("the agent session resumes across messages, and the history (TEAMCHAT_MAX_MESSAGES) is kept TEAMCHAT_CONVERSATION_TTL in the store", async () => {
    const a = await say("What failed?");
    await platform.waitForMessages(1, a.conv);
    await settled();
    const b = await say("And why?", { conversationId: a.conv });
    expect(b.res.status).toBe(202);
    await platform.waitForMessages(2, a.conv);
    const [first, second] = await recordedStarts(record);
    const session = flagOf(first!.argv, "--session-id")!;
    expect(flagOf(second!.argv, "--resume")).toBe(session);
    expect(second!.argv[1]).toBe("And why?");

    const key = `teamchat:history:${AGENT}:${a.conv}`;
    // The list is capped at 3, so its length alone says nothing: wait for the second answer to be in.
    const answered = async () => {
      const entries = (await s.kv.listRange(key)).map((e) => JSON.parse(e) as { role: string; text: string });
      return entries.length === 3 && entries[1]?.text === "And why?" && entries[2]?.role === "assistant";
    };
    await until(answered, { what: "the history" });
    const history = (await s.kv.listRange(key)).map((e) => JSON.parse(e));
    // Four messages so far, three kept (TEAMCHAT_MAX_MESSAGES=3 here).
    expect(history.map((h) => [h.role, h.text])).toEqual([
      ["assistant", "Hello! The build passes on main."],
      ["user", "And why?"],
      ["assistant", "Hello! The build passes on main."],
    ]);
    const entry = JSON.parse(await readFile(join(s.config.stateDir, "kv", `${encodeKeyName(key)}.json`), "utf8"));
    expect(entry.expiresAt - Date.now()).toBeGreaterThan(590_000);
    expect(entry.expiresAt - Date.now()).toBeLessThanOrEqual(600_000);
  });

  it("without a session to resume (mapping gone), the first turn is given the stored history", async () => {
    const a = await say("What failed?");
    await platform.waitForMessages(1, a.conv);
    await settled();
    await rm(join(s.config.stateDir, "agent_sessions.json"), { force: true });
    await say("And why?", { conversationId: a.conv });
    await platform.waitForMessages(2, a.conv);
    const [, second] = await recordedStarts(record);
    expect(flagOf(second!.argv, "--session-id")).toBeDefined();
    expect(second!.argv[1]).toBe(
      "<conversation_so_far>\nUser: What failed?\n\nAssistant: Hello! The build passes on main.\n</conversation_so_far>\n\nAnd why?",
    );
  });
});

describe("outbound (spec: Authentication, Team-chat outbound)", () => {
  let p: BotPlatform;
  let o: TeamChatServer;
  let home: Awaited<ReturnType<typeof tempHome>>;

  beforeAll(async () => {
    home = await tempHome("teamchat-outbound-");
    p = await startBotPlatform();
    o = await startTeamChatServer({ home: home.home, hubUrl: await makeHub(join(home.home, "hub")), platform: p, agentEnv });
  });
  afterAll(async () => {
    await o.close();
    p.stop();
    await home.cleanup();
  });

  const send = async (text: string, conversationId?: string) => {
    const activity = p.activity({ text, conversationId });
    expect((await o.post(activity, await p.sign())).status).toBe(202);
    return activity.conversation.id as string;
  };

  it("one token request serves many replies, sent with the client credentials and scope", async () => {
    agentEnv.FAKE_CLAUDE_SCENARIO = "thinking-tool-final";
    const conv = await send("/show-all Go");
    await p.waitForMessages(5, conv);
    const other = await send("/show-all Go again");
    await p.waitForMessages(5, other);
    expect(p.activities.length).toBeGreaterThanOrEqual(12);
    expect(p.tokenRequests).toHaveLength(1);
    expect(p.tokenRequests[0]!.path).toBe("/botframework.com/oauth2/v2.0/token");
    expect(p.tokenRequests[0]!.form).toMatchObject({
      grant_type: "client_credentials",
      client_id: o.config.teamchatAppId,
      scope: "https://api.botframework.com/.default",
    });
    const tokens = new Set(p.activities.map((a) => a.authorization));
    expect(tokens.size).toBe(1);
    // {serviceUrl}/v3/conversations/{id}/activities, the service URL's regional path kept.
    for (const a of p.activities) expect(a.path).toBe(`/amer/v3/conversations/${encodeURIComponent(a.conversationId)}/activities`);
  });

  it("the token is cached until shortly before it expires (5 minutes), then fetched again", async () => {
    const token = new OutboundToken({ tokenUrl: p.tokenUrl, appId: APP_ID, appPassword: APP_PASSWORD, scope: SCOPE });
    p.tokenExpiresIn = 900;
    const start = Date.now();
    try {
      const first = await token.get();
      const requests = p.tokenRequests.length;
      setSystemTime(new Date(start + 590_000));
      expect(await token.get()).toBe(first);
      expect(p.tokenRequests.length).toBe(requests);
      setSystemTime(new Date(start + 610_000));
      expect(await token.get()).not.toBe(first);
      expect(p.tokenRequests.length).toBe(requests + 1);
    } finally {
      setSystemTime();
      p.tokenExpiresIn = 3599;
    }
  });

  it("a reply refused with 401 again after a new token is given up: one refresh, no loop", async () => {
    const token = new OutboundToken({ tokenUrl: p.tokenUrl, appId: APP_ID, appPassword: APP_PASSWORD, scope: SCOPE });
    const connector = new Connector({ token, allowedHosts: ["127.0.0.1"] });
    await token.get();
    const before = p.tokenRequests.length;
    p.failNext({ status: 401 }, { status: 401 });
    const err = await connector.send(p.serviceUrl, "a:1refused", { type: "message", text: "hi" }).catch((e) => e);
    expect(err).toBeInstanceOf(SendError);
    expect(err.status).toBe(401);
    expect(p.tokenRequests.length).toBe(before + 1);
    // The next reply goes out with the new token.
    await connector.send(p.serviceUrl, "a:1refused", { type: "message", text: "hi again" });
    expect(p.messages("a:1refused").map((m) => m.text)).toEqual(["hi again"]);
    expect(p.tokenRequests.length).toBe(before + 1);
  });

  it("a 401 from the platform gets a new token and the reply is sent again, once", async () => {
    const before = p.tokenRequests.length;
    p.revokeTokens();
    const conv = await send("Hi");
    const msgs = await p.waitForMessages(1, conv);
    await o.teamChat.bot.idle();
    expect(msgs.map((m) => m.text)).toEqual(["Hello! The build passes on main."]);
    expect(p.tokenRequests.length).toBe(before + 1);
  });

  it("a 429 is honoured: the send waits Retry-After, then goes through, order kept", async () => {
    p.failNext({ status: 429, headers: { "Retry-After": "1" } });
    const started = Date.now();
    const conv = await send("Hi");
    const [m] = await p.waitForMessages(1, conv);
    expect(m!.text).toBe("Hello! The build passes on main.");
    const first = p.activities.find((a) => a.conversationId === conv)!;
    expect(first.activity.type).toBe("typing");
    expect(first.at - started).toBeGreaterThanOrEqual(950);
  });

  it("a single-tenant bot gets its token from its tenant's endpoint", async () => {
    const tenant = "72f988bf-0000-4000-8000-000000000000";
    const h = await tempHome("teamchat-tenant-");
    const q = await startBotPlatform();
    const server = await startTeamChatServer({
      home: h.home,
      hubUrl: await makeHub(join(h.home, "hub")),
      platform: q,
      agentEnv,
      configEnv: { TEAMCHAT_TENANT_ID: tenant },
    });
    try {
      const activity = q.activity();
      expect((await server.post(activity, await q.sign())).status).toBe(202);
      await q.waitForMessages(1, activity.conversation.id);
      expect(q.tokenRequests.map((r) => r.path)).toEqual([`/${tenant}/oauth2/v2.0/token`]);
    } finally {
      await server.close();
      q.stop();
      await h.cleanup();
    }
  });
});

describe.skipIf(!redisUp)("history and visibility on Redis", () => {
  it("the history list is capped and expires after TEAMCHAT_CONVERSATION_TTL; the chat's toggles are kept under {HUB_AGENT}:teamchat:{conversation_id}", async () => {
    const h = await tempHome("teamchat-redis-");
    const p = await startBotPlatform();
    const prefix = `brain-stack-test:${crypto.randomUUID()}`;
    const server = await startTeamChatServer({
      home: h.home,
      hubUrl: await makeHub(join(h.home, "hub")),
      platform: p,
      agentEnv,
      kv: "redis",
      redisPrefix: prefix,
      configEnv: { TEAMCHAT_MAX_MESSAGES: "2", TEAMCHAT_CONVERSATION_TTL: "900" },
    });
    const r = createClient({ url: TEST_REDIS_URL });
    await r.connect();
    try {
      const first = p.activity({ text: "/show-tools What failed?" });
      expect((await server.post(first, await p.sign())).status).toBe(202);
      const conv = first.conversation.id as string;
      await p.waitForMessages(1, conv);
      await until(() => server.teamChat.bot.running === 0, { what: "the turn to end" });
      expect((await server.post(p.activity({ text: "And why?", conversationId: conv }), await p.sign())).status).toBe(202);
      await p.waitForMessages(2, conv);
      await until(() => server.teamChat.bot.running === 0, { what: "the turn to end" });

      const key = `${prefix}:teamchat:history:${AGENT}:${conv}`;
      const list = (await r.lRange(key, 0, -1)).map((e) => JSON.parse(e));
      expect(list.map((e) => [e.role, e.text])).toEqual([
        ["user", "And why?"],
        ["assistant", "Hello! The build passes on main."],
      ]);
      const ttl = await r.ttl(key);
      expect(ttl).toBeGreaterThan(890);
      expect(ttl).toBeLessThanOrEqual(900);
      expect(JSON.parse((await r.get(`${prefix}:stream_config:${AGENT}:teamchat:${conv}`))!)).toMatchObject({ show_tools: true });
    } finally {
      for await (const keys of r.scanIterator({ MATCH: `${prefix}:*` })) if (keys.length > 0) await r.del(keys);
      await r.close();
      await server.close();
      p.stop();
      await h.cleanup();
    }
  });
});
