// POST /api/messages: who may talk to the bot (spec: Authentication, "Team-chat inbound";
// Team-chat scope), against a fixture bot platform on loopback whose OpenID metadata and JWKS
// come from a key generated in the test. A valid token runs the turn; every bad token is 401 and
// nothing runs; keys are refreshed on an unknown kid; sovereign clouds are refused; the route
// exists only when configured, and SERVICE_API_KEYS do not apply to it.
import { afterAll, beforeAll, beforeEach, describe, expect, it, setSystemTime } from "bun:test";
import { join } from "node:path";
import { logger, setLogLevel } from "../src/common/logger";
import { bearerAuth } from "../src/common/middleware/bearer-auth";
import { createOpenApiApp } from "../src/common/openapi-app";
import { createOrchestratorApp } from "../src/orchestrator/app";
import { loadOrchestratorConfig } from "../src/orchestrator/config";
import { createCompanionSync } from "../src/orchestrator/repos/companions";
import { createTeamChatDeps, exceptTeamChat, TEAMCHAT_PATH, type TeamChatDeps } from "../src/orchestrator/routes/teamchat";
import { checkServiceUrl, tenantTokenUrl } from "../src/orchestrator/teamchat/cloud";
import { SigningKeys } from "../src/orchestrator/teamchat/signing-keys";
import { APP_ID, type BotPlatform, startBotPlatform } from "./fixtures/bot-platform";
import { makeHub, recordedStarts, tempHome } from "./support/agent-mode";
import { SERVICE_KEY, startTeamChatServer, type TeamChatServer } from "./support/teamchat";

type Json = Record<string, any>;

let t: Awaited<ReturnType<typeof tempHome>>;
let hubUrl: string;
let platform: BotPlatform;
let s: TeamChatServer;
const agentEnv: Record<string, string | undefined> = {};
let record = "";

