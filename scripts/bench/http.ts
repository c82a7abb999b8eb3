// HTTP benchmark: GET /health through our full middleware stack (router and orchestrator, each
// `bun src/main.ts --only …`) against a bare Bun.serve answering the same body. Measures start →
// first 200, throughput and latency under load from a separate process (wrk or autocannon), and
// RSS. Prints a table with each figure next to its target; asserts nothing.
//
//   bun run bench http
//   BENCH_SECONDS=10 BENCH_CONNECTIONS=100 bun scripts/bench/http.ts
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { tempDir } from "../../test/support/main-process.ts";
import { cpuMs, freePort, logTail, rssMb, type Started, startAndWait } from "../../test/support/process.ts";
import { envNum } from "./lib/env.ts";
import { describeLoad, type LoadResult, loadTool, runLoad } from "./lib/load.ts";
import { median } from "./lib/stats.ts";
import { judged, num, table } from "./lib/table.ts";

const ROOT = resolve(import.meta.dir, "../..");
const MAIN = join(ROOT, "src/main.ts");
const BARE = join(import.meta.dir, "lib/bare-server.ts");

const settings = {
  seconds: envNum("BENCH_SECONDS", 5),
  warmupSeconds: envNum("BENCH_WARMUP_SECONDS", 2),
  connections: envNum("BENCH_CONNECTIONS", 50),
  // 2 cores: one for wrk, one for the server's JS thread.
  threads: envNum("BENCH_THREADS", 1),
  startupRuns: envNum("BENCH_STARTUP_RUNS", 5),
};

const TARGET = { startupMs: 300, ratio: 0.7, rssMb: 80 };
const ROUTER_TOKEN = "bench-router-token";
const SERVICE_KEY = "bench-service-key";
/** Settle time before reading an "idle" RSS. */
const IDLE_MS = 1000;

type Name = "bare" | "router" | "orchestrator";

interface Target {
  name: Name;
  label: string;
  headers: Record<string, string>;
  /** Command and environment for one start, in its own fresh directory, listening on `port`. */
  launch(port: number, dir: string): { cmd: string[]; env: Record<string, string | undefined> };
}

interface Measured {
  startupSamples: number[];
  rssStartMb: number;
  load?: LoadResult;
  /** Server CPU (user + system, every thread) per request during the measured run, µs. */
  cpuUsPerRequest?: number;
  rssAfterMb?: number;
  body?: string;
  error?: string;
}

// Our processes run on the embedded defaults whatever the caller's shell has configured.
const baseEnv: Record<string, string | undefined> = { ...process.env };
for (const key of ["DATABASE_URL", "REDIS_URL", "KB_ROUTER_TOKENS", "LOG_LEVEL", "PORT", "BODY"]) delete baseEnv[key];

let bareBody: string | undefined;

const targets: Target[] = [
  {
    name: "router",
    label: "router (ours)",
    headers: { Authorization: `Bearer ${ROUTER_TOKEN}` },
    launch: (port, dir) => ({
      cmd: [process.execPath, MAIN, "--only", "router", "--vault", join(dir, "vault")],
      env: {
        ...baseEnv,
        KB_ROUTER_TOKEN: ROUTER_TOKEN,
        PORT_BRAIN_API: String(port),
        PORT_BRAIN_MCP: String(freePort()),
        ROUTER_HOST: "127.0.0.1",
      },
    }),
  },
  {
    name: "orchestrator",
    label: "orchestrator (ours)",
    headers: { Authorization: `Bearer ${SERVICE_KEY}` },
    launch: (port, dir) => ({
      cmd: [process.execPath, MAIN, "--only", "orchestrator"],
      env: {
        ...baseEnv,
        SERVICE_PORT: String(port),
        SERVICE_HOST: "127.0.0.1",
        SERVICE_API_KEYS: SERVICE_KEY,
        SERVICE_JOBS_DIR: join(dir, "jobs"),
        SERVICE_WORKTREE_ROOT: join(dir, "worktrees"),
        SERVICE_REPOS_ROOT: join(dir, "repos"),
      },
    }),
  },
  {
    name: "bare",
    label: "bare Bun.serve",
    headers: { Authorization: `Bearer ${ROUTER_TOKEN}` },
    launch: (port) => ({ cmd: [process.execPath, BARE], env: { ...baseEnv, PORT: String(port), BODY: bareBody } }),
  },
];

