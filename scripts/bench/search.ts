// Search benchmark (issue 3): generated vaults of 10k (and, with --large, 100k) notes, on
// SQLite and on Postgres. For each: full index build over raw/ (docs/s), a no-change refresh,
// then the real server (`bun src/main.ts --only router`) on that index: POST /search latency
// and throughput under wrk rotating a fixed query set, POST /ingest of a few thousand new
// notes with concurrency (a loader in its own process), and the server's RSS. ripgrep over
// raw/ for the same queries is the no-index baseline. Issue 20 adds the read endpoints, one
// request at a time beside GET /health (the floor): GET /notes, GET /notes/{path}, and
// GET /notes/{path}/context at depth 2 — each generated note carries BENCH_LINKS links (5 by
// default; 0 writes the link-free vault of earlier runs). Prints a table with the issue's
// targets (100k on SQLite) beside the figures; asserts nothing. The 1-connection /search run
// is repeated while a second client ingests new notes (BENCH_LIVE_INGEST_RATE a second, 5 by
// default; 0 skips it): a vault written to as it is searched.
//
// Issue 21's floors, measured in the same run and printed beside brain-stack's figure with the
// ratio: the index build against index-floor.ts (read each note, one FTS5 row + one docs row,
// 256 per transaction), each build in a process of its own (lib/build-child.ts: its time and
// the RSS it is left with); and POST /search against lib/search-floor-server.ts, a bare
// Bun.serve running the same FTS5 expression, bm25 weights and a snippet over the same index
// file, under the same wrk load. The build runs at refreshFolder's default batch (256 files a
// transaction), what the router's tick uses (BENCH_BUILD_CONCURRENCY overrides it). Beside
// req/s, each server's CPU time per request in the 1-connection run (from /proc): on a machine
// others share, the req/s ratio swings with their load, the CPU a request costs much less.
//
//   bun run bench search                       # 10k notes
//   bun scripts/bench/search.ts --large        # 10k and 100k (or BENCH_LARGE=1)
//   BENCH_SIZES=2000 BENCH_BACKENDS=sqlite bun scripts/bench/search.ts
//   BENCH_LINKS=0 …                            # the vault without links (build cost before/after links)
//   BENCH_PEER_ENV="INDEX_FIRST_PASS=off" …    # a second router with these settings, on a copy of the
//                                              # index, answers each first-time query in turn with the first
//   BENCH_PEER_MAIN=/path/to/other/src/main.ts # that second router from another checkout (before/after a change)
//   BENCH_PG_URL=postgres://postgres@127.0.0.1:5432/postgres (default; a scratch database is created and dropped)
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { ApiError, RouterClient } from "../../src/router/client.ts";
import { type IndexStore, openIndexStore, parseQuery } from "../../src/router/index/index.ts";
import { cpuMs, freePort, logTail, MAIN, rssMb, type Started, startAndWait, startService } from "../../test/support/process.ts";
import { createTestDatabase, type TestDatabase } from "../../test/support/servers.ts";
import { BENCH_QUERIES, generatedKind, generateNote, ingestBodies, prng, writeVault } from "../../test/support/vault-gen.ts";
import { benchScratch } from "./lib/disk.ts";
import { envCount, envNum } from "./lib/env.ts";
import { type LoadResult, loadTool } from "./lib/load.ts";
import { type NotesLatency, timeNotesEndpoints } from "./lib/notes-latency.ts";
import { type PostResult, runPostLoader } from "./lib/post-loader.ts";
import { type RefreshResult, refreshRaw } from "./lib/raw-index.ts";
import { ensureRipgrep, type RgTiming, timeRipgrep } from "./lib/ripgrep.ts";
import { median, percentile } from "./lib/stats.ts";
import { judged, num, table } from "./lib/table.ts";
import { runWrkPost } from "./lib/wrk-post.ts";

const large = process.argv.includes("--large") || process.env.BENCH_LARGE === "1";
const sizes = process.env.BENCH_SIZES
  ? process.env.BENCH_SIZES.split(",")
      .map(Number)
      .filter((n) => n > 0)
  : large
    ? [10_000, 100_000]
    : [10_000];
const backends = (process.env.BENCH_BACKENDS ?? "sqlite,postgres").split(",").filter((b): b is Backend => b === "sqlite" || b === "postgres");

