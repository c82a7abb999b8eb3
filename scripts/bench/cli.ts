// CLI benchmark (issues 7 and 8): the compiled clients as a user runs them. Builds both with
// `bun run build` into a temp dir, then reports wall-time medians of
//   router-cli --version, router-cli check --json (against a live router when it serves
//   /health/deep and /health/pipeline; "n/a" otherwise), service-cli version, and
//   service-cli jobs against an orchestrator holding 1,000 jobs,
// and the binaries' sizes. Targets: router-cli --version < 40 ms and check --json < 150 ms
// (issue 7); service-cli version < 40 ms, jobs < 150 ms (issue 8). Then the Claude Code hooks
// (issue 16): `router-cli hook session-start | prompt | stop` p50/p99 with the router up
// (< 40 ms) and down (never > 2 s), beside the floor of a compiled Bun binary that only reads
// stdin, run after each hook run so that both see the same load. The prompt hook runs with a
// prompt that two lessons match, in a new session each run, so every run searches the vault,
// reads the notes and injects them (issue 35, recall at the prompt).
//
//   bun run bench cli
//   BENCH_CLI_RUNS=50 BENCH_CLI_JOBS=5000 bun scripts/bench/cli.ts
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { RouterClient } from "../../src/router/client.ts";
import { tempDir } from "../../test/support/main-process.ts";
import { freePort, type Started, startService } from "../../test/support/process.ts";
import { envNum } from "./lib/env.ts";
import { median, percentile } from "./lib/stats.ts";
import { judged, num, table } from "./lib/table.ts";

const ROOT = resolve(import.meta.dir, "../..");
const RUNS = envNum("BENCH_CLI_RUNS", 30);
const STORED = envNum("BENCH_CLI_JOBS", 1000);
const KEY = "bench-cli-key";
const TOKEN = "bench-cli-router-token";
const TARGET = { versionMs: 40, jobsMs: 150, routerVersionMs: 40, checkMs: 150, hookUpMs: 40, hookDownMs: 2000 };

const tmp = tempDir("brain-bench-cli");
const servers: Started[] = [];
async function cleanup(): Promise<void> {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(tmp, { recursive: true, force: true });
}
process.on("SIGINT", () => void cleanup().finally(() => process.exit(130)));

async function build(): Promise<string> {
  const out = join(tmp, "bin");
  const proc = Bun.spawn([process.execPath, "run", "build", "--outdir", out], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`bun run build failed (exit ${code}):\n${stderr}`);
  return out;
}

interface Timed {
  medianMs: number;
  code: number;
}

