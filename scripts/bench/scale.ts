// Scale benchmark (issue 39): generated vaults of 10k and 100k notes (a million with
// --million) indexed by the real router (`bun src/main.ts --only router`) on Postgres (and on
// SQLite with BENCH_BACKENDS=postgres,sqlite). For each:
//   - the build: the router's first tick indexes raw/ (refreshFolder → upsertMany by the
//     batch, indexes made once at the end), notes/s from the tick's index_raw phase, and the
//     serving process's own peak RSS while it built (VmHWM from /proc/PID/status);
//   - the router restarted on the built index: idle RSS, then POST /search under wrk at 1 and
//     at 8 connections, cold (each query sent once, never seen before, as prompt-time recall
//     sends them; the process warmed by other such queries first) and warm (the fixed
//     BENCH_QUERIES rotated after a warm-up);
//   - the database's size (pg_database_size, or the SQLite files).
// Beside each figure the issue's target. Asserts nothing; other work on the machine skews
// every figure (the load average is printed), the server's CPU time per request much less.
//
//   bun run bench scale                                   # Postgres, 10k and 100k
//   bun run bench scale --million                         # Postgres, one million (minutes; several GB of disk)
//   BENCH_SIZES=20000 BENCH_BACKENDS=postgres,sqlite bun scripts/bench/scale.ts
//   BENCH_PG_URL=postgres://postgres@127.0.0.1:5432/postgres (default; a scratch database is created and dropped)
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join, resolve } from "node:path";
import postgres from "postgres";
import { documentFromFile, type IndexDoc, openIndexStore } from "../../src/router/index/index.ts";
import { cpuMs, freePort, logTail, rssMb, type Started, startAndWait } from "../../test/support/process.ts";
import { createTestDatabase, type TestDatabase } from "../../test/support/servers.ts";
import { BENCH_QUERIES, generateNote, PEOPLE, prng, SERVICES, TOPICS, writeVault } from "../../test/support/vault-gen.ts";
import { benchScratch } from "./lib/disk.ts";
import { type LoadResult, loadTool } from "./lib/load.ts";
import { num, table } from "./lib/table.ts";
import { runWrkPost } from "./lib/wrk-post.ts";

const ROOT = resolve(import.meta.dir, "../..");
const MAIN = join(ROOT, "src/main.ts");
const TOKEN = "bench-scale-token";
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const PG_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

const envNum = (name: string, fallback: number): number => {
  const n = Number(process.env[name]);
  return Number.isFinite(n) && n > 0 ? n : fallback;
};
const million = process.argv.includes("--million");
/**
 * --direct: notes generated straight into the store through its batch writes (bulkLoad,
 * upsertMany: what refreshFolder calls) in this process, no files, no tick; the router then
 * serves the searches over an empty vault (no tick runs: TICK_INTERVAL_SECONDS=0). Default
 * with --million, where writing and walking a million files would take longer than the build.
 */
const direct = process.argv.includes("--direct") || million;
const sizes = process.env.BENCH_SIZES
  ? process.env.BENCH_SIZES.split(",")
      .map(Number)
      .filter((n) => n > 0)
  : million
    ? [1_000_000]
    : [10_000, 100_000];
type Backend = "postgres" | "sqlite";
const backends = (process.env.BENCH_BACKENDS ?? "postgres").split(",").filter((b): b is Backend => b === "postgres" || b === "sqlite");
const settings = { seconds: envNum("BENCH_SECONDS", 5), warmupSeconds: envNum("BENCH_WARMUP_SECONDS", 2), connections: envNum("BENCH_CONNECTIONS", 8) };
/** Issue 39's targets: 100k on Postgres (1 and 8 connections), a million on Postgres (cold), the build, memory. */
const TARGET = { p50_100k: 5, p99_100k: 25, rps8_100k: 400, p99_8_100k: 60, p50_1m: 10, p99_1m: 50, buildRate: 5_000, buildRssMb: 150, idleRssMb: 70 };

interface Cell {
  size: number;
  backend: Backend;
  buildMs?: number;
  buildWallMs?: number;
  /** The serving process's own peak RSS (VmHWM) at the end of the build. */
  buildPeakMb?: number;
  /** CPU time the build took: the router's, and its Postgres connections' (ms). */
  buildRouterCpuMs?: number;
  buildDbCpuMs?: number;
  idleMb?: number;
  coldLatency?: LoadResult;
  coldThroughput?: LoadResult;
  warmLatency?: LoadResult;
  warmThroughput?: LoadResult;
  cpuUsPerReq?: number;
  dbBytes?: number;
  sample?: string;
  error?: string;
}