const settings = {
  seconds: envNum("BENCH_SECONDS", 5),
  warmupSeconds: envNum("BENCH_WARMUP_SECONDS", 2),
  /** Connections for the throughput run; the latency run uses one. */
  connections: envNum("BENCH_CONNECTIONS", 8),
  ingestDocs: envNum("BENCH_INGEST_DOCS", 2_000),
  ingestConcurrency: envNum("BENCH_INGEST_CONCURRENCY", 16),
  /** Notes a second posted to /ingest, one at a time, during the "while ingesting" /search run (0: no such run). */
  liveIngestRate: envCount("BENCH_LIVE_INGEST_RATE", 5),
  /** refreshFolder's batch; unset = its default (256), what the router's tick uses. */
  buildConcurrency: process.env.BENCH_BUILD_CONCURRENCY ? envNum("BENCH_BUILD_CONCURRENCY", 256) : undefined,
  refreshRuns: envNum("BENCH_REFRESH_RUNS", 3),
  seed: envNum("BENCH_SEED", 1),
  /** Distinct queries sent once each to a freshly started server (issue 39 part 4: the headline). */
  coldQueries: envNum("BENCH_COLD_QUERIES", 400),
  /** Links per generated note (issue 20's context bench); BENCH_LINKS=0 writes the link-free vault of earlier runs. */
  links: process.env.BENCH_LINKS === undefined ? 5 : Math.max(0, Math.floor(Number(process.env.BENCH_LINKS)) || 0),
};
const PG_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const TARGET = { p50Ms: 5, p99Ms: 25, refreshMs: 2_000, ingestRps: 500 };
const TARGET_SIZE = 100_000;
const TOKEN = "bench-router-token";
const AUTH = { Authorization: `Bearer ${TOKEN}` };

type Backend = "sqlite" | "postgres";

interface Cell {
  size: number;
  backend: Backend;
  buildDocs?: number;
  buildMs?: number;
  /** index-floor.ts over the same vault (SQLite cells). */
  floorBuildMs?: number;
  /** RSS of the build's own process once it finished (SQLite cells). */
  buildRssMb?: number;
  /** The bare search server under the same load (SQLite cells). */
  floorLatency?: LoadResult;
  /** First-time queries: each of COLD_QUERIES sent once, one at a time, to a server just started (ms per request). */
  cold?: number[];
  floorCold?: number[];
  /** The same first-time queries, each sent in turn to a router with BENCH_PEER_ENV's settings (SQLite cells). */
  peerCold?: number[];
  /** CPU time the server process spent per request in the 1-connection run (µs; /proc, 10 ms ticks): less skewed by other work than req/s. */
  cpuUsPerReq?: number;
  floorCpuUsPerReq?: number;
  floorThroughput?: LoadResult;
  refreshSource?: string;
  refreshMs: number[];
  refreshChanged?: number;
  /** In-process search timings per query (median of 5), slowest first. */
  slowest?: { query: string; ms: number; hits: number }[];
  inProcessP50?: number;
  startupMs?: number;
  rssIdleMb?: number;
  latency?: LoadResult;
  throughput?: LoadResult;
  rssAfterSearchMb?: number;
  /** /search at 1 connection while notes are ingested at liveIngestRate a second, and the notes that went in. */
  liveLatency?: LoadResult;
  liveIngested?: number;
  notes?: NotesLatency;
  ingest?: PostResult;
  rssAfterIngestMb?: number;
  sample?: string;
  error?: string;
}

const loadAtStart = loadavg();
const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(" ");