beforeAll(async () => {
  t = await tempHome("teamchat-auth-");
  hubUrl = await makeHub(join(t.home, "hub"));
  platform = await startBotPlatform();
  s = await startTeamChatServer({ home: t.home, hubUrl, platform, agentEnv });
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

describe("POST /api/messages: inbound tokens", () => {
  it("a valid platform token runs the turn: 202 at once, then the answer in the chat", async () => {
    const activity = platform.activity({ text: "What failed?" });
    const res = await s.post(activity, await platform.sign());
    expect(res.status).toBe(202);
    const [answer] = await platform.waitForMessages(1, activity.conversation.id);
    expect(answer!.text).toBe("Hello! The build passes on main.");
    expect(answer!.replyToId).toBe(activity.id);
    const starts = await recordedStarts(record);
    expect(starts).toHaveLength(1);
    expect(starts[0]!.argv[1]).toBe("What failed?");
  });

  const BAD: Array<[string, (p: BotPlatform) => Promise<string | null> | string | null, RegExp]> = [
    ["no Authorization header", () => null, /missing bearer token/],
    ["a bearer that is not a JWT", () => "not-a-jwt", /not accepted/],
    ["a bad signature (a key the platform does not publish, under its kid)", (p) => p.sign({ stranger: true }), /signature does not verify/],
    ["the wrong issuer", (p) => p.sign({ issuer: "https://sts.windows.net/evil/" }), /issuer/],
    ["the wrong audience (another bot's app id)", (p) => p.sign({ audience: "11111111-2222-3333-4444-555555555555" }), /audience/],
    ["an expired token (beyond the 5-minute skew)", (p) => p.sign({ expiresIn: -600 }), /expired/],
    [
      "a serviceurl claim that is not the activity's serviceUrl",
      (p) => p.sign({ serviceUrl: "https://smba.trafficmanager.net/elsewhere/" }),
      /serviceurl claim/,
    ],
    ["no serviceurl claim", (p) => p.sign({ claims: { serviceurl: undefined } }), /no serviceurl claim/],
    ["a kid the platform never published", (p) => p.sign({ kid: "never-published" }), /not one the bot platform publishes/],
    ["an unsigned token (alg none)", (p) => p.unsigned(), /RS256|not accepted/],
  ];

  for (const [name, token, why] of BAD) {
    it(`answers 401 for ${name}, and nothing runs or is sent`, async () => {
      const sentBefore = platform.activities.length;
      const tokensBefore = platform.tokenRequests.length;
      const activity = platform.activity();
      const res = await s.post(activity, await token(platform));
      expect(res.status).toBe(401);
      const body = (await res.json()) as Json;
      expect(body.error.code).toBe("unauthorized");
      expect(body.error.message).toMatch(why);
      // Whatever the bot had started would be among its background work: wait for all of it.
      await s.teamChat.bot.idle();
      expect(await recordedStarts(record)).toHaveLength(0);
      expect(platform.activities.length).toBe(sentBefore);
      expect(platform.tokenRequests.length).toBe(tokensBefore);
    });
  }

  it("a token within the 5-minute clock skew is accepted", async () => {
    const res = await s.post(platform.activity(), await platform.sign({ expiresIn: -120 }));
    expect(res.status).toBe(202);
  });

  it("a key the platform rotated in is fetched when a token names its kid", async () => {
    const fetches = platform.keyFetches;
    await platform.rotateKey();
    const activity = platform.activity();
    expect((await s.post(activity, await platform.sign())).status).toBe(202);
    expect(platform.keyFetches).toBe(fetches + 1);
    await platform.waitForMessages(1, activity.conversation.id);
    // Known now: no fetch for the next one.
    expect((await s.post(platform.activity(), await platform.sign())).status).toBe(202);
    expect(platform.keyFetches).toBe(fetches + 1);
  });

  it("unknown kids refetch the keys at most once per cooldown", async () => {
    const keys = new SigningKeys({ metadataUrl: platform.metadataUrl, unknownKidCooldownMs: 60_000 });
    const known = JSON.parse(atob((await platform.sign()).split(".")[0]!)).kid;
    const before = platform.keyFetches;
    await keys.key(known, "msteams");
    await expect(keys.key("made-up-1", "msteams")).rejects.toThrow(/not one the bot platform publishes/);
    await expect(keys.key("made-up-2", "msteams")).rejects.toThrow(/not one the bot platform publishes/);
    expect(platform.keyFetches).toBe(before + 1);
    // Once the cooldown has passed, an unknown kid fetches the keys again — once.
    try {
      setSystemTime(new Date(Date.now() + 61_000));
      await expect(keys.key("made-up-3", "msteams")).rejects.toThrow(/not one the bot platform publishes/);
      await expect(keys.key("made-up-4", "msteams")).rejects.toThrow(/not one the bot platform publishes/);
      expect(platform.keyFetches).toBe(before + 2);
    } finally {
      setSystemTime();
    }
  });

  it("without TEAMCHAT_OWNER_OBJECT_ID any authenticated user is answered", async () => {
    const activity = platform.activity({ aadObjectId: "99999999-0000-4000-8000-000000000123" });
    expect((await s.post(activity, await platform.sign())).status).toBe(202);
    const [m] = await platform.waitForMessages(1, activity.conversation.id);
    expect(m!.text).toBe("Hello! The build passes on main.");
    expect(await recordedStarts(record)).toHaveLength(1);
  });

  it("OpenID metadata whose jwks_uri is a sovereign cloud is refused: its keys are never fetched", async () => {
    const metadata = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => Response.json({ issuer: "https://api.botframework.us", jwks_uri: "https://login.botframework.azure.us/v1/.well-known/keys" }),
    });
    try {
      const keys = new SigningKeys({ metadataUrl: `http://127.0.0.1:${metadata.port}/v1/.well-known/openidconfiguration` });
      await expect(keys.key("any", "msteams")).rejects.toThrow(/sovereign cloud/);
    } finally {
      metadata.stop(true);
    }
  });

  it("a key not endorsed for the activity's channel is refused", async () => {
    const activity = { ...platform.activity(), channelId: "slack" };
    const res = await s.post(activity, await platform.sign());
    expect(res.status).toBe(401);
    expect(((await res.json()) as Json).error.message).toContain("not endorsed for channel slack");
  });
});

