// Background jobs through the real process: the fixture agent CLI, real git remotes, the job
// files and Redis. Cancel, the gate, drain, shutdown, restart recovery and the Redis fallback.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "redis";
import type { Job } from "../src/orchestrator/jobs/schema";
import { INTERRUPTED_BY_RESTART, INTERRUPTED_BY_STOP } from "../src/orchestrator/jobs/transitions";
import { makeRemote, type Remote } from "./fixtures/git-remote";
import { describeWithRedis, REDIS_URL } from "./support/kv";
import { tempDir } from "./support/main-process";
import { finished, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { startTcpRelay, type TcpRelay } from "./support/tcp-relay";
import { until } from "./support/until";

const running: Orchestrator[] = [];
const start = async (opts: Parameters<typeof startOrchestrator>[0] = {}) => {
  const o = await startOrchestrator(opts);
  running.push(o);
  return o;
};
afterAll(async () => {
  await Promise.all(running.splice(0).map((o) => o.stop("SIGKILL")));
});

let remote: Remote;
beforeAll(() => {
  remote = makeRemote();
});

describe("a job from POST /jobs to its result", () => {
  let o: Orchestrator;
  beforeAll(async () => {
    o = await start();
  });

  it("clones the repository, runs the agent with the profile in a worktree, and stores the result", async () => {
    const submitted = await o.submit({ task: "Review the README", repo_url: remote.url, base_ref: "main" });
    expect(submitted).toMatchObject({ status: "queued", profile: "review", pod_name: "pod-test", repo_url: remote.url });
    const job = await o.until(submitted.id, finished);
    expect(job).toMatchObject({ status: "succeeded", exit_code: 0, error: null, pr_url: null });
    expect(job.output).toBeString();
    expect(job.output!.length).toBeGreaterThan(0);
    expect(job.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(job.usage).not.toBeNull();
    expect(job.started_at! <= job.finished_at!).toBe(true);
    const start = o.agentLog().find((e) => e.event === "start" && e.argv?.includes("Review the README"))!;
    expect(start.argv).toContain("haiku");
    expect(start.cwd).toContain(job.id);
    expect(existsSync(join(o.jobsDir, `${job.id}.json`))).toBe(true);
  });

  it("with profile code, opens the pull request and records its URL", async () => {
    // An agent that changes a file, so there is something to push.
    const writer = await start({ env: { FAKE_CLAUDE_WRITE: "NOTES.md" } });
    const [a, b] = await Promise.all([
      writer.submit({ task: "Fix the typo", repo_url: remote.url, profile: "code" }),
      writer.submit({ task: "Fix the other typo", repo_url: remote.url, profile: "code" }),
    ]);
    const job = await writer.until(a.id, finished);
    const sibling = await writer.until(b.id, finished);
    expect(job.status).toBe("succeeded");
    expect(job.pr_url).toMatch(/^https:\/\/github\.example\/owner\/repo\/pull\/\d+$/);
    // Two jobs of the same moment still get short branch names of their own: the id's random end.
    expect(job.branch).toBe(`agent/${job.id.replaceAll("-", "").slice(-8)}`);
    expect(sibling.branch).toBe(`agent/${sibling.id.replaceAll("-", "").slice(-8)}`);
    expect(sibling.branch).not.toBe(job.branch);
  });

  it("never prints GITHOST_TOKEN: a refused push that echoes it is stored and logged as ***", async () => {
    const token = "ghp_realProcessSecret9876";
    const refusing = makeRemote();
    refusing.refusePushes(`policy: pushes denied for ${token}`);
    const withToken = await start({ env: { FAKE_CLAUDE_WRITE: "NOTES.md", GITHOST_TOKEN: token, LOG_LEVEL: "4" } });
    const job = await withToken.until((await withToken.submit({ task: "Fix the typo", repo_url: refusing.url, profile: "code" })).id, finished);
    expect(job.status).toBe("failed");
    expect(job.error).toContain("pushes denied for ***");
    const body = await (await withToken.call(`/jobs/${job.id}`)).text();
    expect(body).not.toContain(token);
    expect(withToken.main.output()).toContain(job.id);
    expect(withToken.main.output()).not.toContain(token);
  });

  it("with wait: true answers 200 with the finished job", async () => {
    const res = await o.call("/jobs", { method: "POST", json: { task: "Explain the layout", wait: true } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Job).status).toBe("succeeded");
  });

  it("answers 400 for a repository URL the runner would refuse", async () => {
    for (const repo_url of ["ftp://example.com/r.git", "relative/path", "https://user:pw@example.com/r.git"]) {
      const res = await o.call("/jobs", { method: "POST", json: { task: "x", repo_url } });
      expect(res.status).toBe(400);
    }
  });
});

describe("the gate in the real process", () => {
  it("runs at most SERVICE_MAX_PARALLEL_JOBS jobs at once, the rest in order", async () => {
    const o = await start({ env: { SERVICE_MAX_PARALLEL_JOBS: "2", FAKE_CLAUDE_DELAY_MS: "30" } });
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push((await o.submit({ task: `Explain part ${i}` })).id);
    const jobs = await Promise.all(ids.map((id) => o.until(id, finished, 30_000)));
    expect(jobs.every((j) => j.status === "succeeded")).toBe(true);
    // Each job's [started_at, finished_at] holds its agent's run: never more than 2 overlap.
    const edges = jobs.flatMap((j) => [[Date.parse(j.started_at!), 1] as const, [Date.parse(j.finished_at!), -1] as const]);
    edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let now = 0;
    let peak = 0;
    for (const [, d] of edges) {
      now += d;
      peak = Math.max(peak, now);
    }
    expect(peak).toBeLessThanOrEqual(2);
    // FIFO: started in the order submitted.
    const started = [...jobs].sort((a, b) => a.started_at!.localeCompare(b.started_at!)).map((j) => j.id);
    expect(started).toEqual(ids);
  });
});

describe("cancel, drain and shutdown with an agent that runs until stopped", () => {
  let o: Orchestrator;
  beforeAll(async () => {
    o = await start({ env: { FAKE_CLAUDE_HANG: "1", SERVICE_MAX_PARALLEL_JOBS: "1" } });
  });
  /** The job is running and its agent has started (so a cancel reaches the agent). */
  const agentRunning = async (job: Job, task: string) => {
    await o.until(job.id, (j) => j.status === "running");
    await until(() => o.agentLog().some((e) => e.event === "start" && e.argv?.includes(task)));
  };
  /** Cancels the job and waits for its agent to have exited. */
  const stopJob = async (job: Job) => {
    await o.call(`/jobs/${job.id}`, { method: "DELETE" });
    return o.until(job.id, (j) => j.exit_code !== null);
  };

  it("cancels a running job: the agent gets SIGTERM, the job is cancelled, a second cancel is 409", async () => {
    const job = await o.submit({ task: "Explain everything" });
    await agentRunning(job, "Explain everything");
    const res = await o.call(`/jobs/${job.id}`, { method: "DELETE" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Job).status).toBe("cancelled");
    await until(() => o.agentLog().some((e) => e.event === "signal" && e.signal === "SIGTERM"));
    const after = await o.until(job.id, (j) => j.exit_code !== null);
    expect(after.status).toBe("cancelled");
    const again = await o.call(`/jobs/${job.id}`, { method: "DELETE" });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("job_finished");
  });

  it("cancels a queued job: its agent never starts", async () => {
    const first = await o.submit({ task: "Explain the first" });
    const second = await o.submit({ task: "Explain the second" });
    await agentRunning(first, "Explain the first");
    const res = await o.call(`/jobs/${second.id}`, { method: "DELETE" });
    expect(((await res.json()) as Job).status).toBe("cancelled");
    await stopJob(first);
    expect(o.agentLog().some((e) => e.argv?.includes("Explain the second"))).toBe(false);
  });

  it("drain: 503 with Retry-After while a job runs, then drained once it has ended", async () => {
    const job = await o.submit({ task: "Explain slowly" });
    await agentRunning(job, "Explain slowly");
    let answered = false;
    const draining = o.call("/admin/drain?timeout=30", { method: "POST" }).then((r) => {
      answered = true;
      return r;
    });
    await until(async () => (await o.call("/jobs", { method: "POST", json: { task: "probe" } })).status === 503);
    const refused = await o.call("/jobs", { method: "POST", json: { task: "late" } });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(answered).toBe(false);
    await stopJob(job);
    const res = await draining;
    expect(await res.json()).toEqual({ drained: true, running: 0 });
    const accepted = await o.submit({ task: "Explain afterwards" });
    await agentRunning(accepted, "Explain afterwards");
    await stopJob(accepted);
  });

  it("SIGTERM stops the running agent and records the job failed; a queued job runs after the restart", async () => {
    const own = await start({ env: { FAKE_CLAUDE_HANG: "1", SERVICE_MAX_PARALLEL_JOBS: "1" } });
    const runningJob = await own.submit({ task: "Explain until stopped" });
    const queuedJob = await own.submit({ task: "Explain after the restart" });
    await own.until(runningJob.id, (j) => j.status === "running");
    await until(() => own.agentLog().some((e) => e.event === "start"));
    expect(await own.stop("SIGTERM")).toBe(0);
    expect(own.agentLog().some((e) => e.event === "signal" && e.signal === "SIGTERM")).toBe(true);

    const again = await start({ home: own.home });
    const stopped = await again.job(runningJob.id);
    expect(stopped).toMatchObject({ status: "failed", error: INTERRUPTED_BY_STOP });
    expect((await again.until(queuedJob.id, finished)).status).toBe("succeeded");
  });
});

describe("the job timeout (SERVICE_CLAUDE_TIMEOUT)", () => {
  it("stops an agent that runs past it and records the job failed, saying so", async () => {
    const o = await start({ env: { SERVICE_CLAUDE_TIMEOUT: "1", FAKE_CLAUDE_HANG: "1" } });
    const submitted = await o.submit({ task: "Explain forever" });
    const job = await o.until(submitted.id, finished);
    expect(job.status).toBe("failed");
    expect(job.error).toContain("timeout (1 s)");
    expect(Date.parse(job.finished_at!) - Date.parse(job.started_at!)).toBeGreaterThanOrEqual(1000);
    expect(o.agentLog().some((e) => e.event === "signal" && e.signal === "SIGTERM")).toBe(true);
  });
});

describe("shared-filesystem mode (SERVICE_SHARED_FS_ROOT)", () => {
  it("keeps job state in <root>/job-state/{id}.json, the profile in <root>/jobs/{id}/, and the pod name on the job", async () => {
    const root = tempDir("shared");
    const o = await start({ env: { SERVICE_SHARED_FS_ROOT: root, SERVICE_POD_NAME: "worker-1" } });
    const job = await o.until((await o.submit({ task: "Explain the shared layout", repo_url: remote.url })).id, finished);
    expect(job).toMatchObject({ status: "succeeded", pod_name: "worker-1" });
    expect(existsSync(join(root, "job-state", `${job.id}.json`))).toBe(true);
    expect(existsSync(join(root, "jobs", job.id, "profile.json"))).toBe(true);
    expect(existsSync(join(o.jobsDir, `${job.id}.json`))).toBe(false);
  });
});

describe("restart recovery", () => {
  it("fails this pod's jobs left running by a crash and runs its queued ones; other pods' jobs stay", async () => {
    const o = await start();
    await o.stop("SIGKILL");
    const now = new Date().toISOString();
    const record = (status: Job["status"], pod: string, task: string): Job => ({
      id: Bun.randomUUIDv7(),
      status,
      profile: "review",
      task,
      repo_url: null,
      base_ref: null,
      session_id: null,
      exit_code: null,
      pr_url: null,
      branch: null,
      error: null,
      output: null,
      pod_name: pod,
      created_at: now,
      started_at: status === "running" ? now : null,
      finished_at: null,
      updated_at: now,
      usage: null,
      cost_usd: null,
      total_cost_usd: null,
      num_turns: null,
      duration_ms: null,
      max_budget_usd: null,
      recall: [],
      api_retry: null,
    });
    const crashed = record("running", "pod-test", "Explain the crash");
    const queued = record("queued", "pod-test", "Explain the queue");
    const elsewhere = record("queued", "pod-other", "Explain elsewhere");
    mkdirSync(o.jobsDir, { recursive: true });
    for (const j of [crashed, queued, elsewhere]) writeFileSync(join(o.jobsDir, `${j.id}.json`), JSON.stringify(j));

    const again = await start({ home: o.home });
    expect(await again.job(crashed.id)).toMatchObject({ status: "failed", error: INTERRUPTED_BY_RESTART });
    expect((await again.until(queued.id, finished)).status).toBe("succeeded");
    expect((await again.job(elsewhere.id)).status).toBe("queued");
  });
});

describeWithRedis("jobs in Redis", () => {
  const prefix = `brain-stack-test:${crypto.randomUUID()}`;
  const redis = createClient({ url: REDIS_URL });
  let relay: TcpRelay;
  let o: Orchestrator;
  beforeAll(async () => {
    await redis.connect();
    relay = startTcpRelay({ host: new URL(REDIS_URL).hostname, port: Number(new URL(REDIS_URL).port || 6379) });
    o = await start({ startTimeoutMs: 60_000, env: { REDIS_URL: `redis://127.0.0.1:${relay.port}`, REDIS_KEY_PREFIX: prefix, SERVICE_JOB_TTL: "3600" } });
  });
  afterAll(async () => {
    relay.stop();
    for await (const keys of redis.scanIterator({ MATCH: `${prefix}:*` })) if (keys.length) await redis.del(keys);
    await redis.close();
  });

  it("stores each job under REDIS_KEY_PREFIX:job:{id} with the TTL, and as a job file too", async () => {
    const job = await o.until((await o.submit({ task: "Explain Redis" })).id, finished);
    expect(job.status).toBe("succeeded");
    const ttl = await redis.ttl(`${prefix}:job:${job.id}`);
    expect(ttl).toBeGreaterThan(3500);
    expect(ttl).toBeLessThanOrEqual(3600);
    expect(existsSync(join(o.jobsDir, `${job.id}.json`))).toBe(true);
  });

  it("while Redis is down, new jobs are acknowledged into the job files and readable; once it is back they run, and both are listed", async () => {
    const before = await o.until((await o.submit({ task: "Explain before the outage" })).id, finished);
    relay.cut();
    const during = await o.submit({ task: "Explain during the outage" });
    expect(readdirSync(o.jobsDir)).toContain(`${during.id}.json`);
    expect((await o.job(during.id)).status).toBe("queued");
    const listed = (await (await o.call("/jobs")).json()) as { jobs: Job[] };
    expect(listed.jobs.map((j) => j.id)).toContain(during.id);

    relay.restore();
    expect((await o.until(during.id, finished, 30_000)).status).toBe("succeeded");
    const all = (await (await o.call("/jobs?limit=1000")).json()) as { jobs: Job[] };
    expect(all.jobs.some((j) => j.id === before.id) && all.jobs.some((j) => j.id === during.id)).toBe(true);
  });

  it("starts with Redis down, acknowledges jobs into the files and keeps them queued until Redis answers", async () => {
    const dead = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = dead.port;
    dead.stop(true);
    const down = await start({ startTimeoutMs: 60_000, env: { REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_KEY_PREFIX: prefix } });
    expect(down.main.output()).toContain("Starting on the file fallback");
    const res = await down.call("/jobs", { method: "POST", json: { task: "Explain without Redis" } });
    expect(res.status).toBe(202);
    const job = (await res.json()) as Job;
    expect(readdirSync(down.jobsDir)).toContain(`${job.id}.json`);
    expect((await down.job(job.id)).status).toBe("queued");
  });
});
