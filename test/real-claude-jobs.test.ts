// Jobs through the real Claude Code CLI (the pinned devDependency) against the fixture
// Anthropic API: the CLI really runs the scripted tools in the job's worktree, auto-PR pushes to
// a local bare repository and the fixture gh answers with the PR URL. One orchestrator and one
// fixture API; the jobs run one after another, each with its own script.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT_WITHOUT_SANDBOX } from "../src/orchestrator/agent/root-sandbox";
import type { Job } from "../src/orchestrator/jobs/schema";
import { type AnthropicApi, startAnthropicApi } from "./fixtures/anthropic-api";
import { gitSync, makeRemote, type Remote } from "./fixtures/git-remote";
import { tempDir } from "./support/main-process";
import { finished, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { realClaudeServiceEnv } from "./support/real-claude";
import { until } from "./support/until";

let api: AnthropicApi;
let o: Orchestrator;
let remote: Remote;
const others: Orchestrator[] = [];

beforeAll(async () => {
  api = await startAnthropicApi();
  remote = makeRemote();
  const home = tempDir("real-claude-jobs");
  // Profiles that run like code but without a PR; "short" times out quickly.
  for (const [name, timeout] of [
    ["quick", 120],
    ["short", 8],
  ] as const) {
    mkdirSync(join(home, ".service", "profiles", name), { recursive: true });
    writeFileSync(
      join(home, ".service", "profiles", name, "profile.yml"),
      `description: Unattended runs\nmodel: sonnet\nmax_turns: 5\nauto_pr: false\npermission_mode: bypassPermissions\ntimeout_seconds: ${timeout}\n`,
    );
  }
  o = await startOrchestrator({ home, env: realClaudeServiceEnv(api.url) });
});

afterAll(async () => {
  await Promise.all([o, ...others].map((x) => x?.stop("SIGKILL")));
  api?.stop();
});

/** Requests the job's CLI sent: its session id is in the x-claude-code-session-id header. */
const requestsOf = (job: Job) => api.requests.filter((r) => r.headers["x-claude-code-session-id"] === job.session_id);

/** Whether a process whose command line holds `text` is alive (the agent's argv holds its session id). */
const processWith = (text: string) => Bun.spawnSync(["pgrep", "-f", text]).exitCode === 0;

describe("a code job through the real CLI", () => {
  it("runs the scripted Bash tool in its worktree, retries an overload visibly, commits, pushes and records the PR", async () => {
    api.setScript([
      { error: 529 },
      {
        content: [
          { type: "text", text: "I'll add the file." },
          {
            type: "tool_use",
            name: "Bash",
            input: { command: "printf '# Contributing\\n\\nOpen a PR.\\n' > CONTRIBUTING.md", description: "write CONTRIBUTING.md" },
          },
        ],
        usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 7, cache_creation_input_tokens: 3 },
      },
      {
        content: [{ type: "text", text: "Added CONTRIBUTING.md." }],
        usage: { input_tokens: 200, output_tokens: 10, cache_read_input_tokens: 5, cache_creation_input_tokens: 0 },
      },
    ]);
    const submitted = await o.submit({ task: "add a CONTRIBUTING.md", repo_url: remote.url, profile: "code" });
    // While the CLI waits to retry the 529, the job says so.
    const retrying = await o.until(submitted.id, (j) => j.api_retry !== null || finished(j), 60_000);
    expect(retrying.api_retry).toMatchObject({ attempt: 1, max_retries: 10, error_status: 529, error: "overloaded" });
    expect(retrying.status).toBe("running");

    const job = await o.until(submitted.id, finished, 60_000);
    expect(job).toMatchObject({ status: "succeeded", exit_code: 0, error: null, output: "Added CONTRIBUTING.md.", api_retry: null });
    expect(job.pr_url).toMatch(/^https:\/\/github\.example\/owner\/repo\/pull\/\d+$/);
    // The branch reached the bare repository with the file the CLI's Bash tool wrote.
    expect(remote.ref(`refs/heads/${job.branch}`)).toBeDefined();
    expect(gitSync(["show", `${job.branch}:CONTRIBUTING.md`], remote.bare)).toBe("# Contributing\n\nOpen a PR.");
    // Usage and cost come from the real result line: the sums of the two answered requests, with
    // the cache tokens (issue 18) beside the OpenAI-style counts.
    expect(job.usage).toEqual({
      input_tokens: 300,
      output_tokens: 30,
      cache_creation_input_tokens: 3,
      cache_read_input_tokens: 12,
      prompt_tokens: 100 + 7 + 3 + 200 + 5,
      completion_tokens: 20 + 10,
      total_tokens: 345,
    });
    expect(job.num_turns).toBeGreaterThanOrEqual(2);
    expect(job.total_cost_usd).toBe(job.cost_usd);
    expect(job.cost_usd).toBeGreaterThan(0);
    // What the CLI sent: the task, its tools, then the Bash result.
    const sent = requestsOf(job).filter((r) => r.scripted);
    expect(sent).toHaveLength(3);
    expect(JSON.stringify(sent[0]!.body.messages)).toContain("add a CONTRIBUTING.md");
    expect(sent[0]!.body.tools.map((t: { name: string }) => t.name)).toContain("Bash");
    const toolResult = sent[2]!.body.messages.at(-1).content.find((c: { type: string }) => c.type === "tool_result");
    expect(toolResult.is_error).toBeFalsy();
  }, 90_000);
});