const loadAtStart = loadavg();
const tmp = benchScratch("scale-").dir;
const running = new Set<Started>();
const scratchDbs: TestDatabase[] = [];
/** Reads the server's own figures (its backends' pids, a database's size). */
let admin: postgres.Sql | undefined;

async function cleanup(): Promise<void> {
  await Promise.all([...running].map((s) => s.stop()));
  running.clear();
  for (const db of scratchDbs.splice(0)) await db.drop().catch(() => {});
  await admin?.end({ timeout: 5 }).catch(() => {});
  rmSync(tmp, { recursive: true, force: true });
}
process.on("SIGINT", () => void cleanup().finally(() => process.exit(130)));
process.on("SIGTERM", () => void cleanup().finally(() => process.exit(143)));

async function scratchDatabase(size: number): Promise<string> {
  admin ??= postgres(PG_URL, { max: 1, connect_timeout: 5, onnotice: () => {} });
  const db = await createTestDatabase(`brain_scale_${size}`, PG_URL);
  scratchDbs.push(db);
  return db.url;
}

/** The serving process's peak RSS so far, in MB (VmHWM). */
function peakMb(pid: number): number {
  try {
    const kb = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? Number.NaN : Number(kb) / 1024;
  } catch {
    return Number.NaN;
  }
}

/**
 * Queries never sent before: two or three words of the generated notes' vocabulary (a topic's
 * nouns and verbs, a service, a person), as an agent's prompt would mix them. Distinct, so a
 * run of wrk over them sends each once while it lasts.
 */
function coldQueries(count: number, seed: number): string[] {
  const rng = prng(seed);
  const seen = new Set<string>();
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rng() * xs.length)]!;
  for (let tries = 0; seen.size < count && tries < count * 20; tries++) {
    const topic = pick(TOPICS);
    const words = [pick(topic.nouns), rng() < 0.5 ? pick(topic.verbs) : pick(SERVICES)];
    if (rng() < 0.4) words.push(rng() < 0.5 ? pick(PEOPLE) : pick(topic.nouns));
    seen.add(words.join(" "));
  }
  return [...seen];
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    total += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return total;
}

async function startRouter(cell: Cell, vault: string, dataDir: string, dbUrl: string | undefined, label: string): Promise<{ server: Started; base: string }> {
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: tmp,
    KB_ROUTER_TOKEN: TOKEN,
    PORT_BRAIN_API: String(port),
    PORT_BRAIN_MCP: String(freePort()),
    ROUTER_HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    TICK_INTERVAL_SECONDS: "0",
    LOG_LEVEL: "1",
    ...(dbUrl ? { DATABASE_URL: dbUrl } : {}),
  };
  const server = await startAndWait({
    cmd: [process.execPath, MAIN, "--only", "router", "--vault", vault],
    env,
    cwd: tmp,
    readyUrl: `${base}/health`,
    logPath: join(tmp, `router-${cell.backend}-${cell.size}-${label}.log`),
    timeoutMs: 120_000,
  });
  running.add(server);
  return { server, base };
}

async function stopRouter(server: Started): Promise<void> {
  await server.stop();
  running.delete(server);
}

/**
 * CPU time of the database's backends (ms) since start(), sampled while a build runs: the
 * connections a build opens and closes (its pool's, the index builds') count from 0.
 */
