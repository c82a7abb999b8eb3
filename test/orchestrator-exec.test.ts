// executeJob end to end: the fixture agent CLI (test/fixtures/fake-claude) through
// SERVICE_CLAUDE_BINARY, the fixture gh on PATH, real git with local bare repositories as
// remotes, a fixture tracing backend on loopback.
import { afterEach, describe, expect, it } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadOrchestratorConfig } from "../src/orchestrator/config";
import { type ExecuteJobInput, executeJob } from "../src/orchestrator/execution/execute";
import type { ExecutionJob } from "../src/orchestrator/execution/executor";
import { BUNDLED_PROFILES, type Profile } from "../src/orchestrator/profiles/profile";
import { clearTokenCache } from "../src/orchestrator/repos/credentials";
import { parseRepoUrl, repoHash } from "../src/orchestrator/repos/url";
import { startDumbGitServer } from "./fixtures/dumb-git-server";
import { gitEnv, gitSync, makeRemote } from "./fixtures/git-remote";
import { startTracingBackend, type TracingBackend } from "./fixtures/tracing-backend";
import { FAKE_AGENT_ENV } from "./support/orchestrator-process";
import { until } from "./support/until";

const FIXTURES = join(import.meta.dir, "fixtures");
const CODE = BUNDLED_PROFILES.find((p) => p.name === "code")!;
const REVIEW = BUNDLED_PROFILES.find((p) => p.name === "review")!;
const TOKEN = "ghp_execJobSecretToken42";

let backend: TracingBackend | undefined;
afterEach(() => backend?.stop());

type Recorded = { event: string; argv?: string[]; cwd?: string; env?: Record<string, string>; signal?: string };

function setup(configEnv: Record<string, string> = {}) {
  const home = mkdtempSync(join(tmpdir(), "exec-home-"));
  const bin = join(home, "bin");
  mkdirSync(bin);
  symlinkSync(join(FIXTURES, "fake-gh"), join(bin, "gh"));
  const claudeRecord = join(home, "claude.jsonl");
  const ghRecord = join(home, "gh.jsonl");
  const config = loadOrchestratorConfig(
    {
      SERVICE_CLAUDE_BINARY: join(FIXTURES, "fake-claude"),
      SERVICE_AGENT_ENV: FAKE_AGENT_ENV,
      SERVICE_REPOS_ROOT: join(home, "repos"),
      SERVICE_WORKTREE_ROOT: join(home, "worktrees"),
      SERVICE_OTEL_ENABLED: "false",
      ...configEnv,
    },
    home,
  );
  const env: Record<string, string> = { ...gitEnv(home), PATH: `${bin}:${process.env.PATH}`, FAKE_CLAUDE_RECORD: claudeRecord, FAKE_GH_RECORD: ghRecord };
  const read = <T>(file: string): T[] =>
    existsSync(file)
      ? readFileSync(file, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as T)
      : [];
  let n = 0;
  const run = (
    job: Partial<ExecutionJob> & { task?: string },
    opts: { profile?: Profile; env?: Record<string, string>; signal?: AbortSignal } & Partial<ExecuteJobInput> = {},
  ) =>
    executeJob({
      job: { id: `3f2a9c1e-0000-4000-8000-${String(++n).padStart(12, "0")}`, task: "Say hello", ...job },
      profile: opts.profile ?? REVIEW,
      config,
      signal: opts.signal ?? new AbortController().signal,
      env: { ...env, ...opts.env },
      killGraceMs: 300,
      ...(opts.onStarted && { onStarted: opts.onStarted }),
      ...(opts.shipTimeoutMs && { shipTimeoutMs: opts.shipTimeoutMs }),
    });
  return {
    home,
    config,
    env,
    run,
    claude: () => read<Recorded>(claudeRecord),
    gh: () => read<{ argv: string[]; cwd: string; env: Record<string, string> }>(ghRecord),
  };
}

/** Resolves once the fixture agent has recorded its start (its signal handlers are set). */
async function agentStarted(recorded: () => Recorded[]) {
  await until(() => recorded().some((r) => r.event === "start"), { ms: 5000, what: "the fixture agent to start", every: 10 });
}

