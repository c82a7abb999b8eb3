// Past one process (issue 17): real orchestrator processes sharing one Redis (BullMQ) and one
// jobs directory, the fixture agent, and for the outage cases a redis-server of the test's own
// that is killed with SIGKILL. What a user of three pods behind a load balancer would notice:
// jobs spread, limits hold, a dead pod loses nothing, cancel and drain reach across pods, and no
// acknowledged job is lost when Redis dies, with or without AOF.
import { afterAll, describe, expect, it } from "bun:test";
import { createClient } from "redis";
import type { Job } from "../src/orchestrator/jobs/schema";
import { describeWithRedis, REDIS_URL } from "./support/kv";
import { tempDir } from "./support/main-process";
import { finished, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { hasRedisServer, type OwnRedis, ownRedis } from "./support/redis-server";
import { until } from "./support/until";

const started: Orchestrator[] = [];
const agentPids = new Set<number>();
const prefixes: string[] = [];

/** `n` orchestrators as pods pod-1… on one Redis and one jobs directory. */
async function pods(n: number, opts: { redisUrl?: string; env?: Record<string, string>; first?: number; prefix?: string; jobsDir?: string } = {}) {
  const prefix = opts.prefix ?? `brain-stack-test:${crypto.randomUUID()}`;
  prefixes.push(prefix);
  const jobsDir = opts.jobsDir ?? tempDir("shared-jobs");
  const out = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      startOrchestrator({
        startTimeoutMs: 60_000,
        env: {
          REDIS_URL: opts.redisUrl ?? REDIS_URL,
          REDIS_KEY_PREFIX: prefix,
          SERVICE_JOBS_DIR: jobsDir,
          SERVICE_POD_NAME: `pod-${(opts.first ?? 1) + i}`,
          SERVICE_MAX_PARALLEL_JOBS: "2",
          SERVICE_JOB_LOCK_SECONDS: "2",
          ...opts.env,
        },
      }),
    ),
  );
  started.push(...out);
  return { pods: out, prefix, jobsDir };
}

/** Agent starts per task, over every pod's fixture-agent log. */
function startsByTask(all: Orchestrator[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const o of all) {
    for (const e of o.agentLog()) {
      if (e.pid) agentPids.add(e.pid);
      if (e.event !== "start") continue;
      const task = e.argv?.find((a) => a.startsWith("Explain job "));
      if (task) counts.set(task, (counts.get(task) ?? 0) + 1);
    }
  }
  return counts;
}

/** Most jobs whose [started_at, finished_at] overlap on one pod. */
function peakPerPod(jobs: Job[]): Map<string, number> {
  const peaks = new Map<string, number>();
  const byPod = Map.groupBy(jobs, (j) => j.pod_name);
  for (const [pod, list] of byPod) {
    const events = list.flatMap((j) => [
      { t: Date.parse(j.started_at!), d: 1 },
      { t: Date.parse(j.finished_at!), d: -1 },
    ]);
    events.sort((a, b) => a.t - b.t || a.d - b.d); // an end and a start at the same ms do not overlap
    let now = 0;
    let peak = 0;
    for (const e of events) {
      now += e.d;
      peak = Math.max(peak, now);
    }
    peaks.set(pod, peak);
  }
  return peaks;
}

const allFinal = async (o: Orchestrator, ids: string[], ms: number): Promise<Job[]> => {
  await until(async () => {
    const jobs = await Promise.all(ids.map((id) => o.job(id)));
    return jobs.every(finished);
  }, ms);
  return Promise.all(ids.map((id) => o.job(id)));
};