function dbCpuMeter(dbUrl: string | undefined): { sample(): Promise<void>; total(): number } {
  const seen = new Map<number, number>();
  let base: Map<number, number> | undefined;
  const sample = async () => {
    if (!dbUrl || !admin) return;
    const rows = await admin<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE datname = ${new URL(dbUrl).pathname.slice(1)}`;
    for (const r of rows) {
      const ms = cpuMs(r.pid);
      if (Number.isFinite(ms)) seen.set(r.pid, Math.max(seen.get(r.pid) ?? 0, ms));
    }
  };
  return {
    async sample() {
      await sample();
      base ??= new Map(seen);
    },
    total: () => [...seen].reduce((sum, [p, ms]) => sum + ms - (base?.get(p) ?? 0), 0),
  };
}

/** The first tick: raw/ indexed inside the router; polled, since a million notes outlast any HTTP wait. */
async function build(cell: Cell, base: string, pid: number, dbUrl: string | undefined): Promise<void> {
  const routerCpu0 = cpuMs(pid);
  const db = dbCpuMeter(dbUrl);
  await db.sample();
  const t0 = performance.now();
  const res = await fetch(`${base}/tick?no_ai`, { method: "POST", headers: AUTH });
  let record = (await res.json()) as { tick_id: string; status: string; phases_ms: Record<string, number> | null; error_tail: string | null };
  while (record.status === "queued" || record.status === "running") {
    await Bun.sleep(1000);
    await db.sample();
    record = (await (await fetch(`${base}/tick/${record.tick_id}`, { headers: AUTH })).json()) as typeof record;
  }
  if (record.status !== "succeeded") throw new Error(`the build's tick ${record.status}: ${record.error_tail}`);
  cell.buildWallMs = performance.now() - t0;
  cell.buildMs = record.phases_ms?.index_raw ?? cell.buildWallMs;
  cell.buildPeakMb = peakMb(pid);
  cell.buildRouterCpuMs = cpuMs(pid) - routerCpu0;
  await db.sample();
  cell.buildDbCpuMs = dbUrl ? db.total() : undefined;
}

async function searchPhase(cell: Cell, base: string, pid: number): Promise<void> {
  const res = await fetch(`${base}/search`, {
    method: "POST",
    headers: { ...AUTH, "content-type": "application/json" },
    body: JSON.stringify({ query: "connection pool", limit: 3 }),
  });
  const sample = (await res.json()) as { hits?: { path: string }[] };
  cell.sample = `HTTP ${res.status}, ${sample.hits?.length ?? 0} hits, first ${sample.hits?.[0]?.path ?? "-"}`;
  const load = { baseUrl: base, path: "/search", headers: AUTH, threads: 1 };
  const bodies = (qs: string[]) => qs.map((query) => JSON.stringify({ query, limit: 10 }));
  // Cold: distinct queries, each sent once. The process itself is warmed first (its code
  // compiled, its connections open) by a run of other distinct queries never sent again: a
  // first-time query, not a first request to a new process, is what is measured.
  const cold = coldQueries(30_000, cell.size + 3);
  await runWrkPost({ ...load, bodies: bodies(cold.slice(20_000)), seconds: settings.warmupSeconds, connections: settings.connections });
  const cpu0 = cpuMs(pid);
  cell.coldLatency = await runWrkPost({ ...load, bodies: bodies(cold.slice(0, 10_000)), seconds: settings.seconds, connections: 1 });
  cell.cpuUsPerReq = ((cpuMs(pid) - cpu0) * 1000) / cell.coldLatency.requests;
  cell.coldThroughput = await runWrkPost({ ...load, bodies: bodies(cold.slice(10_000, 20_000)), seconds: settings.seconds, connections: settings.connections });
  // Warm: the fixed set, repeated.
  const warm = bodies([...BENCH_QUERIES]);
  await runWrkPost({ ...load, bodies: warm, seconds: settings.warmupSeconds, connections: settings.connections });
  cell.warmLatency = await runWrkPost({ ...load, bodies: warm, seconds: settings.seconds, connections: 1 });
  cell.warmThroughput = await runWrkPost({ ...load, bodies: warm, seconds: settings.seconds, connections: settings.connections });
}

/** --direct: the notes written by the store's batch path in this process, as refreshFolder writes a first build. */
async function buildDirect(cell: Cell, dataDir: string, dbUrl: string | undefined): Promise<void> {
  const store = await openIndexStore({ dataDir, databaseUrl: dbUrl });
  const db = dbCpuMeter(dbUrl);
  await db.sample();
  const sampling = setInterval(() => void db.sample().catch(() => {}), 500);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  try {
    const write = async () => {
      const writing = new Set<Promise<unknown>>();
      for (let i = 0; i < cell.size; i += 256) {
        const docs: IndexDoc[] = [];
        for (let j = i; j < Math.min(cell.size, i + 256); j++) {
          const note = generateNote(1, j);
          docs.push(documentFromFile({ path: note.path, producer: "raw", content: note.content, mtimeMs: 1 }));
        }
        if (!store.upsertMany) {
          await Promise.all(docs.map((d) => store.upsert(d)));
          continue;
        }
        while (writing.size >= 2) await Promise.race(writing);
        const w: Promise<unknown> = store.upsertMany(docs).finally(() => writing.delete(w));
        writing.add(w);
        if (Math.floor((i + 256) / 100_000) > Math.floor(i / 100_000))
          console.log(`    ${num(i + 256)} notes, ${num((i + 256) / ((performance.now() - t0) / 1000))}/s`);
      }
      await Promise.all(writing);
    };
    await (store.bulkLoad ? store.bulkLoad(write) : write());
    await db.sample();
  } finally {
    clearInterval(sampling);
    await store.close();
  }
  cell.buildDbCpuMs = dbUrl ? db.total() : undefined;
  cell.buildMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  cell.buildRouterCpuMs = (cpu.user + cpu.system) / 1000;
}

async function runCell(cell: Cell, vault: string): Promise<void> {
  const dbUrl = cell.backend === "postgres" ? await scratchDatabase(cell.size) : undefined;
  const dataDir = join(tmp, `data-${cell.backend}-${cell.size}`);
  mkdirSync(dataDir, { recursive: true });
  if (direct) {
    console.log(`  build: generated notes written by the store's batch path (bulkLoad, upsertMany), no files…`);
    await buildDirect(cell, dataDir, dbUrl);
  } else {
    console.log(`  build: the router's first tick indexes raw/…`);
    const first = await startRouter(cell, vault, dataDir, dbUrl, "build");
    try {
      await build(cell, first.base, first.server.pid, dbUrl);
    } finally {
      await stopRouter(first.server);
    }
  }
  console.log(
    `  built in ${num((cell.buildMs ?? 0) / 1000, 1)} s (${num(cell.size / ((cell.buildMs ?? 1) / 1000))} notes/s)${cell.buildPeakMb === undefined ? "" : `, peak RSS ${num(cell.buildPeakMb)} MB`}`,
  );
  console.log(`  /search: cold (fresh router, each query once) and warm, at 1 and ${settings.connections} connections…`);
  const second = await startRouter(cell, vault, dataDir, dbUrl, "search");
  try {
    await Bun.sleep(1000);
    cell.idleMb = rssMb(second.server.pid);
    await searchPhase(cell, second.base, second.server.pid);
    if (second.server.proc.exitCode !== null) throw new Error(`the router exited during the run\n${logTail(second.server.logPath)}`);
  } finally {
    await stopRouter(second.server);
  }
  if (dbUrl) {
    const [row] = await admin!<{ bytes: string }[]>`SELECT pg_database_size(${new URL(dbUrl).pathname.slice(1)}) AS bytes`;
    cell.dbBytes = Number(row?.bytes);
  } else cell.dbBytes = dirBytes(dataDir);
  rmSync(dataDir, { recursive: true, force: true });
}

function report(cells: Cell[]): void {
  const NA = Number.NaN;
  const cols = cells.map((c) => `${c.backend} ${c.size >= 1e6 ? `${c.size / 1e6}M` : `${c.size / 1000}k`}`);
  const row = (figure: string, value: (c: Cell) => number, decimals: number, target: string) => [
    figure,
    ...cells.map((c) => {
      const v = value(c);
      return Number.isFinite(v) ? num(v, decimals) : "n/a";
    }),
    target,
  ];
  const rows = [
    ["figure", ...cols, "target (issue 39)"],
    row(
      direct ? "index build, store's batch path (notes/s)" : "index build inside the router (notes/s)",
      (c) => c.size / ((c.buildMs ?? NA) / 1000),
      0,
      `≥ ${TARGET.buildRate}`,
    ),
    row(direct ? "  build (s)" : "  build: the first tick's index_raw phase (s)", (c) => (c.buildMs ?? NA) / 1000, 1, "—"),
    row(
      direct ? "  build CPU: this process (generating too), µs per note" : "  build CPU: router, µs per note",
      (c) => ((c.buildRouterCpuMs ?? NA) * 1000) / c.size,
      0,
      "—",
    ),
    row("  build CPU: its Postgres connections, µs per note", (c) => ((c.buildDbCpuMs ?? NA) * 1000) / c.size, 0, "—"),
    row("  router's own peak RSS while building (MB, VmHWM)", (c) => c.buildPeakMb ?? NA, 0, `≤ ${TARGET.buildRssMb} at 100k`),
    row("idle router RSS on the built index (MB)", (c) => c.idleMb ?? NA, 1, `≤ ${TARGET.idleRssMb}`),
    row("cold /search p50, 1 connection (ms)", (c) => c.coldLatency?.p50Ms ?? NA, 2, `≤ ${TARGET.p50_100k} (100k), ≤ ${TARGET.p50_1m} (1M)`),
    row("cold /search p99, 1 connection (ms)", (c) => c.coldLatency?.p99Ms ?? NA, 2, `≤ ${TARGET.p99_100k} (100k), ≤ ${TARGET.p99_1m} (1M)`),
    row("cold /search req/s, 1 connection", (c) => c.coldLatency?.rps ?? NA, 0, "—"),
    row("  router CPU per cold request (µs)", (c) => c.cpuUsPerReq ?? NA, 0, "—"),
    row(`cold /search req/s, ${settings.connections} connections`, (c) => c.coldThroughput?.rps ?? NA, 0, `≥ ${TARGET.rps8_100k} (100k)`),
    row(`cold /search p50 / p99, ${settings.connections} conn. (ms)`, (c) => c.coldThroughput?.p50Ms ?? NA, 2, "—"),
    row("", (c) => c.coldThroughput?.p99Ms ?? NA, 2, `≤ ${TARGET.p99_8_100k} (100k)`),
    row("warm /search p50 / p99, 1 connection (ms)", (c) => c.warmLatency?.p50Ms ?? NA, 2, "—"),
    row("", (c) => c.warmLatency?.p99Ms ?? NA, 2, "—"),
    row(`warm /search req/s, ${settings.connections} connections`, (c) => c.warmThroughput?.rps ?? NA, 0, "—"),
    row(`warm /search p99, ${settings.connections} conn. (ms)`, (c) => c.warmThroughput?.p99Ms ?? NA, 2, "—"),
    row(
      "/search non-2xx + socket errors",
      (c) => [c.coldLatency, c.coldThroughput, c.warmLatency, c.warmThroughput].reduce((s, r) => s + (r ? r.non2xx + r.errors : NA), 0),
      0,
      "0",
    ),
    row("database size (MB)", (c) => (c.dbBytes ?? NA) / 1024 / 1024, 0, "—"),
  ];
  console.log(
    `\nscale bench — generated notes indexed by ${direct ? "the store's batch path (--direct)" : "the router's first tick"}; /search limit 10, BM25 only (no embeddings), ${settings.seconds}s wrk runs`,
  );
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(" ");
  console.log(`bun ${Bun.version}, ${availableParallelism()} cores, load average ${load(loadAtStart)} at start and ${load(loadavg())} at the end\n`);
  console.log(table(rows));
  for (const [i, c] of cells.entries()) {
    if (c.sample) console.log(`${cols[i]}: sample POST /search → ${c.sample}`);
    if (c.error) console.log(`${cols[i]}: FAILED: ${c.error}`);
  }
}

async function main(): Promise<void> {
  console.log(`scale bench: sizes ${sizes.join(", ")}; backends ${backends.join(", ")}`);
  await loadTool();
  const cells: Cell[] = [];
  for (const size of sizes) {
    const vault = join(tmp, `vault-${size}`);
    mkdirSync(vault, { recursive: true });
    if (direct) console.log(`\n${num(size)} notes, generated straight into the store (--direct): the vault stays empty`);
    else {
      const gen = writeVault(vault, size, 1);
      console.log(`\n${num(size)} notes: wrote ${num(gen.bytes / 1024 / 1024, 1)} MB into raw/ in ${num(gen.ms / 1000, 1)} s`);
    }
    for (const backend of backends) {
      const cell: Cell = { size, backend };
      cells.push(cell);
      console.log(`${backend} ${num(size)}:`);
      try {
        await runCell(cell, vault);
      } catch (err) {
        cell.error = err instanceof Error ? err.message : String(err);
        console.error(`  ${backend} ${size}: ${cell.error}`);
      }
    }
    rmSync(vault, { recursive: true, force: true });
  }
  report(cells);
}

try {
  await main();
} catch (err) {
  console.error(`scale bench could not run: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
