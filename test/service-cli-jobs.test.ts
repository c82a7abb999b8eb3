// service-cli's server commands (run, jobs, job, cancel, profiles, status), run as the compiled
// binary against the real orchestrator process with the fixture agent, real git and fake gh:
// what a user sees, --json, the connection and key rules, and every exit code.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { JOB_LIST_DEFAULT as CLI_LIST_DEFAULT, JOB_LIST_MAX as CLI_LIST_MAX, JOB_STATUSES as CLI_STATUSES } from "../cli/service/_context";
import type { Job } from "../src/orchestrator/jobs/schema";
import { JOB_LIST_DEFAULT, JOB_LIST_MAX, JOB_STATUSES } from "../src/orchestrator/jobs/schema";
import { makeRemote, type Remote } from "./fixtures/git-remote";
import { compiledClis } from "./support/cli";
import { tempDir } from "./support/main-process";
import { finished, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { deadPort, envFor, jobRecord, KEY, lines, svc, tmuxBinary, tmuxSession, writeJob } from "./support/service-cli";
import { until } from "./support/until";

// Each test starts processes (servers, the compiled CLI): more room than bun's 5 s default.
setDefaultTimeout(30_000);

let remote: Remote;
let o: Orchestrator;
let env: Record<string, string>;
const started: Orchestrator[] = [];
const start = async (opts: Parameters<typeof startOrchestrator>[0] = {}) => {
  const s = await startOrchestrator(opts);
  started.push(s);
  return s;
};

beforeAll(async () => {
  remote = makeRemote();
  // An agent that changes a file, so a code job has something to push and opens a PR.
  [o] = await Promise.all([start({ env: { FAKE_CLAUDE_WRITE: "NOTES.md" } }), compiledClis()]);
  env = envFor(o);
}, 120_000);

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

describe("the CLI's copies of the server's values", () => {
  it("has the server's job statuses and list limits", () => {
    expect([...CLI_STATUSES]).toEqual([...JOB_STATUSES]);
    expect([CLI_LIST_DEFAULT, CLI_LIST_MAX]).toEqual([JOB_LIST_DEFAULT, JOB_LIST_MAX]);
  });
});

describe("connection", () => {
  it("status prints Status and Service from GET /health", async () => {
    const r = await svc(["status"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Status:   ok");
    expect(r.stdout).toContain("Service:  job-orchestrator");
  });

  it("a server that does not answer is one clear line on stderr and exit 1, for every command that needs it", async () => {
    const dead = { ...env, SERVICE_PORT: deadPort() };
    const id = "0194a3b2-6c1e-7f00-8a3b-1c2d3e4f5a6b";
    for (const args of [
      ["jobs"],
      ["run", "Explain it"],
      ["run", "Explain it", "-w"],
      ["job", id],
      ["cancel", id],
      ["profiles"],
      ["status"],
      ["jobs", "--json"],
    ]) {
      const r = await svc(args, dead);
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      expect(r.stdout).toBe("");
      expect(lines(r.stderr)).toHaveLength(1);
      expect(r.stderr).toContain("does not answer at http://127.0.0.1:");
      expect(r.stderr).toContain("service-cli serve");
      expect(r.stderr).not.toMatch(/\bat .*\.ts:\d+/); // no stack trace
    }
  });

  it("defaults to 127.0.0.1:8200", async () => {
    const r = await svc(["status"], { HOME: tempDir("cli-home") });
    expect(r.stderr).toContain("http://127.0.0.1:8200");
  });

  it("maps a bind-all SERVICE_HOST to this machine", async () => {
    const r = await svc(["status", "--json"], { ...env, SERVICE_HOST: "0.0.0.0" });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).url).toBe(`http://127.0.0.1:${env.SERVICE_PORT}`);
  });

  it("takes the key from SERVICE_API_KEY first, then the first of SERVICE_API_KEYS", async () => {
    const { SERVICE_API_KEY: _, ...noKey } = env;
    expect((await svc(["jobs"], { ...noKey, SERVICE_API_KEYS: `${KEY},other` })).code).toBe(0);
    const wrong = await svc(["jobs"], { ...env, SERVICE_API_KEY: "wrong", SERVICE_API_KEYS: KEY });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("401");
    expect(wrong.stderr).toContain("SERVICE_API_KEY was refused");
  });

  it("else reads server.port and the first of server.api_keys from ~/.service/config.yml", async () => {
    const home = tempDir("cli-home");
    mkdirSync(join(home, ".service"), { recursive: true });
    writeFileSync(join(home, ".service", "config.yml"), `server:\n  host: 127.0.0.1\n  port: ${env.SERVICE_PORT}\n  api_keys: [${KEY}, second]\n`);
    const r = await svc(["jobs", "--json"], { HOME: home });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).jobs).toBeArray();
  });

  it("without any key the server's 401 is exit 1 with a hint", async () => {
    const { SERVICE_API_KEY: _, ...noKey } = env;
    const r = await svc(["profiles"], noKey);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("no API key: set SERVICE_API_KEY");
  });
});

