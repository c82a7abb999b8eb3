// Jobs benchmark (issue 4): the orchestrator (`bun src/main.ts --only orchestrator`) with an
// instant agent (a shell script that prints an init and a result line and logs when it started
// and exited) against a cached local repository. Prints, asserts nothing:
//   1. one job at a time: submit → agent started, agent exit → job stored (the service's own cost);
//   2. 200 jobs at SERVICE_MAX_PARALLEL_JOBS=3: jobs/s, and per job: taken from the queue → agent
//      started, agent exit → job stored;
//   3. with 1,000 stored jobs (fresh process): RSS, and GET /jobs latency;
//   4. the real Claude Code CLI against the fixture Anthropic API (instant answers): submit →
//      first request at the API, and the CLI's result line → job stored, beside the CLI alone
//      (lib/real-cli.ts); and the image size when one is built locally.
//
//   bun run bench jobs
//   BENCH_JOBS=500 BENCH_PARALLEL=4 BENCH_STORED=5000 bun scripts/bench/jobs.ts
//   BENCH_REAL_JOBS=0 bun scripts/bench/jobs.ts   (skip part 4; default 10 jobs)
//   BENCH_REDIS_URL=redis://127.0.0.1:6379 bun scripts/bench/jobs.ts   (job store on Redis)
//   5. the shared queue (issue 17, lib/queue-scaling.ts): jobs/s with 1, 2, 3 processes on one Redis
//      (BENCH_REDIS_URL, else REDIS_URL, else 127.0.0.1:6379), the scaling ratio, and the queue's
//      overhead per job against the embedded queue. BENCH_QUEUE_JOBS=90 jobs per process count.
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { createClient } from "redis";
import { type JobInput, ServiceClient } from "../../src/orchestrator/client.ts";
import { tempDir } from "../../test/support/main-process.ts";
import { logTail, rssMb, type Started, startService } from "../../test/support/process.ts";
import { envNum } from "./lib/env.ts";
import { queueScaling } from "./lib/queue-scaling.ts";
import { benchRealCli, imageSize, REAL_CLAUDE } from "./lib/real-cli.ts";
import { median, percentile } from "./lib/stats.ts";
import { judged, num, table } from "./lib/table.ts";

const KEY = "bench-jobs-key";
const HEADERS = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };

const settings = {
  jobs: envNum("BENCH_JOBS", 200),
  parallel: envNum("BENCH_PARALLEL", 3),
  serial: envNum("BENCH_SERIAL_JOBS", 20),
  stored: envNum("BENCH_STORED", 1000),
  listRequests: envNum("BENCH_LIST_REQUESTS", 200),
  realJobs: process.env.BENCH_REAL_JOBS === "0" ? 0 : envNum("BENCH_REAL_JOBS", 10),
  redisUrl: process.env.BENCH_REDIS_URL,
};
const TARGET = { overheadP50Ms: 100 };

const tmp = tempDir("brain-bench-jobs");
const redisPrefix = `bench-jobs-${process.pid}`;
const agentLog = join(tmp, "agent.log");
let server: Started | undefined;

async function cleanup(): Promise<void> {
  await server?.stop();
  rmSync(tmp, { recursive: true, force: true });
  if (settings.redisUrl) {
    const redis = createClient({ url: settings.redisUrl });
    await redis.connect();
    for await (const keys of redis.scanIterator({ MATCH: `${redisPrefix}:*` })) if (keys.length > 0) await redis.del(keys);
    await redis.close();
  }
}
process.on("SIGINT", () => void cleanup().finally(() => process.exit(130)));

function sh(cmd: string[], cwd: string): void {
  const r = Bun.spawnSync(cmd, {
    cwd,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, GIT_AUTHOR_NAME: "b", GIT_AUTHOR_EMAIL: "b@b", GIT_COMMITTER_NAME: "b", GIT_COMMITTER_EMAIL: "b@b" },
  });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")}: ${r.stderr.toString()}`);
}

/** A bare repository with a few files, as a file:// remote. */
function makeRemote(): string {
  const bare = join(tmp, "remote.git");
  const work = join(tmp, "work");
  sh(["git", "init", "--quiet", "--bare", "-b", "main", bare], tmp);
  sh(["git", "init", "--quiet", "-b", "main", work], tmp);
  for (let i = 0; i < 50; i++) writeFileSync(join(work, `file-${i}.txt`), `line\n`.repeat(100));
  sh(["git", "add", "."], work);
  sh(["git", "commit", "--quiet", "-m", "seed"], work);
  sh(["git", "push", "--quiet", bare, "main"], work);
  return `file://${bare}`;
}

