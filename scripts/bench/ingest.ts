// Ingest benchmark (issue 21, part 1): POST /ingest docs/s at 1 and 8 connections, beside the
// bare floor measured in the same run — a small Bun.serve this bench starts itself that does
// only the minimum (lib/bare-ingest.ts: JSON parse, sha256, ledger lookup, one FTS5 row, two
// atomic file writes) — and the ratio; then `router-cli import DIR` on a folder of generated
// notes (10k by default) beside the floor's batch endpoint fed the same files in the same
// batches, each import round with a new floor and router in a scratch folder of its own (an
// empty vault; see the import rounds). The bodies are notes that classify as `note`, so
// brain-stack's work per document is the floor's plus what the API promises (auth,
// validation, frontmatter, the lock, the access log). Each phase uses fresh documents (no duplicates) from a loader in its own process;
// within a round the two servers take turns (4 each by default), so both meet the disk in the
// same seconds. Beside docs/s it prints each server's CPU per note (/proc, all threads).
// Last, signals at 1 connection into the vault the last import left (~6 % of its notes are open
// signals): a signal's fan-out looks through the open signals for a duplicate and rewrites
// signals.md, so it is printed beside plain notes posted in alternating turns (no floor: the
// floor has no fan-out), with the number of open signals.
//
//   bun run bench ingest
//   BENCH_IMPORT_PG_URL=postgres://postgres@127.0.0.1:5432/postgres bun run bench ingest   # the import rounds' routers index into Postgres (a scratch database each)
//   BENCH_INGEST_DOCS=2000 BENCH_INGEST_TURNS=4 BENCH_ROUNDS=3 BENCH_IMPORT_NOTES=10000 BENCH_IMPORT_ROUNDS=3 BENCH_INGEST_SIGNALS=300 bun scripts/bench/ingest.ts
//
// The import folder is the search bench's generated vault (test/support/vault-gen.ts): notes with
// frontmatter tags, ~6 % of which classify as signals and ~6 % as milestones, so the import
// also pays their fan-out (the signal files, the daily log, the signal stream), as a real
// folder of notes would.
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { cpuSplitMs, freePort, logTail, type Started, startAndWait, startService } from "../../test/support/process.ts";
import { createTestDatabase, type TestDatabase } from "../../test/support/servers.ts";
import { generatedKind, generateNote, writeVault } from "../../test/support/vault-gen.ts";
import { benchScratch, fileCreationMicros, SLOW_DISK_MICROS } from "./lib/disk.ts";
import { envNum } from "./lib/env.ts";
import { type PostResult, runPostLoader } from "./lib/post-loader.ts";
import { median } from "./lib/stats.ts";
import { num, table } from "./lib/table.ts";

const ROOT = resolve(import.meta.dir, "../..");
const settings = {
  docs: envNum("BENCH_INGEST_DOCS", 2_000),
  /** Each side's run of a round is cut into this many turns, the two sides taking turns. */
  turns: envNum("BENCH_INGEST_TURNS", 4),
  importNotes: envNum("BENCH_IMPORT_NOTES", 10_000),
  rounds: envNum("BENCH_ROUNDS", 3),
  /** Three, so one round whose file creations met freshly freed inodes (lib/disk.ts) does not set the median. */
  importRounds: envNum("BENCH_IMPORT_ROUNDS", 3),
  /** Signals posted at 1 connection after the imports (in three turns, beside as many plain notes). */
  signals: envNum("BENCH_INGEST_SIGNALS", 300),
};
const CONNECTIONS = [1, 8] as const;
const TARGET = { ratio: 0.7, importRate: 5_000 };
const TOKEN = "bench-router-token";
const AUTH = { Authorization: `Bearer ${TOKEN}` };

// A scratch folder away from the inodes earlier runs freed (lib/disk.ts): on this machine's
// disk they slowed every file creation near them for minutes.
const scratch = benchScratch("ingest-");
const tmp = scratch.dir;
/** Each side's top folders made together, right after the probe, in the group it measured (a folder made later by the server itself can be placed in another group, one a recent run freed inodes in). */
const sideFolders = (dir: string) => {
  for (const side of ["floor", "vault", "data"]) mkdirSync(join(dir, side), { recursive: true });
};
sideFolders(tmp);
/** Every scratch folder of the run: the single ingests' and each import round's (see the import rounds). */
const scratches = [tmp];
const running = new Set<Started>();
/** BENCH_IMPORT_PG_URL: the import rounds' routers keep their index in Postgres, a scratch database each. */
const importPgUrl = process.env.BENCH_IMPORT_PG_URL;
const scratchDbs: TestDatabase[] = [];
const cleanup = async () => {
  await Promise.all([...running].map((s) => s.stop()));
  for (const db of scratchDbs.splice(0)) await db.drop().catch(() => {});
  for (const dir of scratches) rmSync(dir, { recursive: true, force: true });
};
process.on("SIGINT", () => void cleanup().then(() => process.exit(130)));

