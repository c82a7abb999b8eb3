// Stores that come back empty or restart (issue 37, part 7), with real engines of the test's
// own: two orchestrator processes (pods) on a redis-server that is restarted with no data — every
// acknowledged job still runs exactly once, reconciled from the job records (the shared jobs
// directory survives Redis) — and a router on a Postgres cluster restarted under load — 503 with
// Retry-After while it is down, then served again with no restart, nothing acknowledged lost.
import { afterAll, describe, expect, it } from "bun:test";
import type { Job } from "../src/orchestrator/jobs/schema";
import { tempDir } from "./support/main-process";
import { finished, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { hasRedisServer, ownRedis } from "./support/redis-server";
import { until } from "./support/until";

const started: Orchestrator[] = [];
const agentPids = new Set<number>();

afterAll(async () => {
  await Promise.all(started.splice(0).map((o) => o.stop("SIGKILL")));
  for (const pid of agentPids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

/** Agent starts per task, over every pod's fixture-agent log. */
function startsByTask(all: Orchestrator[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const o of all) {
    for (const e of o.agentLog()) {
      if (e.pid) agentPids.add(e.pid);
      const task = e.event === "start" ? e.argv?.find((a) => a.startsWith("Explain job ")) : undefined;
      if (task) counts.set(task, (counts.get(task) ?? 0) + 1);
    }
  }
  return counts;
}

describe.skipIf(!hasRedisServer)("Redis restarted with no data under two pods", () => {
  it("every acknowledged job still runs exactly once, soon after Redis is back", async () => {
    const redis = ownRedis({ appendonly: false });
    await redis.start();
    try {
      const jobsDir = tempDir("shared-jobs");
      const pods = await Promise.all(
        [1, 2].map((n) =>
          startOrchestrator({
            startTimeoutMs: 60_000,
            env: {
              REDIS_URL: redis.url,
              REDIS_KEY_PREFIX: "empty-redis",
              SERVICE_JOBS_DIR: jobsDir,
              SERVICE_POD_NAME: `pod-${n}`,
              SERVICE_MAX_PARALLEL_JOBS: "2",
              // The periodic reconcile (every lock) never comes in this test: only Redis coming back may requeue.
              SERVICE_JOB_LOCK_SECONDS: "600",
              FAKE_CLAUDE_DELAY_MS: "100",
            },
          }),
        ),
      );
      started.push(...pods);
      const acked: string[] = [];
      for (let i = 0; i < 40; i++) acked.push((await pods[i % 2]!.submit({ task: `Explain job r${i}` })).id);
      // Most wait in the queue when Redis loses everything it held.
      await redis.kill();
      await redis.start();
      const t0 = Date.now();
      const jobs = await until(
        async () => {
          const all = await Promise.all(acked.map((id) => pods[1]!.job(id)));
          return all.every(finished) && all;
        },
        { ms: 60_000, what: "every acknowledged job to finish" },
      ).catch(async (err) => {
        const all: Job[] = await Promise.all(acked.map((id) => pods[1]!.job(id)));
        throw new Error(`${(err as Error).message}: ${all.filter((j) => !finished(j)).length} of 40 not finished\n${pods[0]!.main.output().slice(-3000)}`);
      });
      console.log(`all 40 finished ${Date.now() - t0} ms after Redis came back empty`);
      expect(jobs.filter((j) => j.status !== "succeeded").map((j) => `${j.id}: ${j.status} ${j.error}`)).toEqual([]);
      const starts = startsByTask(pods);
      expect(starts.size).toBe(40);
      expect([...starts.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    } finally {
      await redis.stop();
    }
  }, 180_000);
});