describe("executeJob: the agent run", () => {
  it("runs a task without a repository in a scratch directory and stores output, usage and session", async () => {
    const t = setup();
    let started: { pid: number; session_id: string } | undefined;
    const result = await t.run({ id: "job-scratch-1" }, { onStarted: (info) => (started = info) });
    expect(result).toMatchObject({
      status: "succeeded",
      exit_code: 0,
      output: "Hello! The build passes on main.",
      usage: { prompt_tokens: 38066, completion_tokens: 14, total_tokens: 38080 },
      cost_usd: 0.0412,
      num_turns: 1,
    });
    expect(result.session_id).toBe(started!.session_id);
    const [start] = t.claude();
    expect(start?.cwd).toBe(join(t.config.worktreeRoot, "job-scratch-1"));
    expect(start?.argv).toEqual([
      "-p",
      "Say hello",
      "--output-format",
      "stream-json",
      "--verbose",
      "--model",
      "haiku",
      "--max-turns",
      "20",
      "--permission-mode",
      "default",
      "--session-id",
      result.session_id!,
      "--allowedTools",
      REVIEW.allowed_tools!.join(","),
    ]);
    expect(existsSync(join(t.config.worktreeRoot, "job-scratch-1"))).toBe(false);
  });

  it("fails with the agent's exit code and the last line of its stderr", async () => {
    const t = setup();
    const result = await t.run({}, { env: { FAKE_CLAUDE_SCENARIO: "none", FAKE_CLAUDE_EXIT: "3", FAKE_CLAUDE_STDERR: "Error: no such model" } });
    expect(result).toMatchObject({ status: "failed", exit_code: 3, error: "the agent exited with code 3: Error: no such model" });
  });

  it("fails on an is_error result although the agent exits 0", async () => {
    const t = setup();
    const result = await t.run({}, { env: { FAKE_CLAUDE_SCENARIO: "auth-failure" } });
    expect(result).toMatchObject({ status: "failed", exit_code: 0, error: "Invalid API key · Please run /login" });
  });

  it("cancels a running agent with SIGTERM", async () => {
    const t = setup();
    const controller = new AbortController();
    const pending = t.run({}, { env: { FAKE_CLAUDE_HANG: "1" }, signal: controller.signal });
    await agentStarted(t.claude);
    controller.abort();
    expect(await pending).toMatchObject({ status: "cancelled", error: "cancelled" });
    expect(
      t
        .claude()
        .filter((r) => r.event === "signal")
        .map((r) => r.signal),
    ).toEqual(["SIGTERM"]);
  });

  it("sends SIGKILL to an agent that ignores SIGTERM, after the grace period", async () => {
    const t = setup();
    const controller = new AbortController();
    const pending = t.run({}, { env: { FAKE_CLAUDE_HANG: "1", FAKE_CLAUDE_IGNORE_TERM: "1" }, signal: controller.signal });
    await agentStarted(t.claude);
    const t0 = Date.now();
    controller.abort();
    const result = await pending;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(result).toMatchObject({ status: "cancelled", exit_code: null });
    expect(
      t
        .claude()
        .filter((r) => r.event === "signal")
        .map((r) => r.signal),
    ).toEqual(["SIGTERM"]);
  });

  it("kills an agent past the profile's timeout and fails the job", async () => {
    const t = setup();
    const result = await t.run({}, { profile: { ...REVIEW, timeout_seconds: 1 }, env: { FAKE_CLAUDE_HANG: "1" } });
    expect(result).toMatchObject({ status: "failed", timed_out: true });
    expect(result.error).toContain("timeout (1 s)");
  });

  it("hands the agent the OAuth token and removes the static key and endpoint, even inherited ones", async () => {
    const t = setup({ MODEL_CLI_OAUTH_TOKEN: "oauth-tok", MODEL_AUTH_TOKEN: "static-key", MODEL_BASE_URL: "http://gateway.local", GITHOST_TOKEN: TOKEN });
    await t.run(
      {},
      { env: { ANTHROPIC_AUTH_TOKEN: "inherited", ANTHROPIC_BASE_URL: "http://inherited", ANTHROPIC_API_KEY: "sk-inherited", GITHOST_TOKEN: TOKEN } },
    );
    const env = t.claude()[0]!.env!;
    expect(env.CLAUDE_CODE_OAUTH_TOKEN).toBe("oauth-tok");
    for (const k of ["ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "GITHOST_TOKEN"]) expect(env[k]).toBeUndefined();
    expect(env.HOME).toBe(t.config.claudeHomeDir);
  });

  it("hands the static key and endpoint when there is no OAuth token", async () => {
    const t = setup({ MODEL_AUTH_TOKEN: "static-key", MODEL_BASE_URL: "http://gateway.local" });
    await t.run({});
    expect(t.claude()[0]!.env).toMatchObject({ ANTHROPIC_AUTH_TOKEN: "static-key", ANTHROPIC_BASE_URL: "http://gateway.local" });
  });

  it("gives the agent the telemetry environment, tagged with the job", async () => {
    const t = setup({
      SERVICE_OTEL_ENABLED: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http",
      SERVICE_POD_NAME: "pod-1",
      TRACING_BASIC_AUTH: "cGs6c2s=",
    });
    await t.run({ id: "job-otel" });
    expect(t.claude()[0]!.env).toMatchObject({
      CLAUDE_CODE_ENABLE_TELEMETRY: "1",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_RESOURCE_ATTRIBUTES: "job.id=job-otel,job.profile=review,k8s.pod.name=pod-1",
      OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Basic%20cGs6c2s=",
    });
  });

  it("resumes a session named by the job, from an earlier job's transcript", async () => {
    const t = setup();
    const first = await t.run({});
    await t.run({ session_id: first.session_id! });
    const argv = t.claude().filter((r) => r.event === "start")[1]!.argv!;
    expect(argv.slice(argv.indexOf("--resume"), argv.indexOf("--resume") + 2)).toEqual(["--resume", first.session_id!]);
  });

  it("refuses a session id that is not a UUID", async () => {
    const t = setup();
    expect(await t.run({ session_id: "yesterday" })).toMatchObject({ status: "failed", error_code: "invalid_session_id" });
    expect(t.claude()).toEqual([]);
  });
});

describe("executeJob: repositories and pull requests", () => {
  it("runs the agent in its own worktree on a new branch, removed after the job", async () => {
    const t = setup();
    const remote = makeRemote();
    let seen: { worktree?: string; branch?: string } = {};
    let branchThen = "";
    const result = await t.run(
      { id: "00000001-1111-4000-8000-00004a5b6c7d", repo_url: remote.url },
      {
        onStarted: (info) => {
          seen = info;
          branchThen = gitSync(["branch", "--show-current"], info.worktree!, t.env);
        },
      },
    );
    expect(result).toMatchObject({ status: "succeeded", branch: "agent/4a5b6c7d" });
    expect(seen).toMatchObject({ worktree: join(t.config.worktreeRoot, "00000001-1111-4000-8000-00004a5b6c7d"), branch: "agent/4a5b6c7d" });
    expect(branchThen).toBe("agent/4a5b6c7d");
    expect(t.claude()[0]?.cwd).toBe(seen.worktree);
    expect(existsSync(seen.worktree!)).toBe(false);
    const clone = join(t.config.reposRoot, repoHash(parseRepoUrl(remote.url)), "repo");
    expect(gitSync(["branch", "--list", "agent/*"], clone, t.env)).toContain("agent/4a5b6c7d");
  });

  it("auto-PR: commits what the agent left, pushes the branch and records the PR URL from gh", async () => {
    const t = setup({ GITHOST_TOKEN: TOKEN });
    const remote = makeRemote();
    const result = await t.run(
      { id: "00000002-2222-4000-8000-00005b6c7d8e", task: "Add release notes\n\nMention the new flag.", repo_url: remote.url },
      { profile: CODE, env: { FAKE_CLAUDE_WRITE: "docs/NOTES.md" } },
    );
    expect(result).toMatchObject({ status: "succeeded", branch: "agent/5b6c7d8e", pr_url: "https://github.example/owner/repo/pull/1" });
    expect(result.error).toBeUndefined();

    const pushed = remote.ref("refs/heads/agent/5b6c7d8e");
    expect(pushed).toBeDefined();
    expect(gitSync(["show", "--format=%an <%ae>|%s", "--name-only", pushed!], remote.bare, t.env).split("\n")).toEqual([
      "brain-stack agent <agent@brain-stack.invalid>|Add release notes",
      "",
      "docs/NOTES.md",
    ]);
    const [gh] = t.gh();
    expect(gh?.argv.slice(0, 2)).toEqual(["pr", "create"]);
    expect(gh?.argv.slice(gh.argv.indexOf("--head"), gh.argv.indexOf("--head") + 4)).toEqual(["--head", "agent/5b6c7d8e", "--base", "main"]);
    expect(gh?.argv).toContain("--title=Add release notes");
    expect(gh?.env.GH_TOKEN).toBe(TOKEN);
  });

  it("opens no PR when the agent changed nothing", async () => {
    const t = setup();
    const remote = makeRemote();
    const result = await t.run({ repo_url: remote.url }, { profile: CODE });
    expect(result.status).toBe("succeeded");
    expect(result.pr_url).toBeUndefined();
    expect(t.gh()).toEqual([]);
  });

  it("records a refused push, keeps the branch in the clone cache, and never shows the token", async () => {
    const t = setup({ GITHOST_TOKEN: TOKEN });
    const remote = makeRemote();
    remote.refusePushes(`policy: pushes denied for ${TOKEN}`);
    const result = await t.run({ id: "00000003-3333-4000-8000-00006c7d8e9f", repo_url: remote.url }, { profile: CODE, env: { FAKE_CLAUDE_WRITE: "x.txt" } });
    expect(result).toMatchObject({ status: "failed", branch: "agent/6c7d8e9f" });
    expect(result.error).toContain("push of agent/6c7d8e9f failed");
    expect(result.error).toContain("pushes denied for ***");
    expect(JSON.stringify(result)).not.toContain(TOKEN);
    expect(remote.ref("refs/heads/agent/6c7d8e9f")).toBeUndefined();
    const clone = join(t.config.reposRoot, repoHash(parseRepoUrl(remote.url)), "repo");
    expect(gitSync(["show", "--name-only", "--format=", "agent/6c7d8e9f"], clone, t.env)).toBe("x.txt");
    expect(t.gh()).toEqual([]);
  });

  it("records a failing gh with its stderr redacted, the branch pushed", async () => {
    const t = setup({ GITHOST_TOKEN: TOKEN });
    const remote = makeRemote();
    const result = await t.run(
      { id: "00000004-4444-4000-8000-00007d8e9fa0", repo_url: remote.url },
      { profile: CODE, env: { FAKE_CLAUDE_WRITE: "y.txt", FAKE_GH_EXIT: "1", FAKE_GH_STDERR: `HTTP 401: Bad credentials (token ${TOKEN})` } },
    );
    expect(result.status).toBe("failed");
    expect(result.error).toContain("gh pr create failed (exit 1): HTTP 401: Bad credentials (token ***)");
    expect(JSON.stringify(result)).not.toContain(TOKEN);
    expect(remote.ref("refs/heads/agent/7d8e9fa0")).toBeDefined();
  });

  it("fails a job with a bad repository URL before starting the agent", async () => {
    const t = setup();
    const result = await t.run({ repo_url: "ext::sh -c id" });
    expect(result).toMatchObject({ status: "failed", error_code: "invalid_repo_url", exit_code: null });
    expect(t.claude()).toEqual([]);
  });

  it("fails a job whose repository cannot be cloned, with git's reason", async () => {
    const t = setup();
    const result = await t.run({ repo_url: "file:///nonexistent/repo.git" });
    expect(result).toMatchObject({ status: "failed", error_code: "git_failed" });
    expect(result.error).toContain("git clone");
  });

  it("in shared-filesystem mode, materialises the profile to jobs/{id}/ and clones under repos/", async () => {
    const shared = mkdtempSync(join(tmpdir(), "shared-"));
    const t = setup({ SERVICE_SHARED_FS_ROOT: shared });
    const remote = makeRemote();
    await t.run({ id: "job-shared-1", repo_url: remote.url });
    expect(JSON.parse(readFileSync(join(shared, "jobs", "job-shared-1", "profile.json"), "utf8"))).toMatchObject({
      name: "review",
      model: "haiku",
      max_turns: 20,
    });
    expect(existsSync(join(shared, "repos", repoHash(parseRepoUrl(remote.url)), "repo", ".git"))).toBe(true);
  });
});

describe("executeJob: a private repository through the GitHub App identity", () => {
  it("exchanges the app JWT for an installation token, clones with it as a header, and keeps it out of the agent, the clone and the result", async () => {
    const installationToken = "ghs_appInstallationToken77";
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
    const api: Array<{ path: string; auth: string | null }> = [];
    const github = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req) {
        api.push({ path: new URL(req.url).pathname, auth: req.headers.get("authorization") });
        return Response.json({ token: installationToken, expires_at: new Date(Date.now() + 3600_000).toISOString() }, { status: 201 });
      },
    });
    const remote = makeRemote();
    gitSync(["update-server-info"], remote.bare, gitEnv(mkdtempSync(join(tmpdir(), "app-git-"))));
    const host = startDumbGitServer(remote.bare, { requireAuth: `Basic ${Buffer.from(`x-access-token:${installationToken}`).toString("base64")}` });
    clearTokenCache();
    try {
      const t = setup({
        GITHOST_API_URL: `http://127.0.0.1:${github.port}`,
        // The git host is another server (port) than the API here: name it.
        GITHOST_URL: new URL(host.url).origin,
        GITHOST_APP_ID: "4242",
        GITHOST_APP_INSTALLATION_ID: "99",
        GITHOST_APP_PRIVATE_KEY_BASE64: Buffer.from(pem).toString("base64"),
      });
      const result = await t.run({ repo_url: host.url, task: "Review the private repo" });
      expect(result.status).toBe("succeeded");
      expect(api).toHaveLength(1);
      expect(api[0]!.path).toBe("/app/installations/99/access_tokens");
      expect(api[0]!.auth).toMatch(/^Bearer ey/);
      expect(host.authorizations.filter((a) => a !== null).length).toBeGreaterThan(0);
      const agent = t.claude().find((r) => r.event === "start")!;
      expect(JSON.stringify(agent.env)).not.toContain(installationToken);
      expect(JSON.stringify(result)).not.toContain(installationToken);
      const clone = join(t.config.reposRoot, repoHash(parseRepoUrl(host.url)), "repo");
      expect(readFileSync(join(clone, ".git", "config"), "utf8")).not.toContain(installationToken);
    } finally {
      host.stop();
      github.stop(true);
      clearTokenCache();
    }
  });
});