/** How the ingest bodies classify: notes only write their file; signals and milestones also fan out under a shared lock. */
function ingestMix(count: number): string {
  const kinds = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const kind = generatedKind(generateNote(1000, i).tags);
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  return [...kinds]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${num((100 * n) / count)}% ${k}`)
    .join(", ");
}

// Away from the inodes earlier runs freed (lib/disk.ts): its vaults and ingests create files.
const tmp = benchScratch("search-").dir;
const running = new Set<Started>();
const scratchDbs: TestDatabase[] = [];

async function cleanup(): Promise<void> {
  await Promise.all([...running].map((s) => s.stop()));
  running.clear();
  for (const db of scratchDbs.splice(0)) await db.drop().catch(() => {});
  rmSync(tmp, { recursive: true, force: true });
}
process.on("SIGINT", () => void cleanup().finally(() => process.exit(130)));
process.on("SIGTERM", () => void cleanup().finally(() => process.exit(143)));

/** A scratch database URL, or undefined when Postgres does not answer. */
async function scratchDatabase(size: number): Promise<string | undefined> {
  try {
    const db = await createTestDatabase(`brain_bench_${size}`, PG_URL);
    scratchDbs.push(db);
    return db.url;
  } catch (err) {
    console.error(`postgres at ${PG_URL} is not usable (${(err as Error).message}); its columns are skipped`);
    return undefined;
  }
}

function openStore(backend: Backend, dataDir: string, dbUrl: string | undefined): Promise<IndexStore> {
  return openIndexStore({ dataDir, databaseUrl: backend === "postgres" ? dbUrl : undefined });
}

/** Build and refresh in this process, then time each query directly against the store. */
async function indexPhase(cell: Cell, vault: string, dataDir: string, dbUrl: string | undefined): Promise<void> {
  const store = await openStore(cell.backend, dataDir, dbUrl);
  try {
    const concurrency = settings.buildConcurrency;
    if (cell.backend === "sqlite" && concurrency === undefined) {
      // Already built by sqliteBuilds(), each build in its own process.
      cell.refreshSource = "refreshFolder";
    } else {
      console.log(`  full build…`);
      const build = await refreshRaw(store, vault, concurrency);
      cell.buildDocs = build.changed;
      cell.buildMs = build.ms;
      cell.refreshSource = build.source;
      console.log(`  built ${build.changed} docs in ${num(build.ms / 1000, 1)} s (${build.source})`);
    }
    const refreshes: RefreshResult[] = [];
    for (let i = 0; i < settings.refreshRuns; i++) refreshes.push(await refreshRaw(store, vault, concurrency));
    cell.refreshMs = refreshes.map((r) => r.ms);
    cell.refreshChanged = refreshes.reduce((s, r) => s + r.changed + r.removed, 0);
    const timings: { query: string; ms: number; hits: number }[] = [];
    for (const query of BENCH_QUERIES) {
      const parsed = parseQuery(query);
      const samples: number[] = [];
      let hits = 0;
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        hits = (await store.search(parsed, 10)).length;
        samples.push(performance.now() - t0);
      }
      timings.push({ query, ms: median(samples), hits });
    }
    cell.inProcessP50 = median(timings.map((t) => t.ms));
    cell.slowest = timings.sort((a, b) => b.ms - a.ms).slice(0, 4);
  } finally {
    await store.close();
  }
}

/** The SQLite builds, brain-stack's and the floor's, each in a process of its own; brain-stack's index is the one then served. */
async function sqliteBuilds(cell: Cell, vault: string, dataDir: string): Promise<void> {
  const child = async (kind: "brain" | "floor", out: string) => {
    const proc = Bun.spawn({ cmd: [process.execPath, join(import.meta.dir, "lib/build-child.ts"), kind, vault, out], stdout: "pipe", stderr: "inherit" });
    const text = await new Response(proc.stdout).text();
    if ((await proc.exited) !== 0) throw new Error(`${kind} build failed`);
    return JSON.parse(text.trim().split("\n").pop()!) as { docs: number; ms: number; rssMb: number };
  };
  console.log(`  full build (its own process), then the floor's…`);
  const brain = await child("brain", dataDir);
  const floor = await child("floor", join(tmp, `floor-${cell.size}.sqlite`));
  rmSync(join(tmp, `floor-${cell.size}.sqlite`), { force: true });
  Object.assign(cell, { buildDocs: brain.docs, buildMs: brain.ms, buildRssMb: brain.rssMb, floorBuildMs: floor.ms });
  console.log(`  built ${brain.docs} docs in ${num(brain.ms / 1000, 1)} s (floor ${num(floor.ms / 1000, 1)} s), RSS ${num(brain.rssMb)} MB`);
}

/**
 * Queries a prompt-time recall would send: 2–5 words taken from random notes of the vault
 * (words of four letters or more), each query distinct, none of BENCH_QUERIES: every one is
 * new to the server that answers it.
 */
function coldQueries(size: number, count: number): string[] {
  const rng = prng(size * 31 + 7);
  const out = new Set<string>();
  while (out.size < count) {
    const note = generateNote(settings.seed, Math.floor(rng() * size));
    const words = (note.content.toLowerCase().match(/[a-z]{4,}/g) ?? []).filter((w) => !["title", "tags", "date", "author"].includes(w));
    if (words.length === 0) continue;
    const n = 2 + Math.floor(rng() * 4);
    const query = Array.from({ length: n }, () => words[Math.floor(rng() * words.length)]!).join(" ");
    if (!BENCH_QUERIES.includes(query)) out.add(query);
  }
  return [...out];
}

/** Each query once, one request at a time, before anything else reaches the server: each request's time (ms). */
async function sendOnce(client: RouterClient, queries: string[]): Promise<number[]> {
  const out: number[] = [];
  for (const query of queries) {
    const t0 = performance.now();
    await client.search({ query, limit: 10 }).catch((err) => {
      throw new Error(`cold query ${JSON.stringify(query)}: ${(err as Error).message}`);
    });
    out.push(performance.now() - t0);
  }
  return out;
}

