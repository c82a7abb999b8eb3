// The agent's environment is an allowlist (issue 37 part 4): the service is started, as an
// operator might, with a dozen secrets of other systems in its environment, and a fixture agent
// that answers with its own environment shows, over the service's API, what a job, a chat turn,
// a Responses turn, a /completions turn and an agent-mode runner can see.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AGENT, hubFiles, KEY, makeHub } from "./support/agent-mode";
import { type MainProcess, REPO, startMain, tempDir } from "./support/main-process";
import { until } from "./support/until";

type Env = Record<string, string>;

/** Secrets of other systems an operator's environment may hold: none may reach the agent. */
const FOREIGN = {
  AWS_ACCESS_KEY_ID: "AKIAFOREIGN0000001",
  AWS_SECRET_ACCESS_KEY: "aws-secret-foreign-0001",
  OPENAI_API_KEY: "sk-openai-foreign-0002",
  PGPASSWORD: "pg-foreign-0003",
  REDIS_PASSWORD: "redis-foreign-0004",
  GITHUB_TOKEN: "ghp_foreign0005",
  GH_TOKEN: "gho_foreign0006",
  NPM_TOKEN: "npm_foreign0007",
  SLACK_BOT_TOKEN: "xoxb-foreign-0008",
  STRIPE_SECRET_KEY: "sk_live_foreign0009",
  AZURE_CLIENT_SECRET: "azure-foreign-0010",
  HF_TOKEN: "hf_foreign0011",
  DATABASE_PASSWORD: "db-foreign-0012",
};
/** The service's own secrets, set too. */
const OWN = { KB_ROUTER_TOKEN: "router-token-own-0013", SERVICE_API_KEYS: KEY, GITHOST_TOKEN: "ghp_own0015" };
/** The model credential the service is configured to give the agent (as ANTHROPIC_AUTH_TOKEN). */
const MODEL_AUTH_TOKEN = "model-token-own-0014";

let main: MainProcess;
let home: string;
const auth = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };

beforeAll(async () => {
  home = tempDir("agent-env");
  // A runner of the agent's package writes the environment it was given.
  const hubUrl = await makeHub(join(home, "hub"), hubFiles({ [`agents/${AGENT}/package/runners/01-env.sh`]: `env > "${join(home, "runner-env.txt")}"\n` }));
  main = await startMain(["--vault", join(home, "vault")], {
    ...FOREIGN,
    ...OWN,
    MODEL_AUTH_TOKEN,
    HOME: home,
    SERVICE_CLAUDE_BINARY: join(REPO, "test", "fixtures", "env-agent"),
    SERVICE_HUB_URL: hubUrl,
    HUB_AGENT: AGENT,
    SERVICE_CLONE_ROOT: join(home, "clones"),
    SERVICE_PACKAGE_DIR: join(home, "package"),
    SERVICE_OTEL_ENABLED: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1",
    TICK_INTERVAL_SECONDS: "0",
    // What the agent may have: the basics, Claude Code's settings, and the operator's additions.
    LANG: "C.UTF-8",
    TZ: "UTC",
    TERM: "xterm-256color",
    IS_SANDBOX: "1",
    ANTHROPIC_API_KEY: "sk-ant-given-to-the-agent",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    TEAM_TOOL_MODE: "fast",
    TEAM_TOOL_REGION: "eu",
    KUBECONFIG: "/etc/kube/config",
    SERVICE_AGENT_ENV: "TEAM_TOOL_*, KUBECONFIG, GITHOST_TOKEN",
  });
}, 60_000);
afterAll(() => main?.stop());