/** The instant agent: logs its start (ms) and arguments, prints Claude Code's init and result lines, logs its exit. */
function writeAgent(): string {
  const path = join(tmp, "instant-agent");
  const init = JSON.stringify({
    type: "system",
    subtype: "init",
    cwd: "/",
    session_id: "00000000-0000-4000-8000-000000000000",
    tools: [],
    mcp_servers: [],
    model: "bench",
    permissionMode: "default",
  });
  const result = JSON.stringify({
    type: "result",
    subtype: "success",
    is_error: false,
    duration_ms: 1,
    num_turns: 1,
    session_id: "00000000-0000-4000-8000-000000000000",
    total_cost_usd: 0,
    usage: { input_tokens: 1, output_tokens: 1 },
    result: "done",
  });
  writeFileSync(
    path,
    `#!/bin/sh
echo "start $(date +%s%3N) $*" >> "$BENCH_AGENT_LOG"
printf '%s\\n' '${init}'
printf '%s\\n' '${result}'
echo "exit $(date +%s%3N) $*" >> "$BENCH_AGENT_LOG"
`,
  );
  chmodSync(path, 0o755);
  return path;
}

interface AgentTimes {
  start: number;
  exit: number;
}

/** Agent start and exit times by task marker (`bench-<n>`). */
function readAgentLog(): Map<string, AgentTimes> {
  const out = new Map<string, AgentTimes>();
  if (!existsSync(agentLog)) return out;
  for (const line of readFileSync(agentLog, "utf8").split("\n")) {
    const m = /^(start|exit) (\d+) .*?(bench-[a-z]+-\d+)/.exec(line);
    if (!m) continue;
    const t = out.get(m[3]!) ?? { start: Number.NaN, exit: Number.NaN };
    t[m[1] as "start" | "exit"] = Number(m[2]);
    out.set(m[3]!, t);
  }
  return out;
}

interface JobRecord {
  id: string;
  status: string;
  task: string;
  started_at: string | null;
  finished_at: string | null;
}

async function startOrchestrator(env: Record<string, string>): Promise<{ url: string; server: Started }> {
  const started = await startService("orchestrator", {
    cwd: tmp,
    env: {
      PATH: process.env.PATH,
      HOME: join(tmp, "home"),
      SERVICE_API_KEYS: KEY,
      // The bench repository is a local bare one (file://).
      SERVICE_ALLOW_LOCAL_REPOS: "1",
      SERVICE_OTEL_ENABLED: "false",
      SERVICE_POD_NAME: "bench",
      SERVICE_JOBS_DIR: join(tmp, "jobs"),
      SERVICE_REPOS_ROOT: join(tmp, "repos"),
      SERVICE_WORKTREE_ROOT: join(tmp, "worktrees"),
      SERVICE_JOB_TTL: String(7 * 86400),
      BENCH_AGENT_LOG: agentLog,
      // The instant agent logs its start and exit there: the operator passes that variable on to it.
      SERVICE_AGENT_ENV: "BENCH_AGENT_LOG",
      LOG_LEVEL: "1",
      ...(settings.redisUrl ? { REDIS_URL: settings.redisUrl, REDIS_KEY_PREFIX: redisPrefix } : {}),
      ...env,
    },
    logPath: join(tmp, "service.log"),
  });
  return { url: started.url, server: started };
}

const client = (url: string) => new ServiceClient({ baseUrl: url, token: KEY });

async function submit(url: string, body: JobInput): Promise<JobRecord> {
  return client(url)
    .submitJob(body, { waitTimeoutMs: 600_000 })
    .catch((err: Error) => {
      throw new Error(`POST /jobs answered ${err.message}`);
    });
}

async function allJobs(url: string): Promise<JobRecord[]> {
  return (await client(url).listJobs({ limit: 1000 })).jobs;
}