/** The bare search server (lib/search-floor-server.ts) on the same index file, under the same wrk runs. */
async function floorSearch(cell: Cell, dataDir: string, bodies: string[]): Promise<void> {
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = await startAndWait({
    cmd: [process.execPath, join(import.meta.dir, "lib/search-floor-server.ts")],
    env: { ...process.env, PORT: String(port), DB: join(dataDir, "index.sqlite") },
    readyUrl: `${base}/health`,
    logPath: join(tmp, `floor-search-${cell.size}.log`),
    timeoutMs: 30_000,
  });
  running.add(server);
  try {
    cell.floorCold = await sendOnce(new RouterClient({ baseUrl: base }), coldQueries(cell.size, settings.coldQueries));
    const load = { baseUrl: base, path: "/search", bodies, headers: {}, threads: 1 };
    await runWrkPost({ ...load, seconds: settings.warmupSeconds, connections: settings.connections });
    const cpu0 = cpuMs(server.pid);
    cell.floorLatency = await runWrkPost({ ...load, seconds: settings.seconds, connections: 1 });
    cell.floorCpuUsPerReq = ((cpuMs(server.pid) - cpu0) * 1000) / cell.floorLatency.requests;
    cell.floorThroughput = await runWrkPost({ ...load, seconds: settings.seconds, connections: settings.connections });
  } finally {
    await server.stop();
    running.delete(server);
  }
}

/** BENCH_PEER_ENV: settings (`KEY=value`, space-separated) of a second router for the first-time queries. */
const PEER_ENV =
  process.env.BENCH_PEER_ENV || process.env.BENCH_PEER_MAIN
    ? Object.fromEntries(
        (process.env.BENCH_PEER_ENV ?? "")
          .split(/\s+/)
          .filter(Boolean)
          .map((kv) => kv.split("=", 2) as [string, string]),
      )
    : undefined;

/** A router with PEER_ENV's settings on copies of the vault and the index, started before the bench's own. */
async function startPeer(cell: Cell, vault: string, dataDir: string, env: Record<string, string | undefined>): Promise<{ base: string; server: Started }> {
  cpSync(vault, `${vault}-peer`, { recursive: true });
  cpSync(dataDir, `${dataDir}-peer`, { recursive: true });
  const port = freePort();
  const server = await startAndWait({
    cmd: [process.execPath, process.env.BENCH_PEER_MAIN ?? MAIN, "--only", "router", "--vault", `${vault}-peer`],
    env: { ...env, ...PEER_ENV, PORT_BRAIN_API: String(port), PORT_BRAIN_MCP: String(freePort()), DATA_DIR: `${dataDir}-peer` },
    cwd: tmp,
    readyUrl: `http://127.0.0.1:${port}/health`,
    logPath: join(tmp, `server-peer-${cell.size}.log`),
    timeoutMs: 60_000,
  });
  running.add(server);
  return { base: `http://127.0.0.1:${port}`, server };
}