afterAll(async () => {
  startsByTask(started);
  await Promise.all(started.splice(0).map((o) => o.stop("SIGKILL")));
  // Agents of a pod killed with SIGKILL outlive it (they run in their own process group).
  for (const pid of agentPids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  const redis = createClient({ url: REDIS_URL });
  await redis.connect().catch(() => undefined);
  if (redis.isReady) {
    for (const prefix of prefixes) for await (const keys of redis.scanIterator({ MATCH: `${prefix}:*` })) if (keys.length) await redis.del(keys);
    await redis.close();
  }
});

describeWithRedis("three orchestrator processes on one Redis", () => {
  it("spread 60 jobs submitted to one process over all three, never more than SERVICE_MAX_PARALLEL_JOBS on a pod, each run once", async () => {
    const {
      pods: [a, ...others],
    } = await pods(3, { env: { FAKE_CLAUDE_DELAY_MS: "25" } });
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push((await a!.submit({ task: `Explain job ${i}` })).id);
    const jobs = await allFinal(a!, ids, 120_000);
    expect(jobs.filter((j) => j.status !== "succeeded")).toEqual([]);
    const perPod = Map.groupBy(jobs, (j) => j.pod_name);
    expect([...perPod.keys()].sort()).toEqual(["pod-1", "pod-2", "pod-3"]);
    for (const [, list] of perPod) expect(list.length).toBeGreaterThanOrEqual(5);
    for (const [, peak] of peakPerPod(jobs)) expect(peak).toBeLessThanOrEqual(2);
    const starts = startsByTask([a!, ...others]);
    expect(starts.size).toBe(60);
    expect([...starts.values()].every((n) => n === 1)).toBe(true);

    // Every pod reads every job, and reports its share on /metrics.
    for (const o of others) expect((await o.job(ids[59]!)).status).toBe("succeeded");
    const metrics = await (await a!.call("/metrics")).text();
    expect(metrics).toContain(`orchestrator_jobs_finished_total{status="succeeded",pod="pod-1"} ${perPod.get("pod-1")!.length}`);
    expect(metrics).toContain('orchestrator_jobs_queued{pod="pod-1"} 0');
    expect(metrics).toContain('orchestrator_jobs_running{pod="pod-1"} 0');
    expect(metrics).toContain('orchestrator_job_slots{pod="pod-1"} 2');
    expect(metrics).toContain('orchestrator_chat_turns_running{pod="pod-1"} 0');
  }, 180_000);

  it("kill -9 of a pod: its running jobs end failed naming it, its queued jobs run on another pod, nothing runs twice", async () => {
    const {
      pods: [victim],
      prefix,
      jobsDir,
    } = await pods(1, { env: { FAKE_CLAUDE_HANG: "1" } });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await victim!.submit({ task: `Explain job k${i}` })).id);
    await until(async () => (await Promise.all(ids.map((id) => victim!.job(id)))).filter((j) => j.status === "running").length === 2);
    const runningThere = (await Promise.all(ids.map((id) => victim!.job(id)))).filter((j) => j.status === "running").map((j) => j.id);
    startsByTask([victim!]); // remember its agents' pids, to clean up
    await victim!.stop("SIGKILL");

    const {
      pods: [survivor],
    } = await pods(1, { prefix, jobsDir, first: 2 });
    // Bound: the lock (2 s) and two stalled checks, or two heartbeat-less sightings.
    const jobs = await allFinal(survivor!, ids, 30_000);
    for (const job of jobs) {
      if (runningThere.includes(job.id)) {
        expect(job.status).toBe("failed");
        expect(job.error).toContain("pod pod-1 stopped while this job ran");
      } else {
        expect(job).toMatchObject({ status: "succeeded", pod_name: "pod-2" });
      }
    }
    const starts = startsByTask([victim!, survivor!]);
    expect([...starts.values()].every((n) => n === 1)).toBe(true);
  }, 60_000);

  it("a cancel sent to another process stops the running job where it runs (SIGTERM), and drain pauses only its own pod", async () => {
    const { pods: both } = await pods(2, { env: { FAKE_CLAUDE_HANG: "1" } });
    const [a, b] = both as [Orchestrator, Orchestrator];
    const job = await a.submit({ task: "Explain job c1" });
    const runningJob = await a.until(job.id, (j) => j.status === "running");
    const [runner, other] = runningJob.pod_name === "pod-1" ? [a, b] : [b, a];
    await until(() => runner.agentLog().some((e) => e.event === "start"));
    const res = await other.call(`/jobs/${job.id}`, { method: "DELETE" });
    expect(res.status).toBe(200);
    await until(() => runner.agentLog().some((e) => e.event === "signal" && e.signal === "SIGTERM"), 10_000);
    expect(await runner.until(job.id, (j) => j.status === "cancelled" && j.exit_code !== null)).toMatchObject({ status: "cancelled" });

    // Drain the pod that runs a job: jobs submitted meanwhile (to either pod) run on the other.
    const held = await a.submit({ task: "Explain job d1" });
    const heldOn = (await a.until(held.id, (j) => j.status === "running")).pod_name;
    const [drainer, spare] = heldOn === "pod-1" ? [a, b] : [b, a];
    const drain = drainer.call("/admin/drain?timeout=60", { method: "POST" });
    await until(async () => (await drainer.call("/jobs", { method: "POST", json: { task: "Explain job refused" } })).status === 503);
    const next = await spare.submit({ task: "Explain job d2" });
    const nextOn = (await spare.until(next.id, (j) => j.status === "running")).pod_name;
    expect(nextOn).not.toBe(heldOn);
    expect(await spare.call(`/jobs/${held.id}`, { method: "DELETE" }).then((r) => r.status)).toBe(200);
    expect(await (await drain).json()).toEqual({ drained: true, running: 0 });
    await spare.call(`/jobs/${next.id}`, { method: "DELETE" });
  }, 60_000);
});