/** Generated notes that classify as `kind` (plain notes unless asked), each unique. */
let nextNote = 0;
function noteBodies(count: number, kind: "note" | "signal" = "note"): string[] {
  const out: string[] = [];
  while (out.length < count) {
    const n = generateNote(4242, nextNote++);
    if (generatedKind(n.tags) !== kind) continue;
    out.push(JSON.stringify({ content: `${n.content}\n<!-- bench ingest ${nextNote} -->\n`, tags: ["bench"] }));
  }
  return out;
}

async function startFloor(top = tmp): Promise<{ base: string; server: Started }> {
  const port = freePort();
  const dir = join(top, "floor");
  mkdirSync(dir, { recursive: true });
  const server = await startAndWait({
    cmd: [process.execPath, join(import.meta.dir, "lib/bare-ingest.ts")],
    env: { ...process.env, PORT: String(port), DIR: dir },
    readyUrl: `http://127.0.0.1:${port}/health`,
    logPath: join(top, "floor.log"),
  });
  running.add(server);
  return { base: `http://127.0.0.1:${port}`, server };
}

async function startRouter(top = tmp, databaseUrl?: string): Promise<{ base: string; server: Started }> {
  // HOME points at the scratch directory so no ~/.router/.env of the machine's user leaks in.
  const env: Record<string, string | undefined> = {
    ...process.env,
    HOME: top,
    KB_ROUTER_TOKEN: TOKEN,
    ROUTER_HOST: "127.0.0.1",
    DATA_DIR: join(top, "data"),
    TICK_INTERVAL_SECONDS: "0",
  };
  for (const key of ["KB_ROUTER_TOKENS", "LOG_LEVEL", "EMBEDDINGS_URL", "LLM_API_BASE", "INFERENCE_URL", "VAULT_PATH", "DATABASE_URL", "REDIS_URL"])
    delete env[key];
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  const server = await startService("router", { vault: join(top, "vault"), env, cwd: top, logPath: join(top, "router.log"), timeoutMs: 60_000 });
  running.add(server);
  return { base: server.url, server };
}

/**
 * Runs `work` and returns its result with the server's CPU µs per document meanwhile (on a
 * shared machine wall-clock rates swing with other processes' load and I/O, CPU time per
 * document much less), and the system part of it (the file calls: it shows the disk's state).
 */
async function withCpu<T>(pid: number, docs: number, work: () => Promise<T>): Promise<[T, number, number]> {
  const [u0, s0] = cpuSplitMs(pid);
  const out = await work();
  const [u1, s1] = cpuSplitMs(pid);
  return [out, ((u1 - u0 + s1 - s0) * 1000) / docs, ((s1 - s0) * 1000) / docs];
}

/** A server that exited during the run fails it, with its log's tail. */
function assertRunning(s: Started): void {
  if (s.proc.exitCode !== null || s.proc.signalCode !== null) throw new Error(`a server exited during the run\n${logTail(s.logPath)}`);
}

/** Runs the floor's and brain-stack's side of a round, the floor first in even rounds, last in odd ones. */
async function inTurn<T>(round: number, floorSide: () => Promise<T>, routerSide: () => Promise<T>): Promise<[T, T]> {
  if (round % 2 === 0) {
    const f = await floorSide();
    return [f, await routerSide()];
  }
  const r = await routerSide();
  return [await floorSide(), r];
}

const failures = (r: PostResult) => r.requests - (r.statuses["201"] ?? 0) + r.errors;

async function post(
  url: string,
  headers: Record<string, string>,
  concurrency: number,
  label: string,
  docs = settings.docs,
  kind: "note" | "signal" = "note",
): Promise<PostResult> {
  const r = await runPostLoader({ url, headers, concurrency, bodies: noteBodies(docs, kind) }, join(tmp, `${label}.json`));
  if (failures(r) > 0) throw new Error(`${label}: ${failures(r)} of ${r.requests} not created; first: ${r.firstError}`);
  return r;
}