async function waitFinished(url: string, ids: Set<string>, timeoutMs = 300_000): Promise<JobRecord[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const jobs = (await allJobs(url)).filter((j) => ids.has(j.id));
    if (jobs.length === ids.size && jobs.every((j) => j.finished_at !== null)) return jobs;
    if (Date.now() > deadline) throw new Error(`jobs not finished within ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

const fmt = (values: number[]) => `${num(percentile(values, 50), 1)} / ${num(percentile(values, 99), 1)}`;

async function main(): Promise<number> {
  const repo = makeRemote();
  const agent = writeAgent();
  console.log(`jobs bench: ${settings.serial} serial jobs, then ${settings.jobs} at parallel ${settings.parallel}, then ${settings.stored} stored jobs`);
  console.log(`store: ${settings.redisUrl ? "Redis + files" : "files"}; bun ${Bun.version}, ${availableParallelism()} cores\n`);

  const first = await startOrchestrator({ SERVICE_CLAUDE_BINARY: agent, SERVICE_MAX_PARALLEL_JOBS: String(settings.parallel) });
  server = first.server;
  const base = first.url;

  // Warm-up: the first job clones the repository into the cache.
  const warm = await submit(base, { task: "Explain bench-warm-0", repo_url: repo, wait: true });
  if (warm.status !== "succeeded") throw new Error(`warm-up job ${warm.status}: ${JSON.stringify(warm)}\n${logTail(server.logPath)}`);

  // 1. One job at a time.
  const serialSubmit = new Map<string, number>();
  const serialIds = new Set<string>();
  for (let i = 0; i < settings.serial; i++) {
    const marker = `bench-serial-${i}`;
    const t = Date.now();
    const job = await submit(base, { task: `Explain ${marker}`, repo_url: repo, wait: true });
    serialSubmit.set(marker, t);
    serialIds.add(job.id);
  }
  const serialJobs = await waitFinished(base, serialIds);

  // 2. Many jobs through the gate.
  const t0 = Date.now();
  const ids = new Set<string>();
  await Promise.all(
    Array.from({ length: settings.jobs }, async (_, i) => {
      ids.add((await submit(base, { task: `Explain bench-load-${i}`, repo_url: repo })).id);
    }),
  );
  const loadJobs = await waitFinished(base, ids);
  const wallMs = Math.max(...loadJobs.map((j) => Date.parse(j.finished_at!))) - t0;
  const agents = readAgentLog();

  const markerOf = (j: JobRecord) => /bench-[a-z]+-\d+/.exec(j.task)![0];
  const serialStart: number[] = [];
  const serialQueue: number[] = [];
  const serialSpawn: number[] = [];
  const serialStore: number[] = [];
  for (const j of serialJobs) {
    const a = agents.get(markerOf(j));
    if (!a) continue;
    const submitted = serialSubmit.get(markerOf(j))!;
    serialStart.push(a.start - submitted);
    serialQueue.push(Date.parse(j.started_at!) - submitted);
    serialSpawn.push(a.start - Date.parse(j.started_at!));
    serialStore.push(Date.parse(j.finished_at!) - a.exit);
  }
  const loadStart: number[] = [];
  const loadStore: number[] = [];
  for (const j of loadJobs) {
    const a = agents.get(markerOf(j));
    if (!a) continue;
    loadStart.push(a.start - Date.parse(j.started_at!));
    loadStore.push(Date.parse(j.finished_at!) - a.exit);
  }
  const failed = [...serialJobs, ...loadJobs].filter((j) => j.status !== "succeeded").length;
  const rssAfterLoad = rssMb(server.pid);
  await server.stop();
  server = undefined;

  // 3. Stored jobs: top up to `stored` records, start a fresh process, measure.
  const existing = settings.serial + settings.jobs + 1;
  if (!settings.redisUrl) {
    const now = new Date().toISOString();
    for (let i = existing; i < settings.stored; i++) {
      const id = Bun.randomUUIDv7();
      writeFileSync(
        join(tmp, "jobs", `${id}.json`),
        JSON.stringify({
          id,
          status: "succeeded",
          profile: "review",
          task: `Explain stored ${i}`,
          repo_url: repo,
          base_ref: null,
          session_id: null,
          exit_code: 0,
          pr_url: null,
          branch: null,
          error: null,
          output: "done",
          pod_name: "bench",
          created_at: now,
          started_at: now,
          finished_at: now,
          updated_at: now,
          usage: { input_tokens: 1, output_tokens: 1 },
          cost_usd: 0,
        }),
      );
    }
  }
  const second = await startOrchestrator({ SERVICE_CLAUDE_BINARY: agent });
  server = second.server;
  const fresh = second.url;
  if (settings.redisUrl) {
    for (let i = existing; i < settings.stored; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, settings.stored - i) }, (_, k) => submit(fresh, { task: `Explain bench-stored-${i + k}` })));
    }
  }
  await Bun.sleep(1000);
  const rssStored = rssMb(server.pid);
  const listLatency = async (query: string) => {
    const samples: number[] = [];
    for (let i = 0; i < settings.listRequests; i++) {
      const t = performance.now();
      const res = await fetch(`${fresh}/jobs${query}`, { headers: HEADERS });
      await res.arrayBuffer();
      samples.push(performance.now() - t);
    }
    return samples;
  };
  const list20 = await listLatency("");
  const list1000 = await listLatency("?limit=1000");
  const listFailed = await listLatency("?status=failed");
  const rssAfterLists = rssMb(server.pid);
  const stored = (await allJobs(fresh)).length;
  await server.stop();
  server = undefined;

  // 4. The real CLI against the fixture Anthropic API.
  const real =
    settings.realJobs > 0 && existsSync(REAL_CLAUDE)
      ? await benchRealCli({
          tmp,
          jobs: settings.realJobs,
          startService: async (env) => {
            const s = await startOrchestrator({ ...env, SERVICE_JOBS_DIR: join(tmp, "jobs-real") });
            server = s.server;
            return {
              url: s.url,
              stop: async () => {
                await s.server.stop();
                server = undefined;
              },
            };
          },
          submit,
        })
      : undefined;
  const realRows = real
    ? [
        [`real CLI (${real.jobs.length} jobs): submit → first request at the API, p50 / p99 (ms)`, fmt(real.jobs.map((s) => s.toFirstRequest)), "—"],
        [`  floor: the CLI alone, spawn → first request`, fmt(real.direct.map((s) => s.toFirstRequest)), "—"],
        [
          `real CLI: result line → job stored, p50 / p99 (ms)`,
          fmt(real.jobs.map((s) => s.resultToDone)),
          judged(
            `p50 < ${TARGET.overheadP50Ms} ms`,
            percentile(
              real.jobs.map((s) => s.resultToDone),
              50,
            ) < TARGET.overheadP50Ms,
          ),
        ],
        [`  floor: the CLI alone, result line → process exit`, fmt(real.direct.map((s) => s.resultToDone)), "—"],
        ["real CLI jobs not succeeded", String(real.failed), "0"],
      ]
    : [["real CLI", settings.realJobs === 0 ? "skipped (BENCH_REAL_JOBS=0)" : `not installed at ${REAL_CLAUDE} (bun install)`, "—"]];

  const rows = [
    ["figure", "value", "target"],
    [
      `serial (${serialJobs.length}): submit → agent started, p50 / p99 (ms)`,
      fmt(serialStart),
      judged(`p50 < ${TARGET.overheadP50Ms} ms`, percentile(serialStart, 50) < TARGET.overheadP50Ms),
    ],
    [`  of which submit → taken from the queue (store, gate)`, fmt(serialQueue), "—"],
    [`  of which taken → agent started (fetch, worktree, spawn)`, fmt(serialSpawn), "—"],
    [
      `serial: agent exit → job stored, p50 / p99 (ms)`,
      fmt(serialStore),
      judged(`p50 < ${TARGET.overheadP50Ms} ms`, percentile(serialStore, 50) < TARGET.overheadP50Ms),
    ],
    [`load (${loadJobs.length} at parallel ${settings.parallel}): jobs/s`, num((loadJobs.length / wallMs) * 1000, 1), "—"],
    [
      `load: taken from the queue → agent started, p50 / p99 (ms)`,
      fmt(loadStart),
      judged(`p50 < ${TARGET.overheadP50Ms} ms`, percentile(loadStart, 50) < TARGET.overheadP50Ms),
    ],
    [
      `load: agent exit → job stored, p50 / p99 (ms)`,
      fmt(loadStore),
      judged(`p50 < ${TARGET.overheadP50Ms} ms`, percentile(loadStore, 50) < TARGET.overheadP50Ms),
    ],
    ["jobs not succeeded", String(failed), "0"],
    ["RSS after the load (MB)", num(rssAfterLoad, 1), "—"],
    [`RSS idle with ${stored} stored jobs (MB)`, num(rssStored, 1), "—"],
    [`GET /jobs (20 of ${stored}), p50 / p99 (ms)`, fmt(list20), "—"],
    [`GET /jobs?limit=1000, p50 / p99 (ms)`, fmt(list1000), "—"],
    [`GET /jobs?status=failed (reads every record), p50 / p99 (ms)`, fmt(listFailed), "—"],
    ["RSS after the list requests (MB)", num(rssAfterLists, 1), "—"],
    ...realRows,
    ["image size", imageSize(), "—"],
  ];
  console.log(table(rows));
  console.log(`\nmedians: serial start ${num(median(serialStart), 1)} ms, load start ${num(median(loadStart), 1)} ms`);
  await sharedQueueSection();
  return 0;
}

/** Issue 17: the BullMQ queue with 1, 2, 3 processes, and its overhead against the embedded queue (lib/queue-scaling.ts). */
async function sharedQueueSection(): Promise<void> {
  const url = settings.redisUrl ?? process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  console.log(`\nshared queue: BullMQ on ${url.replace(/\/\/[^@/]*@/, "//****@")}`);
  try {
    const rows = await queueScaling({ redisUrl: url, jobs: envNum("BENCH_QUEUE_JOBS", 90), parallel: settings.parallel, serial: settings.serial });
    console.log(table([["figure", "value", "peer / floor"], ...rows]));
  } catch (err) {
    console.log(`skipped: ${err instanceof Error ? err.message : String(err)}`);
  }
}

let code = 1;
try {
  code = await main();
} catch (err) {
  console.error(`jobs bench could not run: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  if (server) console.error(logTail(server.logPath));
} finally {
  await cleanup();
}
process.exit(code);