/** Wall time of `argv` from spawn to exit, RUNS times after one warm-up run; the last exit code. */
async function time(argv: string[], env: Record<string, string>): Promise<Timed> {
  const samples: number[] = [];
  let code = 0;
  for (let i = 0; i <= RUNS; i++) {
    const t0 = performance.now();
    const proc = Bun.spawn(argv, { env, cwd: tmp, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    await Promise.all([new Response(proc.stdout).arrayBuffer(), new Response(proc.stderr).arrayBuffer()]);
    code = await proc.exited;
    if (i > 0) samples.push(performance.now() - t0);
  }
  return { medianMs: median(samples), code };
}

function jobRecord(i: number, now: string) {
  return {
    id: Bun.randomUUIDv7(),
    status: i % 10 === 0 ? "failed" : "succeeded",
    profile: i % 2 ? "code" : "review",
    task: `Explain stored job ${i}`,
    repo_url: "https://example.com/acme/widgets.git",
    base_ref: "main",
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
    usage: null,
    cost_usd: null,
  };
}

async function startOrchestrator(): Promise<string> {
  const jobsDir = join(tmp, "jobs");
  mkdirSync(jobsDir, { recursive: true });
  const now = new Date().toISOString();
  for (let i = 0; i < STORED; i++) {
    const job = jobRecord(i, now);
    writeFileSync(join(jobsDir, `${job.id}.json`), JSON.stringify(job));
  }
  const service = await startService("orchestrator", {
    cwd: tmp,
    env: {
      PATH: process.env.PATH,
      HOME: join(tmp, "orch-home"),
      SERVICE_API_KEYS: KEY,
      SERVICE_OTEL_ENABLED: "false",
      SERVICE_JOBS_DIR: jobsDir,
      SERVICE_JOB_TTL: String(7 * 86400),
      LOG_LEVEL: "1",
    },
    logPath: join(tmp, "orchestrator.log"),
  });
  servers.push(service);
  return new URL(service.url).port;
}

/** A router on a temp vault, when it serves both deep and pipeline health; undefined otherwise. */
async function startRouter(): Promise<string | undefined> {
  let router: Started & { url: string };
  try {
    router = await startService("router", {
      vault: join(tmp, "vault"),
      cwd: tmp,
      env: { PATH: process.env.PATH, HOME: join(tmp, "router-home"), KB_ROUTER_TOKEN: TOKEN, DATA_DIR: join(tmp, "router-data"), LOG_LEVEL: "1" },
      logPath: join(tmp, "router.log"),
    });
    servers.push(router);
  } catch (err) {
    console.log(`router did not start (router-cli check is n/a): ${(err as Error).message.split("\n")[0]}`);
    return undefined;
  }
  const url = router.url;
  for (const path of ["/health/deep", "/health/pipeline"]) {
    const res = await fetch(url + path, { headers: { authorization: `Bearer ${TOKEN}` } }).catch(() => undefined);
    await res?.arrayBuffer();
    if (!res || res.status === 404) return undefined;
  }
  return url;
}

async function once(argv: string[], env: Record<string, string>, stdin: string): Promise<number> {
  const t0 = performance.now();
  const proc = Bun.spawn(argv, { env, cwd: tmp, stdin: new Blob([stdin]), stdout: "pipe", stderr: "pipe" });
  await Promise.all([new Response(proc.stdout).arrayBuffer(), new Response(proc.stderr).arrayBuffer()]);
  await proc.exited;
  return performance.now() - t0;
}

/**
 * Wall times of `argv` fed `stdin`, RUNS times after one warm-up run, each run followed by one
 * of the floor (pushed to `floor`): the floor is measured under the same load, moment by moment.
 */
async function samples(
  argv: string[],
  env: Record<string, string>,
  stdin: (run: number) => string,
  floor: { argv: string[]; times: number[] },
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    const t = await once(argv, env, stdin(i));
    const f = await once(floor.argv, { PATH: "/usr/bin:/bin" }, stdin(i));
    if (i > 0) {
      out.push(t);
      floor.times.push(f);
    }
  }
  return out;
}

/** The floor: a compiled Bun binary that reads stdin and exits, built like router-cli. */
async function floorBinary(): Promise<string> {
  const src = join(tmp, "floor.ts");
  writeFileSync(src, "await Bun.stdin.text();\n");
  const out = join(tmp, "floor");
  const proc = Bun.spawn([process.execPath, "build", src, "--compile", "--outfile", out, "--minify", "--bytecode", "--format=esm"], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if ((await proc.exited) !== 0) throw new Error(`floor binary build failed: ${await new Response(proc.stderr).text()}`);
  return out;
}

async function hookRows(router: string, routerUrl: string | undefined): Promise<string[][]> {
  const home = join(tmp, "hook-home");
  // As after `router-cli install`: the hooks read ~/.router/.env beside the settings' env.
  mkdirSync(join(home, ".router"), { recursive: true });
  writeFileSync(join(home, ".router", ".env"), "AMYGDALA_MIN_SEVERITY=high\nBRAIN_FEED_MAX_CHARS=6000\n");
  const transcript = join(tmp, "transcript.jsonl");
  const entry = {
    type: "assistant",
    uuid: "bench-entry",
    timestamp: new Date().toISOString(),
    message: { content: [{ type: "text", text: "<!-- @lesson -->\nBench lesson.\n<!-- @/lesson -->" }] },
  };
  writeFileSync(transcript, `${JSON.stringify({ type: "user", message: { content: "hi" } })}\n${JSON.stringify(entry)}\n`);
  const input = JSON.stringify({ session_id: "bench-session", transcript_path: transcript, cwd: tmp });
  // The prompt hook: a prompt two lessons bear on, in a new session each run (a note is given once a session).
  const prompt = (run: number) =>
    JSON.stringify({ session_id: `bench-prompt-${run}`, cwd: tmp, prompt: "Why does the payment suite keep timing out in the sandbox?" });
  const floorRuns = { argv: [await floorBinary()], times: [] as number[] };
  const down = { PATH: "/usr/bin:/bin", HOME: home, BRAIN_URL: `http://127.0.0.1:${freePort()}`, KB_ROUTER_TOKEN: TOKEN };
  const up = routerUrl ? { ...down, BRAIN_URL: routerUrl } : undefined;
  if (routerUrl) {
    const routerClient = new RouterClient({ baseUrl: routerUrl, token: TOKEN });
    for (let i = 0; i < 5; i++) {
      await routerClient.marker({ type: "lesson", content: `Bench feed lesson ${i}.` });
    }
    for (const [day, content] of [
      ["2026-03-04", "The payment suite flakes when the sandbox clock drifts: sync the clock before running it."],
      ["2026-04-15", "Payment sandbox timeouts come from the rate limiter; raise it for the test account."],
    ] as const) {
      await routerClient.marker({ type: "lesson", content, attrs: { ts: `${day}T09:00:00Z` } });
    }
    // The hook must have something to inject, or the row measures a search that found nothing
    // (a marker's lesson log is indexed soon after it is written: polled for up to 10 s).
    let said = "";
    for (const deadline = Date.now() + 10_000; !said.includes("payment suite flakes") && Date.now() < deadline; ) {
      const probe = Bun.spawn([router, "hook", "prompt"], { env: up!, cwd: tmp, stdin: new Blob([prompt(-1)]), stdout: "pipe", stderr: "pipe" });
      said = await new Response(probe.stdout).text();
      await probe.exited;
    }
    if (!said.includes("payment suite flakes")) throw new Error(`the prompt hook injected no lesson: ${said || "(nothing)"}`);
  }
  const measured: Array<{ event: string; u?: number[]; d: number[] }> = [];
  for (const event of ["session-start", "prompt", "stop"]) {
    const stdin = event === "prompt" ? prompt : () => input;
    const u = up ? await samples([router, "hook", event], up, stdin, floorRuns) : undefined;
    measured.push({ event, u, d: await samples([router, "hook", event], down, stdin, floorRuns) });
  }
  const floor = floorRuns.times;
  const floorP50 = percentile(floor, 50);
  // p50 / p99, and the p50 as a multiple of the floor's (the figure that survives a loaded machine).
  const fmt = (xs: number[]) => `${num(percentile(xs, 50), 1)} / ${num(percentile(xs, 99), 1)} ms (${num(percentile(xs, 50) / floorP50, 1)}× floor)`;
  const rows: string[][] = [["hook (p50 / p99, spawn to exit)", "router up", "router down", "target"]];
  for (const { event, u, d } of measured) {
    rows.push([
      `router-cli hook ${event}${event === "prompt" ? " (recall: 2 lessons injected)" : ""}`,
      u ? judged(fmt(u), percentile(u, 50) < TARGET.hookUpMs) : "n/a",
      judged(fmt(d), Math.max(...d) < TARGET.hookDownMs),
      `< ${TARGET.hookUpMs} ms up; < ${TARGET.hookDownMs} ms down`,
    ]);
  }
  rows.push([
    `floor: compiled Bun binary, reads stdin (run after each hook run, ${floor.length}×)`,
    `${num(floorP50, 1)} / ${num(percentile(floor, 99), 1)} ms`,
    "",
    "",
  ]);
  return rows;
}

const mib = (path: string) => `${(statSync(path).size / 1024 / 1024).toFixed(1)} MiB`;

async function main(): Promise<number> {
  console.log(
    `cli bench: ${RUNS} runs per command (median wall time, spawn to exit), ${STORED} stored jobs; bun ${Bun.version}, ${availableParallelism()} cores\n`,
  );
  const bin = await build();
  const router = join(bin, "router-cli");
  const service = join(bin, "service-cli");
  const [orchestratorPort, routerUrl] = await Promise.all([startOrchestrator(), startRouter()]);
  const base = { PATH: "/usr/bin:/bin", HOME: join(tmp, "cli-home") };
  const serviceEnv = { ...base, SERVICE_PORT: orchestratorPort, SERVICE_API_KEY: KEY };

  const routerVersion = await time([router, "--version"], base);
  const check = routerUrl ? await time([router, "check", "--json", "--brain-url", routerUrl, "--token", TOKEN], base) : undefined;
  const serviceVersion = await time([service, "version"], base);
  const jobs = await time([service, "jobs"], serviceEnv);
  if (jobs.code !== 0) throw new Error(`service-cli jobs exited ${jobs.code}`);

  const ms = (t: Timed | undefined) => (t ? `${num(t.medianMs, 1)} ms` : "n/a");
  console.log(
    table([
      ["command", "median", "target"],
      ["router-cli --version", judged(ms(routerVersion), routerVersion.medianMs < TARGET.routerVersionMs), `< ${TARGET.routerVersionMs} ms`],
      [
        "router-cli check --json",
        check ? `${judged(ms(check), check.medianMs < TARGET.checkMs)} (exit ${check.code})` : "n/a (no /health/deep and /health/pipeline)",
        `< ${TARGET.checkMs} ms`,
      ],
      ["service-cli version", judged(ms(serviceVersion), serviceVersion.medianMs < TARGET.versionMs), `< ${TARGET.versionMs} ms`],
      [`service-cli jobs (${STORED} stored)`, judged(ms(jobs), jobs.medianMs < TARGET.jobsMs), `< ${TARGET.jobsMs} ms`],
    ]),
  );
  console.log(`\n${table(await hookRows(router, routerUrl))}`);
  console.log(
    `\n${table([
      ["binary", "size"],
      ["router-cli", mib(router)],
      ["service-cli", mib(service)],
    ])}`,
  );
  return 0;
}

let code = 1;
try {
  code = await main();
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
} finally {
  await cleanup();
}
process.exit(code);
