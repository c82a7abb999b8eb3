// Recall that reaches the agent (issue 35 parts 3 and 4), with the real Claude Code CLI against
// the fixture Messages API and the one-process stack: twenty lessons recorded over past months
// (none of those asked about among the feed's newest); a session's prompt worded differently
// from lesson 7 carries lesson 7 in the request the CLI sends for it, and the session's next
// prompt does not carry it again; a job whose task matches lesson 12 sends lesson 12 in its
// first request, and its record (GET /jobs/{id}, service-cli job) lists it; an agent-mode
// conversation's first turn carries the lesson its opening message bears on, its next turn not again.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AnthropicApi, startAnthropicApi, type Turn } from "./fixtures/anthropic-api";
import { AGENT, type AgentModeServer, makeHub, startAgentModeServer, tempHome } from "./support/agent-mode";
import { compiledClis, runCompiled } from "./support/cli";
import { type MainProcess, startMain, tempDir, untilJobEnds } from "./support/main-process";
import { OFFLINE_ENV, realClaude, realClaudeBinary, realClaudeServiceEnv } from "./support/real-claude";
import { until } from "./support/until";

const TOKEN = "recall-router-token";
let main: MainProcess;
let api: AnthropicApi;
let bin: string;

/** Twenty lessons on twenty subjects; 7 and 12 are the ones asked about. */
const LESSONS = [
  "Kafka consumers lag for a minute after a broker restart; do not page on it.",
  "The docs site builds with Hugo 0.120; newer versions break the shortcodes.",
  "Rotate the Stripe webhook secret in both the vault and the load balancer.",
  "Grafana dashboards are provisioned from the ops repository, not edited by hand.",
  "The mobile app caches feature flags for an hour; plan rollouts with that in mind.",
  "Terraform state for the analytics account is locked by the nightly plan at 02:00.",
  "The checkout suite flakes when the sandbox clock drifts: run chronyc makestep on the runner before it.",
  "Elasticsearch reindexing needs the replicas set to zero first, or it takes all night.",
  "Customer exports larger than 2 GB must go through the batch worker, not the API.",
  "The translation files are generated; edit the source strings in the CMS instead.",
  "Redis eviction policy on the session cache must stay volatile-lru.",
  "Releases to the frankfurt cluster need the registry mirror warmed first, or image pulls stall.",
  "The PDF renderer leaks memory on invoices with embedded fonts; restart it daily.",
  "Use the read replica for reporting queries; the primary cannot take the load.",
  "The iOS build needs Xcode 16.2 exactly; 16.3 changes the signing flow.",
  "SAML logins fail when the identity provider's certificate rolls; keep both certs listed.",
  "Cron jobs in the legacy box run in Pacific time, not UTC.",
  "The search autocomplete index is rebuilt hourly; new products appear late.",
  "Bulk email sends must stay under 50 per second or the provider throttles the domain.",
  "The audit log table is partitioned monthly; create next month's partition in advance.",
];
const lesson = (n: number) => LESSONS[n - 1]!;

/** Lessons 7 and 12 are months old, the rest recent: the feed's newest ten are 10, 11 and 13–20. */
const dayOf = (n: number) => (n === 7 ? "2026-03-04" : n === 12 ? "2026-04-15" : `2026-10-${String(n + 5).padStart(2, "0")}`);