/** One side's share of a round, summed over its turns: docs/s, server CPU µs a note, p50 ms (median of the turns'). */
interface Side {
  docs: number;
  seconds: number;
  cpuMs: number;
  sysMs: number;
  p50s: number[];
}
const emptySide = (): Side => ({ docs: 0, seconds: 0, cpuMs: 0, sysMs: 0, p50s: [] });
const rateOf = (s: Side) => s.docs / s.seconds;
const cpuOf = (s: Side) => (s.cpuMs * 1000) / s.docs;
const sysOf = (s: Side) => (s.sysMs * 1000) / s.docs;

/**
 * A round at `c` connections: each side posts settings.docs new notes in settings.turns turns,
 * the sides taking turns (which goes first alternates turn by turn). File creation on this
 * kind of disk swings several-fold within seconds (see the README), so sides that run in the
 * same seconds compare like with like; a side's 2,000 notes in one go could land in a slow
 * spell the other missed.
 */
async function ingestRound(c: number, round: number, floor: Started, floorBase: string, router: Started, routerBase: string): Promise<[Side, Side]> {
  const [f, r] = [emptySide(), emptySide()];
  const per = Math.max(1, Math.floor(settings.docs / settings.turns));
  const turn = async (side: Side, pid: number, url: string, headers: Record<string, string>, label: string) => {
    const [u0, s0] = cpuSplitMs(pid);
    const out = await post(url, headers, c, label, per);
    const [u1, s1] = cpuSplitMs(pid);
    side.cpuMs += u1 - u0 + s1 - s0;
    side.sysMs += s1 - s0;
    side.docs += out.statuses["201"] ?? 0;
    side.seconds += out.seconds;
    side.p50s.push(out.p50Ms);
  };
  for (let t = 0; t < settings.turns; t++) {
    await inTurn(
      round + t,
      () => turn(f, floor.pid, `${floorBase}/ingest`, {}, `floor-${c}-${round}-${t}`),
      () => turn(r, router.pid, `${routerBase}/ingest`, AUTH, `router-${c}-${round}-${t}`),
    );
  }
  return [f, r];
}

/** The floor's import: the same files read and posted in the same batches to its batch endpoint. */
async function floorImport(base: string, dir: string, files: string[], batch: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < files.length; i += batch) {
    const items = files.slice(i, i + batch).map((f) => ({ content: readFileSync(join(dir, f), "utf8") }));
    const res = await fetch(`${base}/ingest/batch`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ items }) });
    if (!res.ok) throw new Error(`floor batch: HTTP ${res.status}`);
    await res.arrayBuffer();
  }
  return files.length / ((performance.now() - t0) / 1000);
}

