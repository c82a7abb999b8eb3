// A background job joins the loop (issue 16 part 3) in the one-process stack, with the real
// Claude Code CLI against the fixture Messages API: the agent starts with the feed, its inline
// lesson reaches the vault, and when the job ends the vault records its milestone (the job id
// as source, the outcome, the cost), which the feed shows after a tick. The agent's Bash tool
// finds no router token in its env or its settings: only a token scoped to the hooks' routes.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type AnthropicApi, startAnthropicApi } from "./fixtures/anthropic-api";
import { compiledClis } from "./support/cli";
import { type MainProcess, startMain, tempDir, untilJobEnds } from "./support/main-process";
import { realClaudeServiceEnv } from "./support/real-claude";

const TOKEN = "loop-jobs-token";
let main: MainProcess;
let api: AnthropicApi;
let vault: string;
const lesson = "Job lesson: the staging deploy needs the feature flag on.";

function journal(): Array<Record<string, any>> {
  const dir = join(vault, "brain-feed", "markers");
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((f) =>
    readFileSync(join(dir, f), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
  );
}

const call = (base: string, path: string, body?: unknown, token?: string) =>
  fetch(`${base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  const bin = await compiledClis();
  api = await startAnthropicApi({
    script: [
      // What the agent can reach: its env, and the settings file its hooks come from.
      {
        content: [
          {
            type: "tool_use",
            name: "Bash",
            input: { command: 'printenv KB_ROUTER_TOKEN; cat "$BRAIN_HOOK_STATE_DIR"/../settings/*.json', description: "look for tokens" },
          },
        ],
      },
      { content: [{ type: "text", text: `Done with the task.\n<!-- @lesson -->\n${lesson}\n<!-- @/lesson -->` }], usage: { output_tokens: 20 } },
    ],
  });
  vault = join(tempDir("loop-jobs-vault"), "vault");
  main = await startMain(["--vault", vault], {
    KB_ROUTER_TOKEN: TOKEN,
    TICK_INTERVAL_SECONDS: "0",
    ROUTER_CLI_BINARY: join(bin, "router-cli"),
    MODEL_CLI_HOME_DIR: tempDir("loop-agent-home"),
    SERVICE_OTEL_ENABLED: "false",
    ...realClaudeServiceEnv(api.url),
  });
}, 120_000);

afterAll(async () => {
  await main?.stop();
  api?.stop();
});

describe("a job in the one-process stack", () => {
  it("starts with the feed, leaves its lesson, and ends with its milestone in the vault and the feed", async () => {
    const router = main.routerUrl!;
    const orch = main.orchestratorUrl!;
    expect((await call(router, "/marker", { type: "lesson", content: "Feed lesson for jobs: never deploy on Fridays." }, TOKEN)).status).toBe(201);

    const submitted = await call(orch, "/jobs", { task: "Summarise the deploy process", profile: "code" });
    expect(submitted.status).toBe(202);
    const { id } = (await submitted.json()) as { id: string };
    const job = await untilJobEnds(main, async () => (await (await call(orch, `/jobs/${id}`)).json()) as Record<string, any>);
    expect(job.status).toBe("succeeded");

    // The agent's first request carried the feed.
    expect(JSON.stringify(api.scriptedRequests()[0]!.body)).toContain("never deploy on Fridays");
    // What its Bash tool printed (the next request's tool_result): no router token, a scoped one.
    const seen = JSON.stringify(api.scriptedRequests()[1]!.body.messages.at(-1));
    expect(seen).toContain("tool_result");
    expect(seen).toContain('\\"KB_ROUTER_TOKEN\\"');
    expect(seen).not.toContain(TOKEN);
    const scoped = /bsk1\.[\w-]+\.[\w-]+/.exec(seen)?.[0];
    expect(scoped).toBeDefined();
    // That token reaches the hooks' routes and nothing else.
    expect((await call(router, "/feed", undefined, scoped)).status).toBe(200);
    expect((await call(router, "/ingest", { title: "t", content: "from the agent" }, scoped)).status).toBe(403);
    expect((await call(router, "/tick", {}, scoped)).status).toBe(403);
    // Its inline lesson is in the vault, once.
    expect(journal().filter((r) => r.content === lesson)).toHaveLength(1);
    // The job's milestone: source the job id, its outcome and cost.
    const milestones = journal().filter((r) => r.type === "milestone" && r.source === id);
    expect(milestones).toHaveLength(1);
    expect(milestones[0]!.attrs).toMatchObject({ outcome: "succeeded", profile: "code" });
    expect(milestones[0]!.content).toContain(`Job ${id} (code) succeeded: Summarise the deploy process`);
    // After a tick, the feed shows the team's background work.
    expect(((await (await call(router, "/tick", { wait: true }, TOKEN)).json()) as any).status).toBe("succeeded");
    const feed = await (await call(router, "/feed", undefined, TOKEN)).text();
    expect(feed).toContain("Summarise the deploy process");
  }, 180_000);
});