describe.skipIf(!hasRedisServer)("Redis killed under a steady stream of submissions", () => {
  for (const appendonly of [true, false]) {
    it(`every 202-acknowledged job is found and reaches a final state (${appendonly ? "with" : "without"} AOF)`, async () => {
      const redis: OwnRedis = ownRedis({ appendonly });
      await redis.start();
      try {
        const { pods: both } = await pods(2, { redisUrl: redis.url });
        const acked: string[] = [];
        let refused = 0;
        let i = 0;
        const submitFor = async (ms: number) => {
          const end = Date.now() + ms;
          while (Date.now() < end) {
            const o = both[i % 2]!;
            const res = await o
              .call("/jobs", { method: "POST", json: { task: `Explain job s${i++}` }, signal: AbortSignal.timeout(15_000) })
              .catch((err: Error) => {
                throw new Error(`POST /jobs did not answer (${err.message}):\n${o.main.output().slice(-3000)}`);
              });
            if (res.status === 202) acked.push(((await res.json()) as Job).id);
            else {
              expect(res.status).toBe(503);
              expect(res.headers.get("retry-after")).not.toBeNull();
              refused++;
            }
            await Bun.sleep(150); // the pace of the traffic (a steady client), not a wait for work
          }
        };
        await submitFor(2_000);
        await redis.kill();
        await submitFor(3_000);
        await redis.start();
        await submitFor(2_000);
        expect(acked.length).toBeGreaterThan(15);
        // Found on either pod (one jobs directory), and every one ends.
        const jobs = await allFinal(both[1]!, acked, 120_000);
        expect(jobs.map((j) => j.id)).toEqual(acked);
        expect(jobs.filter((j) => j.status !== "succeeded").map((j) => `${j.id}: ${j.status} ${j.error}`)).toEqual([]);
        const starts = startsByTask(both);
        expect([...starts.values()].every((n) => n === 1)).toBe(true);
        console.log(`${appendonly ? "AOF" : "no AOF"}: ${acked.length} acknowledged, ${refused} refused with 503`);
      } finally {
        await redis.stop();
      }
    }, 240_000);
  }
});