describe("sovereign clouds and service URLs", () => {
  it("an activity whose serviceUrl is a sovereign cloud is refused (403) before anything is sent", async () => {
    const serviceUrl = "https://smba.infra.gov.teams.microsoft.us/";
    const tokens = platform.tokenRequests.length;
    const res = await s.post(platform.activity({ serviceUrl }), await platform.sign({ serviceUrl }));
    expect(res.status).toBe(403);
    expect(((await res.json()) as Json).error).toMatchObject({ code: "service_url_not_allowed", message: expect.stringContaining("sovereign cloud") });
    await s.teamChat.bot.idle();
    expect(await recordedStarts(record)).toHaveLength(0);
    expect(platform.tokenRequests.length).toBe(tokens);
  });

  it("a serviceUrl off the platform's hosts is refused unless listed", async () => {
    const serviceUrl = "https://attacker.example/";
    const res = await s.post(platform.activity({ serviceUrl }), await platform.sign({ serviceUrl }));
    expect(res.status).toBe(403);
    expect(((await res.json()) as Json).error.message).toContain("TEAMCHAT_ALLOWED_SERVICE_HOSTS");
  });

  it("the bot's token goes only to listed hosts: the same live platform under an unlisted name gets nothing", async () => {
    // TEAMCHAT_ALLOWED_SERVICE_HOSTS is 127.0.0.1; "localhost" reaches the very same fixture server.
    const serviceUrl = platform.serviceUrl.replace("127.0.0.1", "localhost");
    expect(serviceUrl).toContain("localhost");
    const sent = platform.activities.length;
    const tokens = platform.tokenRequests.length;
    const res = await s.post(platform.activity({ serviceUrl }), await platform.sign({ serviceUrl }));
    expect(res.status).toBe(403);
    expect(((await res.json()) as Json).error.code).toBe("service_url_not_allowed");
    await s.teamChat.bot.idle();
    expect(platform.activities.length).toBe(sent);
    expect(platform.tokenRequests.length).toBe(tokens);
    expect(await recordedStarts(record)).toHaveLength(0);
    // Listed, it is answered: the refusal was about the host, nothing else.
    const ok = platform.activity();
    expect((await s.post(ok, await platform.sign())).status).toBe(202);
    expect((await platform.waitForMessages(1, ok.conversation.id))[0]!.text).toBe("Hello! The build passes on main.");
  });

  it("service URLs: platform hosts over https, listed hosts, plain http only on a listed loopback host, never sovereign", () => {
    expect(checkServiceUrl("https://smba.trafficmanager.net/amer/", []).hostname).toBe("smba.trafficmanager.net");
    expect(checkServiceUrl("https://europe.webchat.botframework.com/", []).hostname).toBe("europe.webchat.botframework.com");
    expect(checkServiceUrl("https://bots.example.com/x/", ["example.com"]).hostname).toBe("bots.example.com");
    expect(() => checkServiceUrl("http://smba.trafficmanager.net/amer/", [])).toThrow(/not https/);
    expect(() => checkServiceUrl("http://127.0.0.1:3978/", [])).toThrow(/TEAMCHAT_ALLOWED_SERVICE_HOSTS/);
    expect(checkServiceUrl("http://localhost:3978/", ["localhost"]).port).toBe("3978");
    expect(() => checkServiceUrl("https://smba.trafficmanager.net.evil.example/", [])).toThrow(/not a bot platform host/);
    for (const sovereign of [
      "https://smba.infra.dod.teams.microsoft.us/",
      "https://frontend.botapi.msteams.chinacloudapi.cn/",
      "https://api.botframework.azure.us/",
    ]) {
      expect(() => checkServiceUrl(sovereign, ["teams.microsoft.us", "chinacloudapi.cn", "azure.us"])).toThrow(/sovereign cloud/);
    }
  });

  it("a sovereign-cloud authority, issuer or token URL in the config stops start-up", async () => {
    const agentMode = s.agentMode;
    const base = { TEAMCHAT_APP_ID: APP_ID, TEAMCHAT_APP_PASSWORD: "x" };
    for (const env of [
      { TEAMCHAT_OPENID_METADATA_URL: "https://login.botframework.azure.us/v1/.well-known/openidconfiguration" },
      { TEAMCHAT_ISSUER: "https://api.botframework.us" },
      { TEAMCHAT_TOKEN_URL: "https://login.microsoftonline.us/botframework.com/oauth2/v2.0/token" },
      { TEAMCHAT_TOKEN_URL: "https://login.chinacloudapi.cn/botframework.com/oauth2/v2.0/token" },
      { TEAMCHAT_SCOPE: "https://api.botframework.azure.cn/.default" },
    ]) {
      const config = loadOrchestratorConfig({ ...base, ...env }, t.home);
      expect(() => createTeamChatDeps(config, s.kv, agentMode)).toThrow(/commercial cloud only/);
    }
  });

  it("the platform's public values are the defaults, each overridable; history 20 messages for 86400 s, flush at 2000 characters", () => {
    const def = loadOrchestratorConfig({}, t.home);
    expect([def.teamchatOpenIdMetadataUrl, def.teamchatIssuer, def.teamchatTokenUrl, def.teamchatScope]).toEqual([
      "https://login.botframework.com/v1/.well-known/openidconfiguration",
      "https://api.botframework.com",
      "https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token",
      "https://api.botframework.com/.default",
    ]);
    expect([def.teamchatMaxMessages, def.teamchatConversationTtl, def.teamchatFlushChars, def.voiceTimeout]).toEqual([20, 86400, 2000, 120]);
    const set = loadOrchestratorConfig(
      {
        TEAMCHAT_OPENID_METADATA_URL: "https://m.example/o",
        TEAMCHAT_ISSUER: "https://i.example",
        TEAMCHAT_TOKEN_URL: "https://t.example/tok",
        TEAMCHAT_SCOPE: "s",
      },
      t.home,
    );
    expect([set.teamchatOpenIdMetadataUrl, set.teamchatIssuer, set.teamchatTokenUrl, set.teamchatScope]).toEqual([
      "https://m.example/o",
      "https://i.example",
      "https://t.example/tok",
      "s",
    ]);
  });

  it("the token URL is the tenant's when TEAMCHAT_TENANT_ID is set", () => {
    const def = loadOrchestratorConfig({}, t.home).teamchatTokenUrl;
    expect(def).toBe("https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token");
    expect(tenantTokenUrl(def, undefined)).toBe(def);
    expect(tenantTokenUrl(def, "72f988bf-0000-4000-8000-000000000000")).toBe(
      "https://login.microsoftonline.com/72f988bf-0000-4000-8000-000000000000/oauth2/v2.0/token",
    );
  });
});