const call = (base: string, path: string, body?: unknown, token?: string) =>
  fetch(`${base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const reply = (text: string): Turn => ({ content: [{ type: "text", text }] });
const text = (v: unknown) => JSON.stringify(v);
/** How often `needle` occurs in `hay`. */
const count = (hay: string, needle: string) => hay.split(needle).length - 1;

/** The agent-loop requests the fixture API received from the `from`th on. */
const scriptedSince = (from: number) => api.requests.slice(from).filter((r) => r.scripted);

beforeAll(async () => {
  bin = await compiledClis();
  api = await startAnthropicApi();
  main = await startMain(["--vault", join(tempDir("recall-vault"), "vault")], {
    KB_ROUTER_TOKEN: TOKEN,
    TICK_INTERVAL_SECONDS: "0",
    ROUTER_CLI_BINARY: join(bin, "router-cli"),
    MODEL_CLI_HOME_DIR: tempDir("recall-agent-home"),
    SERVICE_OTEL_ENABLED: "false",
    ...realClaudeServiceEnv(api.url),
  });
  for (let n = 1; n <= 20; n++) {
    const res = await call(main.routerUrl!, "/marker", { type: "lesson", content: lesson(n), attrs: { ts: `${dayOf(n)}T09:00:00Z`, source: "retro" } }, TOKEN);
    expect(res.status).toBe(201);
  }
  // A marker's lesson log is indexed soon after it is written.
  for (const words of ["chronyc makestep", "registry mirror warmed"])
    await until(async () => ((await (await call(main.routerUrl!, "/search", { query: words }, TOKEN)).json()) as any).hits.length > 0, {
      ms: 10_000,
      what: `a lesson holding "${words}" indexed`,
    });
  // Neither lesson asked about is in the feed: what carries them is recall.
  const feed = await (await call(main.routerUrl!, "/feed", undefined, TOKEN)).text();
  expect(feed).toContain(lesson(20));
  expect(feed).not.toContain(lesson(7));
  expect(feed).not.toContain(lesson(12));
}, 120_000);

afterAll(async () => {
  await main?.stop();
  api?.stop();
});

async function runClaude(home: string, env: Record<string, string>, cwd: string, prompt: string, extra: string[] = []): Promise<string> {
  const proc = Bun.spawn([realClaude({ baseUrl: "x", home }).binary, "-p", prompt, "--output-format", "stream-json", "--verbose", ...extra], {
    cwd,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`claude exited ${code}:\n${err}\n${out}`);
  return out
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .find((l) => l.type === "result").session_id;
}

describe("recall at the prompt", () => {
  it("a prompt worded differently from lesson 7 carries lesson 7 in its request, and the session's next prompt does not carry it again", async () => {
    api.setScript([reply("Looking into the checkout tests."), reply("Still on it.")]);
    const claude = realClaude({ baseUrl: api.url });
    writeFileSync(join(claude.home, ".claude", "settings.json"), "{}\n");
    const installed = await runCompiled("router-cli", ["install", "--brain-url", main.routerUrl!, "--token", TOKEN], { env: { HOME: claude.home } });
    expect(installed.code).toBe(0);
    const cwd = tempDir("recall-cwd");

    const before = api.requests.length;
    const prompt = "Our checkout tests keep timing out in the sandbox environment, can you fix them?";
    const sessionId = await runClaude(claude.home, claude.env, cwd, prompt);
    const [first] = scriptedSince(before);
    expect(text(first!.body)).toContain(prompt);
    // The hooks' context for this prompt (the CLI sends it as the last message) carries the lesson and its path.
    const context = text(first!.body.messages.at(-1));
    expect(context).toContain("UserPromptSubmit hook additional context");
    expect(context).toContain(lesson(7));
    expect(context).toContain("left/reference/lessons-2026-03-04.md");
    // Only what bears on the prompt: not the lesson on the frankfurt cluster.
    expect(text(first!.body)).not.toContain(lesson(12));

    const again = api.requests.length;
    const next = "The checkout sandbox tests still time out, look again";
    await runClaude(claude.home, claude.env, cwd, next, ["--resume", sessionId]);
    const [second] = scriptedSince(again);
    expect(text(second!.body.messages.at(-2))).toContain(next);
    // The context for the next prompt does not carry it again; the history holds it once, from the first prompt.
    expect(text(second!.body.messages.at(-1))).toContain("additional context");
    expect(text(second!.body.messages.at(-1))).not.toContain(lesson(7));
    expect(count(text(second!.body), lesson(7))).toBe(1);
  }, 180_000);
});

describe("recall at the task", () => {
  it("a job whose task matches lesson 12 sends lesson 12 in its first request, and its record lists it", async () => {
    api.setScript([reply("Release rolled out.")]);
    const before = api.requests.length;
    const orch = main.orchestratorUrl!;
    const submitted = await call(orch, "/jobs", { task: "Roll out the new release to the frankfurt cluster", profile: "code" });
    expect(submitted.status).toBe(202);
    const { id } = (await submitted.json()) as { id: string };
    const job = await untilJobEnds(main, async () => (await (await call(orch, `/jobs/${id}`)).json()) as Record<string, any>);
    expect(job.status).toBe("succeeded");
    const [first] = scriptedSince(before);
    expect(text(first!.body)).toContain(lesson(12));
    expect(count(text(first!.body), lesson(12))).toBe(1);
    // Chosen by the service for the task, before the agent started.
    expect(text(first!.body)).toContain("notes that may bear on this task");
    expect(text(first!.body)).not.toContain(lesson(7));
    expect(job.recall).toEqual([{ path: "left/reference/lessons-2026-04-15.md", title: "Lessons 2026-04-15", kind: "lesson" }]);

    const shown = await runCompiled("service-cli", ["job", id], { env: { HOME: tempDir("recall-cli-home"), SERVICE_PORT: new URL(orch).port } });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("Recalled notes:");
    expect(shown.stdout).toContain("left/reference/lessons-2026-04-15.md");
    // No hook of the job's run failed.
    expect(main.output()).not.toContain("hook failed");
  }, 180_000);
});

describe("recall at an agent-mode conversation's first turn", () => {
  let t: Awaited<ReturnType<typeof tempHome>>;
  let agent: AgentModeServer;
  beforeAll(async () => {
    t = await tempHome("recall-agent-");
    agent = await startAgentModeServer({
      home: t.home,
      hubUrl: await makeHub(join(t.home, "hub")),
      kv: "file",
      configEnv: {
        SERVICE_CLAUDE_BINARY: realClaudeBinary(),
        MODEL_BASE_URL: api.url,
        MODEL_AUTH_TOKEN: "sk-ant-fixture-key",
        ROUTER_URL: main.routerUrl!,
        KB_ROUTER_TOKEN: TOKEN,
        ROUTER_CLI_BINARY: join(bin, "router-cli"),
      },
      agentEnv: { PATH: process.env.PATH, ...OFFLINE_ENV },
    });
  });
  afterAll(async () => {
    await agent?.close();
    await t?.cleanup();
  });

  it("carries the lesson its opening message bears on, once", async () => {
    api.setScript([reply("Checking the webhook."), reply("Rotated in both places now.")]);
    const conversation = crypto.randomUUID();
    const say = async (content: string) => {
      const before = api.requests.length;
      const res = await agent.call("/v1/chat/completions", {
        json: { model: AGENT, messages: [{ role: "user", content }] },
        headers: { "x-conversation-id": conversation },
      });
      expect(res.status).toBe(200);
      await res.json();
      return scriptedSince(before)[0]!;
    };
    // Lesson 3 is older than the feed's newest ten.
    const feed = await (await call(main.routerUrl!, "/feed", undefined, TOKEN)).text();
    expect(feed).not.toContain(lesson(3));
    const first = await say("The Stripe webhook keeps failing signature checks after we rotated the secret");
    expect(text(first.body)).toContain(lesson(3));
    // Chosen by the service for the conversation's opening (the prompt hook adds nothing twice).
    expect(text(first.body)).toContain("notes that may bear on this task");
    expect(text(first.body)).toContain("left/reference/lessons-2026-10-08.md");
    const second = await say("Stripe webhook signatures still fail after the secret change");
    expect(text(second.body.messages.at(-1))).not.toContain(lesson(3));
    expect(count(text(second.body), lesson(3))).toBe(1);
  }, 180_000);
});