describe("a job whose agent starts a background sub-agent (issue 36 part 1)", () => {
  it("records the follow-up turn's answer as the output, and the usage of both turns", async () => {
    api.setScript([
      {
        content: [
          { type: "text", text: "I started a helper." },
          { type: "tool_use", name: "Agent", input: { description: "count the files", prompt: "Count the files", subagent_type: "general-purpose" } },
        ],
        usage: { input_tokens: 100, output_tokens: 10 },
      },
      { content: [{ type: "text", text: "The helper is counting." }], usage: { input_tokens: 200, output_tokens: 20 } },
      { content: [{ type: "text", text: "The helper counted 3 files." }], usage: { input_tokens: 400, output_tokens: 40 } },
    ]);
    api.setSubAgentScript([
      { content: [{ type: "tool_use", name: "Bash", input: { command: "echo 3", description: "count" } }], delayMs: 500 },
      { content: [{ type: "text", text: "3 files." }] },
    ]);
    try {
      const submitted = await o.submit({ task: "count the files in the background", profile: "quick" });
      const job = await o.until(submitted.id, finished, 90_000);
      expect(job).toMatchObject({ status: "succeeded", output: "The helper counted 3 files.", error: null });
      // Both result lines: the main loop's three requests (the sub-agent's are not in a result's usage).
      expect(job.usage).toMatchObject({ input_tokens: 700, output_tokens: 70, prompt_tokens: 700, completion_tokens: 70 });
      expect(job.num_turns).toBeGreaterThanOrEqual(3);
    } finally {
      api.setSubAgentScript(undefined);
    }
  }, 120_000);
});

describe("a refused API key", () => {
  it("fails the job at once with the refusal, instead of minutes of the CLI's retries", async () => {
    api.setScript([{ error: 401, times: 50 }]);
    const submitted = await o.submit({ task: "say hello", profile: "quick" });
    const job = await o.until(submitted.id, finished, 60_000);
    expect(job.status).toBe("failed");
    expect(job.error).toContain("refused the agent's credentials (HTTP 401 authentication_failed)");
    expect(job.exit_code).toBeNumber();
    const refused = requestsOf(job).filter((r) => r.scripted);
    // The first refusal ends it (the CLI's next attempt would come after its backoff).
    expect(refused.length).toBeLessThanOrEqual(2);
    expect(Date.parse(job.finished_at!) - refused[0]!.at).toBeLessThan(5_000);
    expect(processWith(job.session_id!)).toBe(false);
  }, 90_000);

  it("fails with the CLI's own message when the API says not to retry", async () => {
    api.setScript([{ error: 401, headers: { "x-should-retry": "false" } }]);
    const submitted = await o.submit({ task: "say hello", profile: "quick" });
    const job = await o.until(submitted.id, finished, 60_000);
    expect(job).toMatchObject({ status: "failed", exit_code: 1 });
    // The CLI's own words (with an auth token: "Not logged in · Please run /login"), also its output.
    expect(job.error).toBe(job.output!);
    expect(job.error!.length).toBeGreaterThan(0);
    expect(requestsOf(job).filter((r) => r.scripted)).toHaveLength(1);
  }, 90_000);
});

describe("stopping a running real CLI", () => {
  it("cancel stops the CLI mid-answer and records the job cancelled", async () => {
    api.setScript([{ content: [{ type: "text", text: "Thinking about it" }], hang: true }]);
    const submitted = await o.submit({ task: "take your time", profile: "quick" });
    const running = await o.until(submitted.id, (j) => j.session_id !== null && requestsOf(j).some((r) => r.scripted), 60_000);
    const res = await o.call(`/jobs/${submitted.id}`, { method: "DELETE" });
    expect(res.status).toBe(200);
    const job = await o.until(submitted.id, (j) => j.status === "cancelled" && j.exit_code !== null, 15_000);
    expect(job.error).toBe("cancelled by request");
    await until(() => !processWith(running.session_id!), 10_000);
  }, 90_000);

  it("the profile's timeout kills a CLI that never finishes, and says so", async () => {
    api.setScript([{ content: [{ type: "text", text: "Still going" }], hang: true }]);
    const submitted = await o.submit({ task: "never finish", profile: "short" });
    const job = await o.until(submitted.id, finished, 60_000);
    expect(job.status).toBe("failed");
    expect(job.error).toContain("ran past its timeout (8 s)");
    expect(requestsOf(job).some((r) => r.scripted)).toBe(true);
    expect(processWith(job.session_id!)).toBe(false);
  }, 90_000);
});

describe("a service running as root without IS_SANDBOX", () => {
  it.skipIf(process.getuid?.() !== 0)(
    "says at start-up what happens to code jobs, and such a job fails saying the same",
    async () => {
      const { IS_SANDBOX: _, ...env } = realClaudeServiceEnv(api.url);
      const root = await startOrchestrator({ env });
      others.push(root);
      expect(root.main.output()).toContain(ROOT_WITHOUT_SANDBOX);
      const submitted = await root.submit({ task: "add a file", repo_url: remote.url, profile: "code" });
      const job = await root.until(submitted.id, finished, 60_000);
      expect(job.status).toBe("failed");
      expect(job.error).toStartWith(ROOT_WITHOUT_SANDBOX);
      expect(job.exit_code).toBe(1);
    },
    90_000,
  );
});