/** The real server on the built index: /search under wrk, /ingest from the loader, RSS. */
async function serverPhase(cell: Cell, vault: string, dataDir: string, dbUrl: string | undefined): Promise<void> {
  // HOME points at the scratch directory so no ~/.router/.env of the machine's user leaks in.
  const env: Record<string, string | undefined> = {
    ...process.env,
    HOME: tmp,
    KB_ROUTER_TOKEN: TOKEN,
    ROUTER_HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    DATABASE_URL: dbUrl,
  };
  for (const key of ["KB_ROUTER_TOKENS", "LOG_LEVEL", "EMBEDDINGS_URL", "LLM_API_BASE", "INFERENCE_URL", "VAULT_PATH"]) delete env[key];
  if (!dbUrl) delete env.DATABASE_URL;
  const logPath = join(tmp, `server-${cell.backend}-${cell.size}.log`);
  const peer = PEER_ENV && cell.backend === "sqlite" ? await startPeer(cell, vault, dataDir, env) : undefined;
  const server = await startService("router", { vault, env, cwd: tmp, logPath, timeoutMs: 60_000 });
  running.add(server);
  const base = server.url;
  const client = new RouterClient({ baseUrl: base, token: TOKEN });
  try {
    cell.startupMs = server.startupMs;
    await Bun.sleep(1000);
    cell.rssIdleMb = rssMb(server.pid);
    console.log(`  /search: ${settings.coldQueries} first-time queries, each once, one at a time…`);
    if (peer) {
      // Each query to both, in alternating order: the two meet the machine's load alike.
      const peerClient = new RouterClient({ baseUrl: peer.base, token: TOKEN });
      cell.cold = [];
      cell.peerCold = [];
      for (const [i, query] of coldQueries(cell.size, settings.coldQueries).entries()) {
        const ours = () => sendOnce(client, [query]).then((t) => cell.cold!.push(...t));
        const theirs = () => sendOnce(peerClient, [query]).then((t) => cell.peerCold!.push(...t));
        if (i % 2 === 0) await ours().then(theirs);
        else await theirs().then(ours);
      }
      await peer.server.stop();
      running.delete(peer.server);
    } else cell.cold = await sendOnce(client, coldQueries(cell.size, settings.coldQueries));

    cell.sample = await client.search({ query: "connection pool", limit: 3 }).then(
      (sample) => `HTTP 200, mode ${sample.mode}, ${sample.hits.length} hits, first ${sample.hits[0]?.path ?? "-"}`,
      (err) => (err instanceof ApiError ? `HTTP ${err.status}` : String(err)),
    );

    const bodies = BENCH_QUERIES.map((query) => JSON.stringify({ query, limit: 10 }));
    const load = { baseUrl: base, path: "/search", bodies, headers: AUTH, threads: 1 };
    console.log(`  /search: warm-up, latency (1 connection), throughput (${settings.connections} connections)…`);
    await runWrkPost({ ...load, seconds: settings.warmupSeconds, connections: settings.connections });
    const cpu0 = cpuMs(server.pid);
    cell.latency = await runWrkPost({ ...load, seconds: settings.seconds, connections: 1 });
    cell.cpuUsPerReq = ((cpuMs(server.pid) - cpu0) * 1000) / cell.latency.requests;
    cell.throughput = await runWrkPost({ ...load, seconds: settings.seconds, connections: settings.connections });
    cell.rssAfterSearchMb = rssMb(server.pid);
    if (settings.liveIngestRate > 0) {
      console.log(`  /search while ingesting ${settings.liveIngestRate} notes/s (1 connection; the same queries)…`);
      await searchWhileIngesting(cell, client, load);
    }
    if (cell.backend === "sqlite") {
      console.log(`  /search floor (bare Bun.serve, same FTS5 query): the same runs…`);
      await floorSearch(cell, dataDir, bodies);
    }

    console.log(`  GET /notes, /notes/{path}, /notes/{path}/context?depth=2: one request at a time…`);
    const rng = prng(cell.size + 17);
    const paths = Array.from({ length: 100 }, () => generateNote(settings.seed, Math.floor(rng() * cell.size)).path);
    cell.notes = await timeNotesEndpoints(client, paths);

    console.log(`  /ingest: ${settings.ingestDocs} notes, ${settings.ingestConcurrency} in flight…`);
    const docs = ingestBodies(settings.ingestDocs, 1000 + cell.size + (cell.backend === "postgres" ? 1 : 0));
    cell.ingest = await runPostLoader(
      { url: `${base}/ingest`, headers: AUTH, concurrency: settings.ingestConcurrency, bodies: docs.map((d) => JSON.stringify(d)) },
      join(tmp, `ingest-${cell.backend}-${cell.size}.json`),
    );
    cell.rssAfterIngestMb = rssMb(server.pid);
    if (server.proc.exitCode !== null || server.proc.signalCode !== null) {
      throw new Error(`the server exited during the run\n${logTail(server.logPath)}`);
    }
  } finally {
    await server.stop();
    running.delete(server);
  }
}

/**
 * The 1-connection /search run again, while a second client posts new notes to /ingest at
 * liveIngestRate a second, one at a time: the latency of a vault that is written to as it is
 * searched (an index that forgot what it knew at every write answers at the full query's
 * cost here).
 */
async function searchWhileIngesting(cell: Cell, client: RouterClient, load: Omit<Parameters<typeof runWrkPost>[0], "seconds" | "connections">): Promise<void> {
  const docs = ingestBodies(Math.ceil(settings.liveIngestRate * (settings.seconds + 2)) + 10, 5000 + cell.size);
  let stop = false;
  let posted = 0;
  const writer = (async () => {
    const t0 = performance.now();
    for (const doc of docs) {
      if (stop) break;
      if (
        await client.ingest(doc).then(
          () => true,
          () => false,
        )
      )
        posted++;
      const next = t0 + ((posted + 1) * 1000) / settings.liveIngestRate;
      await Bun.sleep(Math.max(0, next - performance.now()));
    }
  })();
  try {
    cell.liveLatency = await runWrkPost({ ...load, seconds: settings.seconds, connections: 1 });
  } finally {
    stop = true;
    await writer;
  }
  cell.liveIngested = posted;
}