async function routerImport(base: string, dir: string): Promise<number> {
  const t0 = performance.now();
  const proc = Bun.spawn({
    cmd: [process.execPath, join(ROOT, "cli/router-cli.ts"), "import", dir, "--brain-url", base, "--token", TOKEN],
    env: { ...process.env, HOME: tmp },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const seconds = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`router-cli import exited ${code}\n${err}${out}`);
  return settings.importNotes / seconds;
}

const loadStart = loadavg();
const diskStart = scratch.micros;
if (diskStart > SLOW_DISK_MICROS)
  console.log(
    `  the disk is slow right now: a small file's creation costs ${num(diskStart)} µs in the scratch folder (quiet: 30–70); the figures below pay it (see the README's Benchmarks)`,
  );
let diskEnd = Number.NaN;
type IngestRounds = { floor: number[]; router: number[]; p50: number[]; floorCpu: number[]; routerCpu: number[] };
const ingest: Record<number, IngestRounds> = {
  1: { floor: [], router: [], p50: [], floorCpu: [], routerCpu: [] },
  8: { floor: [], router: [], p50: [], floorCpu: [], routerCpu: [] },
};
const imports = { floor: [] as number[], router: [] as number[], floorCpu: [] as number[], routerCpu: [] as number[] };
const SIGNAL_TURNS = 3;
const signalRuns = { signal: [] as number[], note: [] as number[], p50: [] as number[], open: [] as number[] };
try {
  console.log(`ingest: ${settings.docs} new notes per run, ${settings.rounds} round(s) at 1 and 8 connections; import of ${settings.importNotes} notes`);
  const floor = await startFloor();
  const router = await startRouter();
  // Warm both (JIT, first directories, the database's pages).
  await post(`${floor.base}/ingest`, {}, 8, "warm-floor");
  await post(`${router.base}/ingest`, AUTH, 8, "warm-router");
  for (let round = 0; round < settings.rounds; round++) {
    for (const c of CONNECTIONS) {
      // The sides take turns within the round, the order alternating, as the import's rounds
      // do: the disk's state drifts within a run (file creation slows for minutes after a mass
      // delete, see the README), so neither side always runs first.
      const [f, r] = await ingestRound(c, round, floor.server, floor.base, router.server, router.base);
      const rounds = ingest[c]!;
      rounds.floor.push(rateOf(f));
      rounds.router.push(rateOf(r));
      rounds.p50.push(median(r.p50s));
      rounds.floorCpu.push(cpuOf(f));
      rounds.routerCpu.push(cpuOf(r));
      console.log(
        `  round ${round + 1}, ${c} connection(s): floor ${num(rateOf(f))} docs/s (${num(cpuOf(f))} µs server CPU a note, ${num(sysOf(f))} of it system), brain-stack ${num(rateOf(r))} docs/s (${num(cpuOf(r))} µs, ${num(sysOf(r))})`,
      );
    }
  }

  // Each import round in a scratch folder of its own (probed, lib/disk.ts), with a new floor
  // and router, so each import goes into an empty vault, as a team's first import does. In one
  // folder a whole run made ~190,000 files, more than a group of this disk's inodes (131,072):
  // each folder's files went on in two to four other groups the allocator picked (seen by
  // their inode numbers), one side's sometimes where a recent run had freed inodes. A round
  // makes ~50,000, and no round's files carry on where an earlier round's left off.
  // The servers the signals go to last: the single ingests', until an import round replaces them.
  let last = { router, vault: join(tmp, "vault"), servers: [floor.server, router.server] };
  for (let round = 0; round < settings.importRounds; round++) {
    for (const s of last.servers) {
      assertRunning(s);
      await s.stop();
      running.delete(s);
    }
    const roundScratch = benchScratch(`ingest-import-${round}-`);
    scratches.push(roundScratch.dir);
    sideFolders(roundScratch.dir);
    const roundFloor = await startFloor(roundScratch.dir);
    const roundDb = importPgUrl ? await createTestDatabase(`brain_import_${round}`, importPgUrl) : undefined;
    if (roundDb) scratchDbs.push(roundDb);
    const roundRouter = await startRouter(roundScratch.dir, roundDb?.url);
    last = { router: roundRouter, vault: join(roundScratch.dir, "vault"), servers: [roundFloor.server, roundRouter.server] };
    const dir = join(roundScratch.dir, "import");
    // A fresh seed per round, so no two rounds import the same notes.
    console.log(`  import round ${round + 1}: writing ${settings.importNotes} notes (a small file's creation there: ${num(roundScratch.micros)} µs)…`);
    writeVault(dir, settings.importNotes, 100 + round);
    const files = [...new Bun.Glob("**/*.md").scanSync(dir)].sort();
    // Each import leaves the disk busy writing its files back: the order alternates, so neither
    // side always runs in the other's wake.
    const [[f, fCpu, fSys], [r, rCpu, rSys]] = await inTurn(
      round,
      () => withCpu(roundFloor.server.pid, files.length, () => floorImport(roundFloor.base, dir, files, 500)),
      () => withCpu(roundRouter.server.pid, files.length, () => routerImport(roundRouter.base, dir)),
    );
    imports.floor.push(f);
    imports.router.push(r);
    imports.floorCpu.push(fCpu);
    imports.routerCpu.push(rCpu);
    // A side whose system time a note is several times the other's met inodes freed in the
    // last minutes where its files were placed (lib/disk.ts): said, so the round is read as the disk's.
    const slowSide = rSys > 2.5 * fSys ? "brain-stack's" : fSys > 2.5 * rSys ? "the floor's" : undefined;
    console.log(
      `  round ${round + 1}: floor ${num(f)} docs/s (${num(fCpu)} µs server CPU a note, ${num(fSys)} of it system), router-cli import ${num(r)} docs/s (${num(rCpu)} µs, ${num(rSys)})${slowSide ? ` — ${slowSide} file creations slow in this round (freed inodes near its folders; lib/disk.ts)` : ""}`,
    );
  }
  // Signals with many open ones: a signal's fan-out checks the open signals for a duplicate and
  // rewrites signals.md (every live signal), so its cost grows with their number. The imports
  // left ~6 % of their notes as open signals; signals and plain notes go in alternating turns
  // at 1 connection, the plain notes as the peer measured in the same seconds.
  const openBefore = readdirSync(join(last.vault, "amygdala")).length;
  for (let t = 0; t < SIGNAL_TURNS; t++) {
    const s = await post(`${last.router.base}/ingest`, AUTH, 1, `signals-${t}`, settings.signals / SIGNAL_TURNS, "signal");
    const n = await post(`${last.router.base}/ingest`, AUTH, 1, `signal-peers-${t}`, settings.signals / SIGNAL_TURNS);
    signalRuns.signal.push(s.rps);
    signalRuns.note.push(n.rps);
    signalRuns.p50.push(s.p50Ms);
  }
  signalRuns.open = [openBefore, readdirSync(join(last.vault, "amygdala")).length];
  console.log(
    `  signals: ${signalRuns.signal.map((x) => num(x)).join(", ")} docs/s (plain notes beside them: ${signalRuns.note.map((x) => num(x)).join(", ")}) with ${num(openBefore)} → ${num(signalRuns.open[1]!)} open signals`,
  );
  for (const s of last.servers) assertRunning(s);
  diskEnd = fileCreationMicros(tmp);
} catch (err) {
  console.error(String((err as Error).stack ?? err));
  await cleanup();
  process.exit(1);
}
await cleanup();

const ratio = (a: number, b: number) => a / b;
const rows: string[][] = [["work", "brain-stack", "bare floor", "ratio", "target"]];
for (const c of CONNECTIONS) {
  const f = median(ingest[c]!.floor);
  const r = median(ingest[c]!.router);
  // The median of each round's own ratio: a round's two runs share the disk's state, which
  // drifts between rounds, so pairs compare like with like (a ratio of medians can pair a
  // fast round's brain-stack with a slow round's floor).
  const paired = median(ingest[c]!.router.map((x, i) => ratio(x, ingest[c]!.floor[i]!)));
  rows.push([
    `POST /ingest, ${c} connection${c > 1 ? "s" : ""} (docs/s)`,
    num(r),
    num(f),
    num(paired, 2),
    `≥ ${TARGET.ratio} ${paired >= TARGET.ratio ? "ok" : "MISS"}`,
  ]);
}
const fi = median(imports.floor);
const ri = median(imports.router);
rows.push([
  `router-cli import, ${num(settings.importNotes)} notes (docs/s)`,
  num(ri),
  num(fi),
  num(median(imports.router.map((x, i) => ratio(x, imports.floor[i]!))), 2),
  `≥ ${num(TARGET.importRate)}/s ${ri >= TARGET.importRate ? "ok" : "MISS"}`,
]);
console.log(`\n${table(rows)}`);
console.log(
  `POST /ingest, server CPU a note (user + system), 1 connection: brain-stack ${num(median(ingest[1]!.routerCpu))} µs, floor ${num(median(ingest[1]!.floorCpu))} µs; 8 connections: ${num(median(ingest[8]!.routerCpu))} µs, ${num(median(ingest[8]!.floorCpu))} µs`,
);
console.log(
  `import, server CPU a note (user + system; steadier than docs/s on a busy machine): brain-stack ${num(median(imports.routerCpu))} µs, floor ${num(median(imports.floorCpu))} µs (${num(median(imports.routerCpu) / median(imports.floorCpu), 2)}×)`,
);
console.log(
  `medians of ${settings.rounds} round(s) (import: ${settings.importRounds}); the ratios are the median of each round's own (1 connection: ${ingest[1]!.router
    .map((x, i) => num(ratio(x, ingest[1]!.floor[i]!), 2))
    .join(
      ", ",
    )}; 8: ${ingest[8]!.router.map((x, i) => num(ratio(x, ingest[8]!.floor[i]!), 2)).join(", ")}); POST /ingest p50 at 1 connection ${num(median(ingest[1]!.p50), 2)} ms`,
);
console.log(
  `POST /ingest of a signal at 1 connection, with ${num(signalRuns.open[0]!)}–${num(signalRuns.open[1]!)} open signals in the vault: ${num(median(signalRuns.signal))} docs/s (p50 ${num(median(signalRuns.p50), 2)} ms), ${num(median(signalRuns.signal) / median(signalRuns.note), 2)} of a plain note's rate in the same seconds (${num(median(signalRuns.note))} docs/s)`,
);
console.log(`disk: a small file's creation (temp + rename) ${num(diskStart)} µs at the start, ${num(diskEnd)} µs at the end (median of 200; lib/disk.ts)`);
console.log(
  `load average: ${loadStart.map((x) => x.toFixed(2)).join(" ")} at start, ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")} at end`,
);