const running = new Set<Started>();
const tmp = tempDir("brain-bench-http");

async function cleanup(): Promise<void> {
  await Promise.all([...running].map((s) => s.stop()));
  running.clear();
  rmSync(tmp, { recursive: true, force: true });
}

process.on("SIGINT", () => void cleanup().finally(() => process.exit(130)));
process.on("SIGTERM", () => void cleanup().finally(() => process.exit(143)));

/** Start the target `runs` times, timing each; stop all but the last, which is returned running. */
async function startRepeatedly(t: Target, runs: number): Promise<{ samples: number[]; server: Started; url: string }> {
  const samples: number[] = [];
  for (let i = 1; ; i++) {
    const dir = join(tmp, `${t.name}-${i}`);
    mkdirSync(dir, { recursive: true });
    const port = freePort();
    const url = `http://127.0.0.1:${port}/health`;
    const { cmd, env } = t.launch(port, dir);
    const server = await startAndWait({ cmd, env, cwd: dir, readyUrl: url, logPath: join(dir, "server.log") });
    running.add(server);
    samples.push(server.startupMs);
    if (i >= runs) return { samples, server, url };
    await server.stop();
    running.delete(server);
  }
}

async function measureStartup(t: Target): Promise<{ m: Measured; server?: Started; url?: string }> {
  try {
    const { samples, server, url } = await startRepeatedly(t, settings.startupRuns);
    const res = await fetch(url, { headers: t.headers });
    const body = await res.text();
    await Bun.sleep(IDLE_MS);
    return { m: { startupSamples: samples, rssStartMb: rssMb(server.pid), body }, server, url };
  } catch (err) {
    return { m: { startupSamples: [], rssStartMb: Number.NaN, error: String(err) } };
  }
}

async function measureLoad(t: Target, server: Started, url: string, m: Measured): Promise<void> {
  const opts = { url, connections: settings.connections, threads: settings.threads, headers: t.headers };
  try {
    await runLoad({ ...opts, seconds: settings.warmupSeconds });
    const cpuBefore = cpuMs(server.pid);
    m.load = await runLoad({ ...opts, seconds: settings.seconds });
    m.cpuUsPerRequest = ((cpuMs(server.pid) - cpuBefore) * 1000) / m.load.requests;
  } catch (err) {
    m.error = String(err);
  }
  await Bun.sleep(IDLE_MS);
  const { exitCode, signalCode } = server.proc;
  if (exitCode !== null || signalCode !== null) {
    // Figures from a server that died under load would mislead: drop them and say why.
    m.load = undefined;
    m.error = `the process exited (${signalCode ?? `code ${exitCode}`}) during the load run\n${logTail(server.logPath)}`;
    return;
  }
  m.rssAfterMb = rssMb(server.pid);
}

