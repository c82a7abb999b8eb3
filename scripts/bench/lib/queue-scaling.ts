// The shared queue (issue 17), for scripts/bench/jobs.ts: orchestrator processes on one Redis
// (BullMQ) with an instant agent and no repository, so what is measured is the queue and the
// service, not git or the agent.
//   1. jobs/s with one, two and three processes (all jobs submitted to the first), and the
//      scaling ratio beside the ideal (linear; on a machine with fewer cores than processes the
//      processes share the CPU, so the ceiling is lower — the core count is printed);
//   2. queue overhead per job, submit → taken from the queue (the record's started_at), one job at
//      a time: BullMQ against the embedded in-process queue (no REDIS_URL) in the same run.
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { createClient } from "redis";
import { ServiceClient } from "../../../src/orchestrator/client.ts";
import { tempDir } from "../../../test/support/main-process.ts";
import { type Started, startService } from "../../../test/support/process.ts";
import { percentile } from "./stats.ts";
import { num } from "./table.ts";

const KEY = "bench-queue-key";

export interface QueueScalingOptions {
  redisUrl: string;
  /** Jobs per process count (default 90). */
  jobs?: number;
  /** SERVICE_MAX_PARALLEL_JOBS of each process (default 3). */
  parallel?: number;
  /** Serial jobs for the overhead figure (default 20). */
  serial?: number;
}

type Job = { id: string; status: string; started_at: string | null; finished_at: string | null; pod_name: string };

/** Rows [figure, value, peer/floor] for the jobs bench's table. */
export async function queueScaling(opts: QueueScalingOptions): Promise<string[][]> {
  const jobs = opts.jobs ?? 90;
  const parallel = opts.parallel ?? 3;
  const serial = opts.serial ?? 20;
  const tmp = tempDir("brain-bench-queue");
  const prefixes: string[] = [];
  const servers: Started[] = [];
  const agent = join(tmp, "instant-agent");
  const sid = "00000000-0000-4000-8000-000000000000";
  writeFileSync(
    agent,
    `#!/bin/sh
printf '%s\\n' '${JSON.stringify({ type: "system", subtype: "init", cwd: "/", session_id: sid, tools: [], mcp_servers: [], model: "bench", permissionMode: "default" })}'
printf '%s\\n' '${JSON.stringify({ type: "result", subtype: "success", is_error: false, duration_ms: 1, num_turns: 1, session_id: sid, total_cost_usd: 0, usage: { input_tokens: 1, output_tokens: 1 }, result: "done" })}'
`,
  );
  chmodSync(agent, 0o755);

  const start = async (n: number, redis: boolean): Promise<string[]> => {
    const prefix = `bench-queue-${process.pid}-${prefixes.length}`;
    prefixes.push(prefix);
    const jobsDir = join(tmp, prefix, "jobs");
    mkdirSync(jobsDir, { recursive: true });
    const urls: string[] = [];
    await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const home = join(tmp, prefix, `home-${i}`);
        mkdirSync(home, { recursive: true });
        const service = await startService("orchestrator", {
          cwd: home,
          env: {
            PATH: process.env.PATH,
            HOME: home,
            SERVICE_API_KEYS: KEY,
            SERVICE_OTEL_ENABLED: "false",
            SERVICE_POD_NAME: `bench-${i + 1}`,
            SERVICE_JOBS_DIR: jobsDir,
            SERVICE_CLAUDE_BINARY: agent,
            SERVICE_MAX_PARALLEL_JOBS: String(parallel),
            LOG_LEVEL: "1",
            ...(redis ? { REDIS_URL: opts.redisUrl, REDIS_KEY_PREFIX: prefix } : {}),
          },
          logPath: join(home, "service.log"),
          timeoutMs: 60_000,
        });
        servers.push(service);
        urls.push(service.url);
      }),
    );
    return urls;
  };
  const stopAll = async () => {
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  };
  const submit = async (url: string, task: string): Promise<Job> => {
    return new ServiceClient({ baseUrl: url, token: KEY }).submitJob({ task }).catch((err: Error) => {
      throw new Error(`POST /jobs answered ${err.message}`);
    });
  };
  const finished = async (url: string, ids: string[]): Promise<Job[]> => {
    const deadline = Date.now() + 300_000;
    for (;;) {
      const all = (await new ServiceClient({ baseUrl: url, token: KEY }).listJobs({ limit: 1000 })).jobs;
      const mine = all.filter((j) => ids.includes(j.id));
      if (mine.length === ids.length && mine.every((j) => j.finished_at !== null)) return mine;
      if (Date.now() > deadline) throw new Error("jobs did not finish within 300 s");
      await Bun.sleep(50);
    }
  };

  try {
    // 1. Throughput with 1, 2, 3 processes.
    const rate = new Map<number, number>();
    const spread = new Map<number, string>();
    for (const n of [1, 2, 3]) {
      const urls = await start(n, true);
      const t0 = performance.now();
      const ids = await Promise.all(Array.from({ length: jobs }, (_, i) => submit(urls[0]!, `Explain queue-${n}-${i}`).then((j) => j.id)));
      const done = await finished(urls[0]!, ids);
      const wallMs = performance.now() - t0;
      rate.set(n, (done.length / wallMs) * 1000);
      const per = Map.groupBy(done, (j) => j.pod_name);
      spread.set(
        n,
        [...per.keys()]
          .sort()
          .map((p) => per.get(p)!.length)
          .join("/"),
      );
      await stopAll();
    }

    // 2. Overhead per job, one at a time: embedded queue, then BullMQ.
    const overhead = async (redis: boolean): Promise<number[]> => {
      const [url] = await start(1, redis);
      const samples: number[] = [];
      for (let i = 0; i < serial; i++) {
        const t = Date.now();
        const job = await submit(url!, `Explain overhead-${i}`);
        const [done] = await finished(url!, [job.id]);
        samples.push(Date.parse(done!.started_at!) - t);
      }
      await stopAll();
      return samples;
    };
    const embedded = await overhead(false);
    const bull = await overhead(true);

    const r1 = rate.get(1)!;
    const cores = availableParallelism();
    const p = (xs: number[]) => `${num(percentile(xs, 50), 1)} / ${num(percentile(xs, 99), 1)}`;
    return [
      ...[1, 2, 3].map((n) => [
        `shared queue, ${n} process${n > 1 ? "es" : ""} × ${parallel} slots (${jobs} instant jobs, per pod ${spread.get(n)}): jobs/s`,
        num(rate.get(n)!, 1),
        n === 1 ? "—" : `ideal ${num(r1 * n, 1)}`,
      ]),
      [`shared queue: scaling 3 processes / 1 (${cores} cores here)`, num(rate.get(3)! / r1, 2), `ideal 3.00, ceiling here ~${num(Math.min(3, cores), 2)}`],
      [`queue overhead, submit → taken (${serial} serial jobs), p50 / p99 (ms): BullMQ`, p(bull), `embedded queue ${p(embedded)}`],
    ];
  } finally {
    await stopAll();
    const redis = createClient({ url: opts.redisUrl });
    await redis.connect().catch(() => undefined);
    if (redis.isReady) {
      for (const prefix of prefixes) for await (const keys of redis.scanIterator({ MATCH: `${prefix}:*` })) if (keys.length > 0) await redis.del(keys);
      await redis.close();
    }
    rmSync(tmp, { recursive: true, force: true });
  }
}