describe("executeJob: transcript shipping", () => {
  it("ships the session transcript to the tracing backend after the job", async () => {
    const traced = startTracingBackend();
    backend = traced;
    const t = setup({ TRACING_HOST: traced.url, TRACING_PUBLIC_KEY: "pk-lf-test", TRACING_SECRET_KEY: "sk-lf-test" });
    const result = await t.run({ id: "job-traced", task: "Say hello" });
    await until(() => traced.batches.length > 0, { ms: 5000, what: "a batch at the tracing backend" });
    const batch = traced.batches[0]!.batch;
    expect(traced.batches[0]!.authorization).toBe(`Basic ${btoa("pk-lf-test:sk-lf-test")}`);
    expect(batch[0]).toMatchObject({
      type: "trace-create",
      body: { id: "job-traced", sessionId: result.session_id, input: "Say hello", output: result.output },
    });
    expect(batch.filter((e) => e.type === "generation-create").length).toBe(1);
  });

  it("does not wait for a tracing backend that never answers", async () => {
    backend = startTracingBackend({ hang: true });
    const t = setup({ TRACING_HOST: backend.url, TRACING_PUBLIC_KEY: "pk-lf-test", TRACING_SECRET_KEY: "sk-lf-test" });
    const t0 = Date.now();
    const result = await t.run({}, { shipTimeoutMs: 10_000 });
    expect(result.status).toBe("succeeded");
    expect(Date.now() - t0).toBeLessThan(3000);
  });
});
