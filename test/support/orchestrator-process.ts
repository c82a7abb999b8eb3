// The orchestrator as a real process (`bun src/main.ts --only orchestrator`) with the fixture
// agent CLI (test/fixtures/fake-claude) and gh (test/fixtures/fake-gh), an API key, and a temp
// HOME; plus the HTTP calls and polls the orchestrator suites share.
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import type { Job } from "../../src/orchestrator/jobs/schema";
import { type MainProcess, startMain, tempDir } from "./main-process";
import { until } from "./until";

export const FIXTURES = join(import.meta.dir, "..", "fixtures");
export const KEY = "orchestrator-test-key";
export const AUTH = { authorization: `Bearer ${KEY}` };

export interface Orchestrator {
  main: MainProcess;
  url: string;
  home: string;
  /** SERVICE_JOBS_DIR. */
  jobsDir: string;
  /** What the fixture agent recorded: one entry per start and per signal it got. */
  agentLog(): Array<{ event: string; argv?: string[]; cwd?: string; signal?: string; pid?: number; at?: number }>;
  call(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  submit(body: Record<string, unknown>): Promise<Job>;
  job(id: string): Promise<Job>;
  /** Polls GET /jobs/{id} until `done(job)`; throws with the last job after `ms`. */
  until(id: string, done: (job: Job) => boolean, ms?: number): Promise<Job>;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

/** SERVICE_AGENT_ENV for the fixture agent: its knobs (FAKE_CLAUDE_*) are the operator's additions to the agent's environment. */
export const FAKE_AGENT_ENV = "FAKE_CLAUDE_*";

export interface OrchestratorOptions {
  env?: Record<string, string>;
  /** Reuse a HOME (and so its jobs directory) from an earlier process. */
  home?: string;
  /** How long start-up may take (default 15 s; several processes starting at once on a busy machine need more). */
  startTimeoutMs?: number;
}

export async function startOrchestrator(opts: OrchestratorOptions = {}): Promise<Orchestrator> {
  const home = opts.home ?? tempDir("orch-home");
  const bin = join(home, "bin");
  if (!existsSync(bin)) {
    mkdirSync(bin, { recursive: true });
    symlinkSync(join(FIXTURES, "fake-gh"), join(bin, "gh"));
  }
  const agentRecord = join(home, "agent.jsonl");
  const jobsDir = join(home, ".service", "jobs");
  const main = await startMain(
    ["--only", "orchestrator"],
    {
      HOME: home,
      PATH: `${bin}:${process.env.PATH ?? ""}`,
      SERVICE_API_KEYS: KEY,
      SERVICE_CLAUDE_BINARY: join(FIXTURES, "fake-claude"),
      SERVICE_OTEL_ENABLED: "false",
      SERVICE_POD_NAME: "pod-test",
      FAKE_CLAUDE_RECORD: agentRecord,
      SERVICE_AGENT_ENV: FAKE_AGENT_ENV,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "Test",
      GIT_AUTHOR_EMAIL: "test@example.com",
      GIT_COMMITTER_NAME: "Test",
      GIT_COMMITTER_EMAIL: "test@example.com",
      ...opts.env,
    },
    { expect: ["orchestrator"], ...(opts.startTimeoutMs !== undefined && { timeoutMs: opts.startTimeoutMs }) },
  );
  const url = main.orchestratorUrl!;
  const call: Orchestrator["call"] = (path, init = {}) => {
    const { json, headers, ...rest } = init;
    return fetch(`${url}${path}`, {
      ...rest,
      headers: { ...AUTH, ...(json !== undefined ? { "content-type": "application/json" } : {}), ...(headers as Record<string, string>) },
      body: json !== undefined ? JSON.stringify(json) : rest.body,
    });
  };
  const job = async (id: string) => {
    const res = await call(`/jobs/${id}`);
    if (res.status !== 200) throw new Error(`GET /jobs/${id} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as Job;
  };
  return {
    main,
    url,
    home,
    jobsDir,
    agentLog: () =>
      existsSync(agentRecord)
        ? readFileSync(agentRecord, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l))
        : [],
    call,
    async submit(body) {
      const res = await call("/jobs", { method: "POST", json: body });
      if (res.status !== 202 && res.status !== 200) throw new Error(`POST /jobs answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as Job;
    },
    job,
    async until(id, done, ms = 15_000) {
      let last: Job | undefined;
      try {
        return await until(
          async () => {
            last = await job(id);
            return done(last) && last;
          },
          { ms, what: `job ${id} to get there` },
        );
      } catch (err) {
        throw new Error(`${(err as Error).message}; last seen: ${JSON.stringify(last)}\n${main.output()}`);
      }
    },
    stop: (signal) => main.stop(signal),
  };
}

export const finished = (job: Job) => job.status !== "queued" && job.status !== "running";