function report(results: Map<Name, Measured>, loadLine: string): void {
  const cols: Name[] = ["bare", "router", "orchestrator"];
  const bareRps = results.get("bare")?.load?.rps ?? Number.NaN;
  const bareCpu = results.get("bare")?.cpuUsPerRequest ?? Number.NaN;
  const NA = Number.NaN;
  /** One row: a figure per server; ours are judged against the target when `meets` is given. */
  const row = (figure: string, value: (m: Measured) => number, decimals: number, target: string, meets?: (v: number) => boolean): string[] => [
    figure,
    ...cols.map((n) => {
      const m = results.get(n);
      const v = m ? value(m) : NA;
      if (!Number.isFinite(v)) return "n/a";
      return n !== "bare" && meets ? judged(num(v, decimals), meets(v)) : num(v, decimals);
    }),
    target,
  ];

  const rows: string[][] = [
    ["figure", ...cols.map((n) => targets.find((t) => t.name === n)!.label), "target (ours)"],
    row(
      `start → first 200, median of ${settings.startupRuns} (ms)`,
      (m) => median(m.startupSamples),
      0,
      `< ${TARGET.startupMs} ms`,
      (v) => v < TARGET.startupMs,
    ),
    row("requests/s", (m) => m.load?.rps ?? NA, 0, "—"),
    row("p50 latency (ms)", (m) => m.load?.p50Ms ?? NA, 2, "—"),
    row("p99 latency (ms)", (m) => m.load?.p99Ms ?? NA, 2, "—"),
    row(
      "throughput ratio ours/bare",
      (m) => (m.load?.rps ?? NA) / bareRps,
      2,
      `≥ ${TARGET.ratio}`,
      (v) => v >= TARGET.ratio,
    ),
    // Less noisy than requests/s on a shared 2-core machine, where the load generator takes a core.
    row("server CPU per request (µs)", (m) => m.cpuUsPerRequest ?? NA, 1, "—"),
    row("CPU ratio bare/ours", (m) => bareCpu / (m.cpuUsPerRequest ?? NA), 2, "—"),
    row(
      "RSS idle after start-up (MB)",
      (m) => m.rssStartMb,
      1,
      `< ${TARGET.rssMb} MB`,
      (v) => v < TARGET.rssMb,
    ),
    row(
      "RSS idle after load (MB)",
      (m) => m.rssAfterMb ?? NA,
      1,
      `< ${TARGET.rssMb} MB`,
      (v) => v < TARGET.rssMb,
    ),
    row("non-2xx responses", (m) => m.load?.non2xx ?? NA, 0, "0"),
    row("socket errors", (m) => m.load?.errors ?? NA, 0, "0"),
  ];

  console.log();
  console.log(`GET /health on 127.0.0.1 — load: ${loadLine} (after a ${settings.warmupSeconds}s warm-up)`);
  console.log(`bun ${Bun.version}, ${availableParallelism()} cores\n`);
  console.log(table(rows));
  console.log();
  for (const n of cols) {
    const m = results.get(n);
    if (!m) continue;
    if (m.startupSamples.length) console.log(`${n}: start-up samples (ms): ${m.startupSamples.map((s) => num(s)).join(", ")}`);
    if (m.body && n !== "bare") console.log(`${n}: GET /health → ${m.body.trim()}`);
    if (m.error) console.log(`${n}: FAILED: ${m.error}`);
  }
}

async function main(): Promise<number> {
  if (!existsSync(MAIN)) {
    console.error(`cannot run: ${MAIN} does not exist`);
    return 1;
  }
  const tool = await loadTool();
  const loadLine = describeLoad(tool, settings);
  console.log(`http bench: ${settings.startupRuns} starts per server, then ${loadLine}`);

  const results = new Map<Name, Measured>();
  const live = new Map<Name, { server: Started; url: string }>();
  for (const t of targets) {
    console.log(`starting ${t.label} ×${settings.startupRuns}…`);
    if (t.name === "bare") bareBody = results.get("router")?.body;
    const { m, server, url } = await measureStartup(t);
    results.set(t.name, m);
    if (server && url) live.set(t.name, { server, url });
    if (m.error) console.error(`${t.label}: ${m.error}`);
  }
  for (const n of ["bare", "router", "orchestrator"] as const) {
    const t = targets.find((x) => x.name === n)!;
    const l = live.get(n);
    if (!l) continue;
    console.log(`loading ${t.label}…`);
    await measureLoad(t, l.server, l.url, results.get(n)!);
  }
  report(results, loadLine);

  const anyOurs = live.has("router") || live.has("orchestrator");
  if (!anyOurs) console.error("could not run: neither of our services started");
  return anyOurs ? 0 : 1;
}

let code = 1;
try {
  code = await main();
} catch (err) {
  console.error(`http bench could not run: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
} finally {
  await cleanup();
}
process.exit(code);