function report(cells: Cell[], rg: Map<number, RgTiming[]>, rgMissing: boolean): void {
  const NA = Number.NaN;
  const cols = cells.map((c) => `${c.backend} ${c.size / 1000}k`);
  const row = (figure: string, value: (c: Cell) => number, decimals: number, target: string, meets?: (v: number) => boolean) => [
    figure,
    ...cells.map((c) => {
      const v = value(c);
      if (!Number.isFinite(v)) return "n/a";
      const judge = meets && c.backend === "sqlite" && (c.size === TARGET_SIZE || figure.includes("÷"));
      return judge ? judged(num(v, decimals), meets(v)) : num(v, decimals);
    }),
    target,
  ];
  const rgMs = (c: Cell, p: number) =>
    percentile(
      (rg.get(c.size) ?? []).map((t) => t.ms),
      p,
    );
  const ingestOk = (c: Cell) => (c.ingest?.statuses["201"] ?? 0) + (c.ingest?.statuses["200"] ?? 0);
  const rows: string[][] = [
    ["figure", ...cols, `target (${TARGET_SIZE / 1000}k, sqlite)`],
    row("full index build (docs/s)", (c) => (c.buildDocs ?? NA) / ((c.buildMs ?? NA) / 1000), 0, "—"),
    row("full index build (s)", (c) => (c.buildMs ?? NA) / 1000, 1, "—"),
    row("  floor build: read, 1 FTS5 + 1 docs row, 256/tx (s)", (c) => (c.floorBuildMs ?? NA) / 1000, 1, "(floor)"),
    row(
      "  build ÷ floor",
      (c) => (c.buildMs ?? NA) / (c.floorBuildMs ?? NA),
      2,
      "≤ 1.5",
      (v) => v <= 1.5,
    ),
    row("RSS of the build's process after it (MB)", (c) => c.buildRssMb ?? NA, 0, "≤ 150 (50k)"),
    row(
      `no-change refresh, median of ${settings.refreshRuns} (ms)`,
      (c) => median(c.refreshMs),
      0,
      `< ${TARGET.refreshMs} ms`,
      (v) => v < TARGET.refreshMs,
    ),
    row(`first-time query p50, ${settings.coldQueries} queries sent once to a fresh server (ms)`, (c) => percentile(c.cold ?? [], 50), 2, "—"),
    row("  floor: the same queries, fresh bare server, p50 (ms)", (c) => percentile(c.floorCold ?? [], 50), 2, "(floor)"),
    row(
      "  first-time p50 ÷ floor",
      (c) => percentile(c.cold ?? [], 50) / percentile(c.floorCold ?? [], 50),
      2,
      "≤ 1.3 (10k)",
      (v) => v <= 1.3,
    ),
    row("first-time query p99 (ms)", (c) => percentile(c.cold ?? [], 99), 2, "—"),
    row("  floor p99 (ms)", (c) => percentile(c.floorCold ?? [], 99), 2, "(floor)"),
    ...(PEER_ENV
      ? [
          row(
            `  peer (${[process.env.BENCH_PEER_ENV, process.env.BENCH_PEER_MAIN].filter(Boolean).join(", ")}), the same queries in turn: p50 (ms)`,
            (c) => percentile(c.peerCold ?? [], 50),
            2,
            "(peer)",
          ),
          row("  peer p99 (ms)", (c) => percentile(c.peerCold ?? [], 99), 2, "(peer)"),
          row("  first-time p50 ÷ peer", (c) => percentile(c.cold ?? [], 50) / percentile(c.peerCold ?? [], 50), 2, "—"),
          row("  first-time p99 ÷ peer", (c) => percentile(c.cold ?? [], 99) / percentile(c.peerCold ?? [], 99), 2, "—"),
        ]
      : []),
    row("index search in-process, median query (ms)", (c) => c.inProcessP50 ?? NA, 2, "—"),
    row(
      "repeat traffic: POST /search p50, 1 connection (ms)",
      (c) => c.latency?.p50Ms ?? NA,
      2,
      `< ${TARGET.p50Ms} ms`,
      (v) => v < TARGET.p50Ms,
    ),
    row(
      "repeat traffic: POST /search p99, 1 connection (ms)",
      (c) => c.latency?.p99Ms ?? NA,
      2,
      `< ${TARGET.p99Ms} ms`,
      (v) => v < TARGET.p99Ms,
    ),
    row(`  while ingesting ${settings.liveIngestRate} notes/s: p50 (ms)`, (c) => c.liveLatency?.p50Ms ?? NA, 2, "—"),
    row(
      `  while ingesting ${settings.liveIngestRate} notes/s: p99 (ms)`,
      (c) => c.liveLatency?.p99Ms ?? NA,
      2,
      `< ${TARGET.p99Ms} ms`,
      (v) => v < TARGET.p99Ms,
    ),
    row("  notes ingested during that run", (c) => c.liveIngested ?? NA, 0, "—"),
    row("POST /search req/s, 1 connection", (c) => c.latency?.rps ?? NA, 0, "—"),
    row("  floor req/s, 1 connection", (c) => c.floorLatency?.rps ?? NA, 0, "(floor)"),
    row(
      "  ÷ floor, 1 connection",
      (c) => (c.latency?.rps ?? NA) / (c.floorLatency?.rps ?? NA),
      2,
      "≥ 0.85",
      (v) => v >= 0.85,
    ),
    row("  floor p50, 1 connection (ms)", (c) => c.floorLatency?.p50Ms ?? NA, 2, "(floor)"),
    row("POST /search server CPU per request, 1 connection (µs)", (c) => c.cpuUsPerReq ?? NA, 0, "—"),
    row("  floor CPU per request (µs)", (c) => c.floorCpuUsPerReq ?? NA, 0, "(floor)"),
    row(
      "  floor CPU ÷ brain-stack's",
      (c) => (c.floorCpuUsPerReq ?? NA) / (c.cpuUsPerReq ?? NA),
      2,
      "≥ 0.85",
      (v) => v >= 0.85,
    ),
    row(`POST /search req/s, ${settings.connections} connections`, (c) => c.throughput?.rps ?? NA, 0, "—"),
    row(`  floor req/s, ${settings.connections} connections`, (c) => c.floorThroughput?.rps ?? NA, 0, "(floor)"),
    row(
      `  ÷ floor, ${settings.connections} connections`,
      (c) => (c.throughput?.rps ?? NA) / (c.floorThroughput?.rps ?? NA),
      2,
      "≥ 0.85",
      (v) => v >= 0.85,
    ),
    row(`POST /search p50 / p99, ${settings.connections} conn. (ms)`, (c) => c.throughput?.p50Ms ?? NA, 2, "—"),
    row("", (c) => c.throughput?.p99Ms ?? NA, 2, ""),
    row(
      "/search non-2xx + socket errors",
      (c) => (c.latency && c.throughput ? c.latency.non2xx + c.latency.errors + c.throughput.non2xx + c.throughput.errors : NA),
      0,
      "0",
    ),
    row(
      `POST /ingest (docs/s, ${settings.ingestConcurrency} in flight)`,
      (c) => (c.ingest ? ingestOk(c) / c.ingest.seconds : NA),
      0,
      `≥ ${TARGET.ingestRps}/s`,
      (v) => v >= TARGET.ingestRps,
    ),
    row("POST /ingest p50 / p99 (ms)", (c) => c.ingest?.p50Ms ?? NA, 1, "—"),
    row("", (c) => c.ingest?.p99Ms ?? NA, 1, ""),
    row("/ingest failures", (c) => (c.ingest ? c.ingest.requests - ingestOk(c) + c.ingest.errors : NA), 0, "0"),
    row("GET /health p50, sequential (ms)", (c) => c.notes?.healthP50 ?? NA, 2, "(floor)"),
    row("GET /notes?limit=50 p50 (ms)", (c) => c.notes?.listP50 ?? NA, 2, "—"),
    row("GET /notes/{path} p50 (ms)", (c) => c.notes?.getP50 ?? NA, 2, "—"),
    row(`GET …/context?depth=2 p50 (ms), ${settings.links} links/note`, (c) => c.notes?.contextP50 ?? NA, 2, "—"),
    row("  context depth 2: notes reached / returned", (c) => c.notes?.contextReached ?? NA, 0, "(median)"),
    row("", (c) => c.notes?.contextReturned ?? NA, 0, ""),
    row("notes endpoints non-200", (c) => c.notes?.failures ?? NA, 0, "0"),
    row("server start → /health 200 (ms)", (c) => c.startupMs ?? NA, 0, "—"),
    row("server RSS idle after start (MB)", (c) => c.rssIdleMb ?? NA, 1, "—"),
    row("server RSS after /search load (MB)", (c) => c.rssAfterSearchMb ?? NA, 1, "—"),
    row("server RSS after ingest (MB)", (c) => c.rssAfterIngestMb ?? NA, 1, "—"),
    row("rg over raw/ per query, p50 (ms)", (c) => (rgMissing ? NA : rgMs(c, 50)), 1, "(no-index baseline)"),
    row("rg over raw/ per query, p99 (ms)", (c) => (rgMissing ? NA : rgMs(c, 99)), 1, "(unranked file list)"),
  ];
  console.log();
  console.log(
    `search bench — ${BENCH_QUERIES.length} fixed queries rotated by wrk (${settings.seconds}s runs after a ${settings.warmupSeconds}s warm-up), BM25 only (no embeddings)`,
  );
  console.log(
    `bun ${Bun.version}, ${availableParallelism()} cores, load average ${load(loadAtStart)} at start and ${load(loadavg())} at the end (other work on the machine skews every figure)`,
  );
  console.log(`ingest: generated notes from a separate loader process (${ingestMix(settings.ingestDocs)}); rg: fixed strings, any word, case-insensitive\n`);
  console.log(table(rows));
  console.log();
  for (const c of cells) {
    const name = `${c.backend} ${c.size / 1000}k`;
    if (c.refreshSource)
      console.log(
        `${name}: refresh by ${c.refreshSource}; no-change refresh runs (ms): ${c.refreshMs.map((m) => num(m)).join(", ")}; docs touched: ${c.refreshChanged}`,
      );
    if (c.slowest)
      console.log(
        `${name}: slowest queries in-process (median of 5): ${c.slowest.map((s) => `${JSON.stringify(s.query)} ${num(s.ms, 1)} ms (${s.hits} hits)`).join("; ")}`,
      );
    if (c.sample) console.log(`${name}: sample POST /search → ${c.sample}`);
    if (c.ingest?.firstError) console.log(`${name}: first ingest error: ${c.ingest.firstError}`);
    if (c.error) console.log(`${name}: FAILED: ${c.error}`);
  }
  for (const [size, timings] of rg) {
    const slow = [...timings].sort((a, b) => b.ms - a.ms)[0];
    if (slow) console.log(`rg ${size / 1000}k: slowest ${JSON.stringify(slow.query)} ${num(slow.ms, 1)} ms (${slow.files} files)`);
  }
}

