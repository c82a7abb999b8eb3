// Drive HTTP load at a URL from a separate process and return throughput and latency.
// wrk is preferred (C, low overhead); where it is missing it is installed from Debian when we
// are root, else autocannon (npm, run by `bun x` as its own process) stands in.
// BENCH_LOADGEN=wrk|autocannon forces one.

export type LoadTool = "wrk" | "autocannon";

export interface LoadOptions {
  url: string;
  seconds: number;
  connections: number;
  /** wrk threads (autocannon ignores it: it runs one worker). */
  threads?: number;
  headers?: Record<string, string>;
}

export interface LoadResult {
  tool: LoadTool;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Socket errors and timeouts. */
  errors: number;
  /** Responses that were not 2xx (or 3xx for wrk). */
  non2xx: number;
}

const AUTOCANNON = "autocannon@8";

let resolved: Promise<LoadTool> | undefined;

/** The load generator this machine will use, installing wrk once if we may. */
export function loadTool(): Promise<LoadTool> {
  resolved ??= resolveTool();
  return resolved;
}

async function resolveTool(): Promise<LoadTool> {
  const forced = process.env.BENCH_LOADGEN;
  if (forced === "wrk" || forced === "autocannon") return forced;
  if (Bun.which("wrk")) return "wrk";
  if (process.getuid?.() === 0 && Bun.which("apt-get")) {
    console.error("wrk is not on PATH; installing it with apt-get (running as root)…");
    if ((await aptInstallWrk()) && Bun.which("wrk")) return "wrk";
    console.error("apt-get could not install wrk; falling back to autocannon");
  } else {
    console.error("wrk is not on PATH (install the Debian package 'wrk'); falling back to autocannon");
  }
  return "autocannon";
}

async function aptInstallWrk(): Promise<boolean> {
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const run = async (cmd: string[]) => (await Bun.spawn({ cmd, env, stdin: "ignore", stdout: "ignore", stderr: "ignore" }).exited) === 0;
  if (await run(["apt-get", "install", "-y", "-qq", "wrk"])) return true;
  // The package lists may be missing or stale on a fresh machine.
  return (await run(["apt-get", "update", "-qq"])) && (await run(["apt-get", "install", "-y", "-qq", "wrk"]));
}

/** A one-line description of how load is generated, for report headers. */
export function describeLoad(tool: LoadTool, o: Omit<LoadOptions, "url">): string {
  return tool === "wrk"
    ? `wrk -t${o.threads ?? 1} -c${o.connections} -d${o.seconds}s --latency`
    : `${AUTOCANNON} -c ${o.connections} -d ${o.seconds} (latency in whole ms)`;
}

export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const tool = await loadTool();
  const cmd = tool === "wrk" ? wrkCommand(opts) : autocannonCommand(opts);
  const proc = Bun.spawn({ cmd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  // Bounded: the generator stops itself after `seconds`; this is the backstop.
  const timer = setTimeout(() => proc.kill("SIGKILL"), (opts.seconds + 60) * 1000);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}\n${err}${out}`);
  return tool === "wrk" ? parseWrk(out) : parseAutocannon(out);
}

function wrkCommand(o: LoadOptions): string[] {
  const headers = Object.entries(o.headers ?? {}).flatMap(([k, v]) => ["-H", `${k}: ${v}`]);
  return ["wrk", `-t${o.threads ?? 1}`, `-c${o.connections}`, `-d${o.seconds}s`, "--latency", ...headers, o.url];
}

function autocannonCommand(o: LoadOptions): string[] {
  const headers = Object.entries(o.headers ?? {}).flatMap(([k, v]) => ["-H", `${k}=${v}`]);
  return [process.execPath, "x", AUTOCANNON, "--json", "-c", String(o.connections), "-d", String(o.seconds), ...headers, o.url];
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parse `wrk --latency` output. */
export function parseWrk(out: string): LoadResult {
  const percentile = (p: string): number => {
    const m = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s|m|h)\\s*$`, "m").exec(out);
    if (!m) throw new Error(`wrk output has no ${p}% latency line:\n${out}`);
    return Number(m[1]) * UNIT_MS[m[2]!]!;
  };
  const rps = /^Requests\/sec:\s+([\d.]+)/m.exec(out)?.[1];
  if (rps === undefined) throw new Error(`wrk output has no Requests/sec line:\n${out}`);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  return {
    tool: "wrk",
    rps: Number(rps),
    p50Ms: percentile("50"),
    p99Ms: percentile("99"),
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? Number.NaN),
    errors,
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
  };
}

interface AutocannonJson {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}

/** Parse `autocannon --json` output (the JSON is the last line of stdout). */
export function parseAutocannon(out: string): LoadResult {
  const line = out.trim().split("\n").at(-1) ?? "";
  const j = JSON.parse(line) as AutocannonJson;
  return {
    tool: "autocannon",
    rps: j.requests.average,
    p50Ms: j.latency.p50,
    p99Ms: j.latency.p99,
    requests: j.requests.total,
    errors: j.errors + j.timeouts,
    non2xx: j.non2xx,
  };
}
