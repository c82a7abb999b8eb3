// Stores that come back empty or restart (issue 37, part 7), with real engines of the test's
// own: two orchestrator processes (pods) on a redis-server that is restarted with no data — every
// acknowledged job still runs exactly once, reconciled from the job records (the shared jobs
// directory survives Redis) — and a router on a Postgres cluster restarted under load — 503 with
// Retry-After while it is down, then served again with no restart, nothing acknowledged lost.
import { afterAll, describe, expect, it } from "bun:test";
import type { Job } from "../src/orchestrator/jobs/schema";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { finished, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { hasPgCluster, type OwnPostgres, ownPostgres } from "./support/postgres-cluster";
import { hasRedisServer, ownRedis } from "./support/redis-server";
import { routerClient, ROUTER_TEST_TOKEN as TOKEN } from "./support/router-client";
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

describe.skipIf(!hasPgCluster)("the router's Postgres restarted under load", () => {
  let pg: OwnPostgres | undefined;
  let main: MainProcess | undefined;
  afterAll(async () => {
    await main?.stop("SIGKILL");
    pg?.drop();
  });

  it("answers 503 with Retry-After while it is down, serves again once it is back with no restart, and loses nothing acknowledged", async () => {
    pg = ownPostgres();
    pg.start();
    main = await startMain(
      ["--only", "router", "--vault", `${tempDir("pg-restart")}/vault`],
      { KB_ROUTER_TOKEN: TOKEN, DATABASE_URL: pg.url, TICK_INTERVAL_SECONDS: "0" },
      { expect: ["router"], timeoutMs: 30_000 },
    );
    const api = routerClient(() => main!.routerUrl!);
    const acked: string[] = [];
    const statuses = new Map<number, number>();
    let unavailable = 0;
    let retryAfterMissing = 0;
    let phase: "up" | "down" | "back" = "up";
    let servedAfterBack = 0;
    let stop = false;
    let n = 0;
    const client = async () => {
      while (!stop) {
        const word = `kestrelpg${n++}x`;
        const res = await api.ingest(`# Deploy note ${word}\n\nThe ${word} service restarts after a deploy.`, ["deploy"]);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 201) {
          acked.push(word);
          if (phase === "back") servedAfterBack++;
        } else if (res.status === 503) {
          unavailable++;
          expect(res.body.error.code).toBe("index_unavailable");
          if (res.headers.get("retry-after") === null) retryAfterMissing++;
        }
        const found = await api.search(word, 3);
        statuses.set(found.status, (statuses.get(found.status) ?? 0) + 1);
      }
    };
    const clients = Array.from({ length: 4 }, () => client());
    await until(() => acked.length >= 20, { ms: 20_000, what: "ingests before the restart" });
    pg.stop();
    phase = "down";
    await until(() => unavailable >= 5, { ms: 20_000, what: "503s while Postgres is down" });
    pg.start();
    phase = "back";
    await until(() => servedAfterBack >= 20, { ms: 30_000, what: () => `ingests to succeed again (answers so far: ${JSON.stringify([...statuses])})` });
    stop = true;
    await Promise.all(clients);

    expect([...statuses.keys()].sort()).toEqual([200, 201, 503]);
    expect(retryAfterMissing).toBe(0);
    // Every note answered 201 is found.
    const missing: string[] = [];
    for (const word of acked) {
      const res = await api.search(word, 3);
      if (!(res.body.hits as Array<{ title: string }>).some((h) => h.title.includes(word))) missing.push(word);
    }
    expect(missing).toEqual([]);
  }, 180_000);
});