/** `redacted`: a job's recorded output, where the service's secrets (its model token among them) read `***`. */
function expectAllowlisted(env: Env, { redacted = false } = {}) {
  const text = JSON.stringify(env);
  for (const [name, value] of Object.entries({ ...FOREIGN, ...OWN })) {
    expect(env[name]).toBeUndefined();
    if (name !== "SERVICE_API_KEYS") expect(text).not.toContain(value);
  }
  expect(env).toMatchObject({
    PATH: expect.any(String),
    LANG: "C.UTF-8",
    TZ: "UTC",
    TERM: "xterm-256color",
    IS_SANDBOX: "1",
    ANTHROPIC_API_KEY: "sk-ant-given-to-the-agent",
    ANTHROPIC_AUTH_TOKEN: redacted ? "***" : MODEL_AUTH_TOKEN,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    TEAM_TOOL_MODE: "fast",
    TEAM_TOOL_REGION: "eu",
    KUBECONFIG: "/etc/kube/config",
  });
  expect(env.MODEL_AUTH_TOKEN).toBeUndefined();
  // The agent's own home, not the service's.
  expect(env.HOME).not.toBe(home);
  // Nothing else of the service's: every SERVICE_* name it sees is one the service set for it.
  expect(Object.keys(env).filter((k) => k.startsWith("SERVICE_") && k !== "SERVICE_PACKAGE_DIR" && k !== "SERVICE_CORRELATION_ID")).toEqual([]);
}

describe("the agent's environment", () => {
  it("of a job: the allowlist, the model credential the service gives, telemetry and git identity; no foreign or service secret", async () => {
    const res = await fetch(`${main.orchestratorUrl}/jobs`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ task: "print your environment", wait: true }),
    });
    const job = (await res.json()) as { status: string; output: string };
    expect(job.status).toBe("succeeded");
    const env = JSON.parse(job.output) as Env;
    expectAllowlisted(env, { redacted: true });
    // What the service gives a job's agent besides: telemetry tagged with the job, the job's git identity.
    expect(env).toMatchObject({ CLAUDE_CODE_ENABLE_TELEMETRY: "1", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1" });
    expect(env.OTEL_RESOURCE_ATTRIBUTES).toContain("job.id=");
    expect(env.GIT_AUTHOR_NAME).toBeString();
    // Named in SERVICE_AGENT_ENV, but a secret of the service: left out, and start-up said so.
    expect(main.output()).toContain("SERVICE_AGENT_ENV names GITHOST_TOKEN");
  });

  it("of a chat completion turn", async () => {
    const res = await fetch(`${main.orchestratorUrl}/v1/chat/completions`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ model: AGENT, messages: [{ role: "user", content: "print your environment" }] }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
    const env = JSON.parse(body.choices[0]!.message.content) as Env;
    expectAllowlisted(env);
    // The turn's own variable: its correlation id.
    expect(env.SERVICE_CORRELATION_ID).toBe(res.headers.get("x-correlation-id")!);
  });

  it("of a Responses turn and a /completions turn", async () => {
    const r = await fetch(`${main.orchestratorUrl}/v1/responses`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ model: AGENT, input: "print your environment" }),
    });
    expect(r.status).toBe(200);
    const response = (await r.json()) as { output: Array<{ type: string; content?: Array<{ type: string; text: string }> }> };
    const text = response.output.flatMap((o) => o.content ?? []).find((c) => c.type === "output_text")!.text;
    expectAllowlisted(JSON.parse(text) as Env);

    const c = await fetch(`${main.orchestratorUrl}/completions`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ message: "print your environment" }),
    });
    expect(c.status).toBe(200);
    expectAllowlisted(JSON.parse(((await c.json()) as { reply: string }).reply) as Env);
  });

  it("of the agent package's runners", async () => {
    const file = join(home, "runner-env.txt");
    const text = await until(
      () => {
        try {
          return readFileSync(file, "utf8");
        } catch {
          return undefined;
        }
      },
      { what: "the runner's environment file" },
    );
    const env = Object.fromEntries(
      text
        .split("\n")
        .filter((l) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(l))
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    ) as Env;
    expectAllowlisted(env);
    expect(env.HUB_AGENT).toBe(AGENT);
  });
});
