// `bun run start` on a fresh machine: both services answer /health with no configuration,
// because a router token is generated into ~/.router/.env (never printed) when none is set.
// A job in that stack (the real Claude Code CLI against the fixture Messages API) runs its
// hooks with the checkout's own router-cli, none on PATH, and none of them fails.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseDotenv } from "dotenv";
import { type AnthropicApi, startAnthropicApi } from "./fixtures/anthropic-api";
import { REPO, tempDir } from "./support/main-process";
import { realClaudeServiceEnv } from "./support/real-claude";
import { until } from "./support/until";

async function startScript(home: string, env: Record<string, string> = {}) {
  const proc = Bun.spawn(["bun", join(REPO, "scripts", "start.ts"), "--vault", join(home, "vault")], {
    cwd: home,
    env: { PATH: process.env.PATH ?? "", HOME: home, PORT_BRAIN_API: "0", PORT_BRAIN_MCP: "0", SERVICE_PORT: "0", TICK_INTERVAL_SECONDS: "0", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  const decoder = new TextDecoder();
  void (async () => {
    for await (const c of proc.stdout) out += decoder.decode(c, { stream: true });
  })();
  void (async () => {
    for await (const c of proc.stderr) out += decoder.decode(c, { stream: true });
  })();
  const [router, orch] = await until(
    () => {
      if (proc.exitCode !== null) throw new Error(`start.ts exited (${proc.exitCode}):\n${out}`);
      const router = /knowledge router on (http:\/\/\S+?:\d+)/.exec(out)?.[1];
      const orch = /job orchestrator on (http:\/\/\S+?:\d+)/.exec(out)?.[1];
      return router && orch ? [router, orch] : undefined;
    },
    { ms: 15_000, what: () => `start.ts to start:\n${out}` },
  );
  return { proc, router, orch, output: () => out };
}

describe("bun run start", () => {
  it("generates a router token on a fresh machine, so both /health answer ok", async () => {
    const home = tempDir("start-home");
    const s = await startScript(home);
    try {
      expect(((await (await fetch(`${s.router}/health`)).json()) as { status: string }).status).toBe("ok");
      expect(((await (await fetch(`${s.orch}/health`)).json()) as { status: string }).status).toBe("ok");
      const envFile = join(home, ".router", ".env");
      const token = parseDotenv(readFileSync(envFile, "utf8")).KB_ROUTER_TOKEN!;
      expect(token).toMatch(/^[0-9a-f]{48}$/);
      expect((statSync(envFile).mode & 0o777).toString(8)).toBe("600");
      expect(s.output()).not.toContain(token);
      expect((await fetch(`${s.router}/feed`)).status).toBe(401);
      expect((await fetch(`${s.router}/feed`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    } finally {
      s.proc.kill("SIGTERM");
      expect(await s.proc.exited).toBe(0);
    }
  });

  it("keeps a configured token and writes nothing", async () => {
    const home = tempDir("start-home");
    mkdirSync(join(home, ".router"));
    writeFileSync(join(home, ".router", ".env"), "KB_ROUTER_TOKEN=mine\n");
    const s = await startScript(home);
    try {
      expect(readFileSync(join(home, ".router", ".env"), "utf8")).toBe("KB_ROUTER_TOKEN=mine\n");
      expect((await fetch(`${s.router}/feed`, { headers: { authorization: "Bearer mine" } })).status).toBe(200);
    } finally {
      s.proc.kill("SIGTERM");
      await s.proc.exited;
    }
  });

  it("--only orchestrator (the image's orchestrator container) generates no router token", async () => {
    const home = tempDir("start-home");
    const proc = Bun.spawn(["bun", join(REPO, "scripts", "start.ts"), "--only", "orchestrator"], {
      cwd: home,
      env: { PATH: process.env.PATH ?? "", HOME: home, SERVICE_PORT: "0" },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      let out = "";
      const decoder = new TextDecoder();
      for (const stream of [proc.stdout, proc.stderr]) {
        void (async () => {
          for await (const c of stream) out += decoder.decode(c, { stream: true });
        })();
      }
      await until(() => /job orchestrator on http/.test(out) || proc.exitCode !== null, {
        ms: 15_000,
        what: "the orchestrator to start or the process to exit",
      });
      expect(out).toContain("job orchestrator on http");
      expect(existsSync(join(home, ".router", ".env"))).toBe(false);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  });
});

describe("a job in the stack `bun run start` runs", () => {
  let api: AnthropicApi;
  beforeAll(async () => {
    api = await startAnthropicApi();
  });
  afterAll(() => api?.stop());

  /** Runs one job in a fresh `bun run start` stack; returns the job, its first request and the stack's output. */
  async function jobInStack(env: Record<string, string>, reply: string) {
    const home = tempDir("start-job-home");
    // PATH as the user has it: bun, git, no router-cli.
    expect(Bun.which("router-cli", { PATH: process.env.PATH ?? "" })).toBeNull();
    const s = await startScript(home, { ...realClaudeServiceEnv(api.url), SERVICE_OTEL_ENABLED: "false", MODEL_CLI_HOME_DIR: tempDir("start-agent"), ...env });
    try {
      api.setScript([{ content: [{ type: "text", text: reply }] }]);
      const before = api.requests.length;
      const post = await fetch(`${s.orch}/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ task: "Summarise the release notes", profile: "code" }),
      });
      expect(post.status).toBe(202);
      const { id } = (await post.json()) as { id: string };
      const job = await until(
        async () => {
          const j = (await (await fetch(`${s.orch}/jobs/${id}`)).json()) as { status: string };
          return ["succeeded", "failed", "cancelled"].includes(j.status) && j;
        },
        { ms: 120_000, every: 200, what: () => `the job to end:\n${s.output()}` },
      );
      const first = api.requests.slice(before).find((r) => r.scripted)!;
      const token = parseDotenv(readFileSync(join(home, ".router", ".env"), "utf8")).KB_ROUTER_TOKEN!;
      const feed = await (await fetch(`${s.router}/feed`, { headers: { authorization: `Bearer ${token}` } })).text();
      return { job, first, feed, output: s.output() };
    } finally {
      s.proc.kill("SIGTERM");
      await s.proc.exited;
    }
  }

  it("runs the checkout's router-cli for the hooks, and none of them fails", async () => {
    const lesson = "Start-stack lesson: the release notes live in CHANGELOG.md.";
    const r = await jobInStack({}, `Done.\n<!-- @lesson -->\n${lesson}\n<!-- @/lesson -->`);
    expect(r.job.status).toBe("succeeded");
    // Start-up says which router-cli the hooks run: this checkout's (built, or its source through bun).
    expect(r.output).toMatch(new RegExp(`agents' hooks run (\\S+ )?(${join(REPO, "dist", "router-cli")}|${join(REPO, "cli", "router-cli.ts")})`));
    // SessionStart ran: the feed is in the first request. Stop ran: the reply's lesson reached the vault.
    expect(JSON.stringify(r.first.body)).toContain("Team brain (brain-stack feed");
    expect(r.feed).toContain(lesson);
    expect(r.output).not.toContain("hook failed");
  }, 180_000);

  it("a router-cli that is not there shows as failed hooks in the service's log (what the test above rules out)", async () => {
    const r = await jobInStack({ ROUTER_CLI_BINARY: "router-cli" }, "Done.");
    expect(r.output).toContain("hook failed (exit 127)");
    expect(r.output).toContain("router-cli: not found");
    expect(JSON.stringify(r.first.body)).not.toContain("Team brain (brain-stack feed");
  }, 180_000);
});