async function main(): Promise<number> {
  console.log(`search bench: sizes ${sizes.join(", ")}; backends ${backends.join(", ")}${large ? "" : " (100k: --large or BENCH_LARGE=1)"}`);
  await loadTool();
  const rgPath = await ensureRipgrep();
  const cells: Cell[] = [];
  const rg = new Map<number, RgTiming[]>();
  for (const size of sizes) {
    const vault = join(tmp, `vault-${size}`);
    mkdirSync(vault, { recursive: true });
    const gen = writeVault(vault, size, settings.seed, { linksPerNote: settings.links });
    console.log(`\n${size} notes (${settings.links} links each): wrote ${num(gen.bytes / 1024 / 1024, 1)} MB into raw/ in ${num(gen.ms / 1000, 1)} s`);
    if (rgPath) {
      await timeRipgrep(rgPath, join(vault, "raw"), BENCH_QUERIES.slice(0, 3)); // warm the page cache
      rg.set(size, await timeRipgrep(rgPath, join(vault, "raw"), BENCH_QUERIES));
    }
    for (const backend of backends) {
      const cell: Cell = { size, backend, refreshMs: [] };
      cells.push(cell);
      console.log(`${backend} ${size / 1000}k:`);
      try {
        const dbUrl = backend === "postgres" ? await scratchDatabase(size) : undefined;
        if (backend === "postgres" && !dbUrl) {
          cell.error = "postgres unavailable";
          continue;
        }
        const dataDir = join(tmp, `data-${backend}-${size}`);
        if (backend === "sqlite" && settings.buildConcurrency === undefined) await sqliteBuilds(cell, vault, dataDir);
        await indexPhase(cell, vault, dataDir, dbUrl);
        await serverPhase(cell, vault, dataDir, dbUrl);
      } catch (err) {
        cell.error = err instanceof Error ? err.message : String(err);
        console.error(`  ${backend} ${size}: ${cell.error}`);
      }
    }
    rmSync(vault, { recursive: true, force: true });
  }
  report(cells, rg, !rgPath);
  return 0;
}

let code = 0;
try {
  code = await main();
} catch (err) {
  console.error(`search bench could not run: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
} finally {
  await cleanup();
}
process.exit(code);