describe("the route exists only when configured", () => {
  it("without TEAMCHAT_APP_PASSWORD (or without the app id) there is no team chat", () => {
    expect(createTeamChatDeps(loadOrchestratorConfig({ TEAMCHAT_APP_ID: APP_ID }, t.home), s.kv, s.agentMode)).toBeUndefined();
    expect(createTeamChatDeps(loadOrchestratorConfig({ TEAMCHAT_APP_PASSWORD: "x" }, t.home), s.kv, s.agentMode)).toBeUndefined();
    expect(createTeamChatDeps(loadOrchestratorConfig({}, t.home), s.kv, s.agentMode)).toBeUndefined();
  });

  it("with team chat configured but agent mode off, start-up stops with a message saying what to set", () => {
    const config = loadOrchestratorConfig({ TEAMCHAT_APP_ID: APP_ID, TEAMCHAT_APP_PASSWORD: "x" }, t.home);
    expect(() => createTeamChatDeps(config, s.kv, undefined)).toThrow(/SERVICE_HUB_URL and HUB_AGENT/);
  });

  it("is in the live API document, without the bearer requirement", async () => {
    const doc = (await (await fetch(`${s.url}/openapi.json`)).json()) as Json;
    expect(doc.paths["/api/messages"].post.security).toEqual([]);
  });

  it("on the running service, SERVICE_API_KEYS do not apply to the webhook but still guard every other route", async () => {
    const chat = (headers: Record<string, string>) =>
      fetch(`${s.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ model: "x", messages: [{ role: "user", content: "hi" }] }),
      });
    expect((await chat({})).status).toBe(401);
    // The service key is no platform token: the webhook wants the JWT, whatever else is sent.
    expect((await s.post(platform.activity(), SERVICE_KEY)).status).toBe(401);
    const activity = platform.activity();
    expect((await s.post(activity, await platform.sign())).status).toBe(202);
    await platform.waitForMessages(1, activity.conversation.id);
  });

  it("without team chat the service has no /api/messages: 404, and not in its API document", async () => {
    const config = loadOrchestratorConfig({ SERVICE_OTEL_ENABLED: "false" }, t.home);
    const app = createOrchestratorApp({
      config,
      jobs: {} as never,
      profiles: { list: () => ({ profiles: [], errors: [] }) } as never,
      companions: createCompanionSync(config),
      agentMode: s.agentMode,
    });
    const res = await app.request(TEAMCHAT_PATH, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(platform.activity()),
    });
    expect(res.status).toBe(404);
    const doc = (await (await app.request("/openapi.json")).json()) as Json;
    expect(doc.paths["/v1/chat/completions"]).toBeDefined();
    expect(doc.paths[TEAMCHAT_PATH]).toBeUndefined();
  });

  it("SERVICE_API_KEYS do not apply to the webhook (it has the platform's JWT), and still apply everywhere else", async () => {
    const edge = (teamChat: TeamChatDeps | undefined) => ({
      logTag: "test",
      maxBodyBytes: 1024,
      authorize: exceptTeamChat(bearerAuth({ tokens: ["k"], openPaths: [], whenUnset: { mode: "open" } }), teamChat),
    });
    const app = createOpenApiApp(undefined, edge(s.teamChat));
    app.post(TEAMCHAT_PATH, (c) => c.body(null, 202));
    app.post("/jobs", (c) => c.body(null, 201));
    expect((await app.request(TEAMCHAT_PATH, { method: "POST" })).status).toBe(202);
    expect((await app.request("/jobs", { method: "POST" })).status).toBe(401);
    // Team chat off: the path is like any other.
    const off = createOpenApiApp(undefined, edge(undefined));
    off.post(TEAMCHAT_PATH, (c) => c.body(null, 202));
    expect((await off.request(TEAMCHAT_PATH, { method: "POST" })).status).toBe(401);
  });
});

describe("TEAMCHAT_SKIP_JWT_VALIDATION=1", () => {
  it("accepts activities without a token and says so loudly", async () => {
    // Warnings go straight to stderr (common/logger.ts): read them there.
    const warnings: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    const level = logger.level;
    setLogLevel(Math.max(level, 1));
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      warnings.push(String(chunk));
      return write(chunk, ...rest);
    }) as typeof process.stderr.write;
    const home = await tempHome("teamchat-skip-");
    const p = await startBotPlatform();
    let server: TeamChatServer | undefined;
    try {
      server = await startTeamChatServer({
        home: home.home,
        hubUrl,
        platform: p,
        agentEnv,
        configEnv: { TEAMCHAT_SKIP_JWT_VALIDATION: "1" },
      });
      const activity = p.activity();
      expect((await server.post(activity, null)).status).toBe(202);
      await p.waitForMessages(1, activity.conversation.id);
      expect(warnings.some((w) => w.includes("WARN") && w.includes("TEAMCHAT_SKIP_JWT_VALIDATION") && w.includes("WITHOUT checking"))).toBe(true);
      // Replies still go only where they may: a sovereign or unknown service URL is refused.
      expect((await server.post(p.activity({ serviceUrl: "https://smba.infra.gov.teams.microsoft.us/" }), null)).status).toBe(403);
    } finally {
      process.stderr.write = write;
      setLogLevel(level);
      await server?.close();
      p.stop();
      await home.cleanup();
    }
  });
});