describe("run", () => {
  it("submits a job and prints its id at once", async () => {
    const r = await svc(["run", "Explain the layout"], env);
    expect(r.code).toBe(0);
    const id = /job submitted: ([0-9a-f-]{36})/.exec(r.stdout + r.stderr)?.[1];
    expect(id).toBeDefined();
    expect(r.stdout).toContain(`service-cli job ${id}`);
    await o.until(id!, finished);
  });

  it("--json prints only the submitted job on stdout", async () => {
    const r = await svc(["run", "Explain the tests", "--json"], env);
    expect(r.code).toBe(0);
    const job = JSON.parse(r.stdout) as Job;
    expect(job).toMatchObject({ status: "queued", task: "Explain the tests" });
    await o.until(job.id, finished);
  });

  it("-r -w: watches the job finish with a PR URL, plain progress lines on stderr, exit 0", async () => {
    const r = await svc(["run", "fix the flaky test", "-r", remote.url, "-w"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Status:   succeeded");
    expect(r.stdout).toContain("Profile:  code");
    expect(r.stdout).toMatch(/PR:\s+https:\/\/github\.example\/owner\/repo\/pull\/\d+/);
    expect(r.stdout).toContain(`Repo:     ${remote.url} (main)`);
    // Not a terminal: plain lines (a status line per status change and per usage), no redraws, no colour.
    expect(r.stderr).toMatch(/job [0-9a-f]{8}: running · \d+s · 0 turns · 0 tokens/);
    expect(r.stderr).toMatch(/job [0-9a-f]{8}: succeeded · \d+s · 1 turn · 38,080 tokens · \$0\.0412/);
    expect(r.stderr).not.toContain("\r");
    expect(r.stderr).not.toContain("\x1b[");
  });

  it("-w piped: the agent's text, thinking and tool calls one line each, as they happen, then the result", async () => {
    const tools = await start({ env: { FAKE_CLAUDE_SCENARIO: "thinking-tool-final" } });
    const r = await svc(["run", "Find the failing test", "-w"], envFor(tools));
    expect(r.code).toBe(0);
    const shown = lines(r.stderr);
    const at = (re: RegExp) => shown.findIndex((l) => re.test(l));
    const order = [
      /: queued · /,
      /: running · /,
      /^thinking: The user wants the failing test/,
      /^Let me run the tests first\.$/,
      /^→ Bash bun test test\/jobs\.test\.ts$/,
      /^✓ \(fail\) cancel > sends SIGTERM \[12\.01ms\] 41 pass 1 fail$/,
      /^One test fails/,
      /: succeeded · \d+s · 2 turns · 38,185 tokens · \$0\.0412$/,
    ].map(at);
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(r.stderr).not.toContain("\x1b[");
    expect(r.stdout).toContain("Status:   succeeded");
  });

  it("-w on a terminal: tool calls as lines, and one status line (elapsed, turns, tokens) redrawn in place", async () => {
    const tmux = tmuxBinary();
    if (!tmux) return;
    const hang = await start({ env: { FAKE_CLAUDE_HANG: "1", FAKE_CLAUDE_SCENARIO: "thinking-tool-final" } });
    const term = tmuxSession(tmux, { ...envFor(hang), TERM: "xterm-256color" }, [join(await compiledClis(), "service-cli"), "run", "Explain slowly", "-w"], {
      x: 120,
      y: 20,
    });
    try {
      await term.waitFor(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] job [0-9a-f]{8}: running · [1-9]s · 2 turns · 40,\d{3} tokens/);
      const screen = term.screen();
      expect(screen).toContain("→ Bash bun test test/jobs.test.ts");
      expect(screen).toContain("Let me run the tests first.");
      // One status line, redrawn: it never scrolls.
      expect(screen.split("\n").filter((l) => / job [0-9a-f]{8}: /.test(l)).length).toBe(1);
      const [job] = ((await (await hang.call("/jobs")).json()) as { jobs: Job[] }).jobs;
      await hang.call(`/jobs/${job!.id}`, { method: "DELETE" });
      await term.waitFor("EXITED:1");
      expect(term.screen()).toContain("Status:   cancelled");
    } finally {
      term.kill();
    }
  });

  it("job --follow replays a finished job's events and exits with its outcome", async () => {
    const [job] = ((await (await o.call("/jobs?status=succeeded&limit=1")).json()) as { jobs: Job[] }).jobs;
    const r = await svc(["job", job!.id, "--follow"], env);
    expect(r.code).toBe(0);
    expect(lines(r.stderr)[0]).toMatch(/: queued · /);
    expect(r.stderr).toMatch(/: succeeded · /);
    expect(r.stdout).toContain("Status:   succeeded");
  });

  it("sends --profile, --base-ref and --session-id", async () => {
    const session = crypto.randomUUID();
    const r = await svc(["run", "Look around", "-r", remote.url, "-p", "review", "--base-ref", "main", "--session-id", session, "--json", "--wait"], env);
    expect(r.code).toBe(0);
    const job = JSON.parse(r.stdout) as Job;
    expect(job).toMatchObject({ profile: "review", base_ref: "main", session_id: session, status: "succeeded" });
  });

  it("--wait exits 1 when the job fails", async () => {
    const failing = await start({ env: { FAKE_CLAUDE_EXIT: "1", FAKE_CLAUDE_SCENARIO: "none" } });
    const r = await svc(["run", "Explain something", "-w"], envFor(failing));
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("Status:   failed");
  });

  it("exits 2 when the server rejects the input (bad repository URL, unknown profile)", async () => {
    const bad = await svc(["run", "x", "-r", "ftp://example.com/r.git"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("400");
    expect(bad.stderr).toContain("repo_url");
    const unknown = await svc(["run", "x", "-p", "no-such-profile"], env);
    expect(unknown.code).toBe(2);
  });

  it("exits 2 without a task", async () => {
    expect((await svc(["run"], env)).code).toBe(2);
  });
});

describe("jobs", () => {
  it("prints a table with the columns ID, STATUS, PROFILE, TASK, newest first", async () => {
    const job = await o.until((await o.submit({ task: "Explain the table\nsecond line" })).id, finished);
    const r = await svc(["jobs"], env);
    expect(r.code).toBe(0);
    const [head, first] = r.stdout.trimEnd().split("\n");
    expect(head).toMatch(/^ID\s+STATUS\s+PROFILE\s+TASK$/);
    expect(first).toMatch(new RegExp(`^${job.id}\\s+succeeded\\s+\\w+\\s+Explain the table second line$`));
  });

  it("--limit/-n and --status/-s filter; --json prints only JSON", async () => {
    const r = await svc(["jobs", "-n", "2", "-s", "succeeded", "--json"], env);
    expect(r.code).toBe(0);
    const { jobs } = JSON.parse(r.stdout) as { jobs: Job[] };
    expect(jobs.length).toBe(2);
    expect(jobs.every((j) => j.status === "succeeded")).toBe(true);
    const long = await svc(["jobs", "--limit", "1"], env);
    expect(long.stdout.trimEnd().split("\n")).toHaveLength(2);
  });

  it("lists 20 jobs by default", async () => {
    const fresh = await start();
    for (let i = 0; i < 22; i++) writeJob(fresh.jobsDir, jobRecord({ task: `Stored ${i}` }));
    const r = await svc(["jobs", "--json"], envFor(fresh));
    expect((JSON.parse(r.stdout) as { jobs: Job[] }).jobs).toHaveLength(20);
  });

  it("says so when there are none", async () => {
    const empty = await start();
    const r = await svc(["jobs", "-s", "cancelled"], envFor(empty));
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("No jobs with status cancelled.");
  });

  it("exits 2 for a bad --limit or --status", async () => {
    for (const args of [
      ["-n", "0"],
      ["-n", "1001"],
      ["-n", "ten"],
      ["-s", "done"],
    ]) {
      const r = await svc(["jobs", ...args], env);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
    }
  });
});

describe("job", () => {
  it("prints the job's details", async () => {
    const job = await o.until((await o.submit({ task: "Explain the details" })).id, finished);
    const r = await svc(["job", job.id], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Job:      ${job.id}`);
    expect(r.stdout).toContain("Status:   succeeded");
    expect(r.stdout).toContain("Task:     Explain the details");
    expect(r.stdout).toContain(`Output:\n${job.output}`);
  });

  it("truncates the output to 2000 characters with a note; --json prints all of it", async () => {
    const output = `${"a".repeat(1990)}${"b".repeat(3000)}`;
    const job = writeJob(o.jobsDir, jobRecord({ output }));
    const r = await svc(["job", job.id], env);
    expect(r.code).toBe(0);
    const shown = r.stdout.split("Output:\n")[1]!;
    expect(shown.startsWith(`${"a".repeat(1990)}${"b".repeat(10)}\n`)).toBe(true);
    expect(shown).not.toContain("b".repeat(11));
    expect(shown).toContain(`output truncated: 2000 of 4990 characters shown (service-cli job ${job.id} --json prints all of it)`);
    const json = await svc(["job", job.id, "--json"], env);
    expect((JSON.parse(json.stdout) as Job).output).toBe(output);
  });

  it("shows a running job's agent retrying the model API", async () => {
    const retry = { attempt: 3, max_retries: 10, retry_delay_ms: 2300, error_status: 529, error: "overloaded", at: new Date().toISOString() };
    const job = writeJob(o.jobsDir, jobRecord({ status: "running", finished_at: null, pod_name: "another-pod", api_retry: retry }));
    const r = await svc(["job", job.id], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Retrying: model API attempt 3 of 10 after HTTP 529 overloaded");
  });

  it("exits 1 for a job that does not exist, 2 for something that is not a job id", async () => {
    const missing = await svc(["job", Bun.randomUUIDv7()], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("404 job_not_found");
    const typo = await svc(["job", "not-an-id"], env);
    expect(typo.code).toBe(2);
  });
});

describe("cancel", () => {
  it("cancels a running job (exit 0), and a finished one is exit 1", async () => {
    const hang = await start({ env: { FAKE_CLAUDE_HANG: "1" } });
    const e = envFor(hang);
    const job = await hang.submit({ task: "Explain until stopped" });
    await hang.until(job.id, (j) => j.status === "running");
    await until(() => hang.agentLog().some((x) => x.event === "start"));
    const r = await svc(["cancel", job.id], e);
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).toContain(`job ${job.id}: cancelled`);
    expect((await hang.job(job.id)).status).toBe("cancelled");
    const again = await svc(["cancel", job.id, "--json"], e);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe("");
    expect(again.stderr).toContain("409 job_finished");
  });
});

describe("profiles", () => {
  it("prints each profile with model, max_turns and auto_pr", async () => {
    const r = await svc(["profiles"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^code\s+.+\n\s+model=sonnet max_turns=80 auto_pr=true/m);
    expect(r.stdout).toMatch(/^review\s+.+\n\s+model=haiku max_turns=20 auto_pr=false/m);
    const json = JSON.parse((await svc(["profiles", "--json"], env)).stdout) as { profiles: Array<{ name: string }> };
    expect(json.profiles.map((p) => p.name)).toEqual(["code", "review"]);
  });
});

describe("usage errors", () => {
  it("exits 2 for an unknown command or a missing argument, with the message on stderr", async () => {
    for (const args of [["no-such-command"], ["job"], ["cancel"], ["hooks"]]) {
      const r = await svc(args, env);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.length).toBeGreaterThan(0);
    }
  });
});
