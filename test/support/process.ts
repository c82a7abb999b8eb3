// Child processes for the suites and the benches (scripts/bench): a free loopback port, a server
// started with its output in a log file and waited for until a URL answers 200 (timed: the
// benches report start → ready), a SIGTERM-then-SIGKILL stop, and the process's RSS and CPU
// from /proc. Output goes to a log file (not a pipe), so a chatty server never blocks on a full
// pipe and the tail can be shown when start-up fails.
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";

/** The one entry point of both services. */
export const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

const LOW_PORT = 20000;
/**
 * Below the kernel's ephemeral range (Linux: 32768 by default), whose ports outgoing
 * connections take as their own: a port free when picked could otherwise be taken by the next
 * connection to Postgres before the server binds it ("already in use").
 */
const HIGH_PORT = ephemeralLow() ?? 32768;

function ephemeralLow(): number | undefined {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return low > LOW_PORT + 1000 ? low : undefined;
  } catch {
    return undefined;
  }
}

/** A TCP port on 127.0.0.1 that nothing listens on right now (random, so parallel runs rarely collide). */
export function freePort(): number {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = LOW_PORT + Math.floor(Math.random() * (HIGH_PORT - LOW_PORT));
    try {
      const listener = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
      listener.stop(true);
      return port;
    } catch {
      // taken: try another
    }
  }
  throw new Error(`no free port found in ${LOW_PORT}-${HIGH_PORT} after 50 attempts`);
}

export interface StartOptions {
  cmd: string[];
  /** The URL polled until it answers 200. */
  readyUrl: string;
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** stdout and stderr of the process are appended here. */
  logPath: string;
  timeoutMs?: number;
}

export interface Started {
  proc: Subprocess;
  pid: number;
  /** Milliseconds from just before spawn to the first 200 from readyUrl. */
  startupMs: number;
  logPath: string;
  stop(): Promise<void>;
}

const POLL_MS = 5;

export async function startAndWait(opts: StartOptions): Promise<Started> {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const fd = openSync(opts.logPath, "a");
  const t0 = performance.now();
  const proc = Bun.spawn({
    cmd: opts.cmd,
    cwd: opts.cwd,
    env: opts.env,
    stdin: "ignore",
    stdout: fd,
    stderr: fd,
  });
  closeSync(fd);
  const stop = () => stopProcess(proc);

  const deadline = t0 + timeoutMs;
  let lastStatus = "no answer";
  while (performance.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`${opts.cmd.join(" ")} exited (${proc.exitCode ?? proc.signalCode}) before ${opts.readyUrl} answered 200\n${logTail(opts.logPath)}`);
    }
    try {
      const res = await fetch(opts.readyUrl, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) {
        return { proc, pid: proc.pid, startupMs: performance.now() - t0, logPath: opts.logPath, stop };
      }
      lastStatus = `HTTP ${res.status}`;
    } catch {
      // not listening yet
    }
    await Bun.sleep(POLL_MS);
  }
  await stop();
  throw new Error(`${opts.readyUrl} did not answer 200 within ${timeoutMs} ms (last: ${lastStatus})\n${logTail(opts.logPath)}`);
}

export interface ServiceStart {
  /** The router's `--vault`. */
  vault?: string;
  /** The process's whole environment, less the ports (chosen here). */
  env: Record<string, string | undefined>;
  cwd?: string;
  logPath: string;
  timeoutMs?: number;
}

/**
 * `bun src/main.ts --only router|orchestrator` on free loopback ports (the router's API and MCP
 * listener, the orchestrator's SERVICE_PORT), waited for until GET /health answers 200; `url`
 * is its API.
 */
export async function startService(only: "router" | "orchestrator", opts: ServiceStart): Promise<Started & { url: string }> {
  const port = freePort();
  const ports = only === "router" ? { PORT_BRAIN_API: String(port), PORT_BRAIN_MCP: String(freePort()) } : { SERVICE_PORT: String(port) };
  const url = `http://127.0.0.1:${port}`;
  const started = await startAndWait({
    cmd: [process.execPath, MAIN, "--only", only, ...(opts.vault ? ["--vault", opts.vault] : [])],
    env: { ...opts.env, ...ports },
    cwd: opts.cwd,
    readyUrl: `${url}/health`,
    logPath: opts.logPath,
    timeoutMs: opts.timeoutMs,
  });
  return { ...started, url };
}

/** SIGTERM, then SIGKILL if the process is still there after the grace period. */
export async function stopProcess(proc: Subprocess, graceMs = 3000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill("SIGTERM");
  const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(graceMs).then(() => false)]);
  if (!exited) {
    proc.kill("SIGKILL");
    await proc.exited;
  }
}

/**
 * CPU time the process has used so far, user + system, in ms, from /proc/<pid>/stat (all its
 * threads; clock ticks of 10 ms). NaN where /proc is not there.
 */
export function cpuMs(pid: number): number {
  const [user, system] = cpuSplitMs(pid);
  return user + system;
}

/** The same, user and system apart (system time is mostly file and socket calls). */
export function cpuSplitMs(pid: number): [user: number, system: number] {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces) start at state, field 3.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return [Number(fields[11]) * 10, Number(fields[12]) * 10];
  } catch {
    return [Number.NaN, Number.NaN];
  }
}

/** Resident set size in MB from /proc/<pid>/status (VmRSS); NaN where /proc is not available. */
export function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb === undefined ? Number.NaN : Number(kb) / 1024;
  } catch {
    return Number.NaN;
  }
}

export function logTail(path: string, lines = 20): string {
  try {
    const text = readFileSync(path, "utf8").trimEnd();
    return text
      .split("\n")
      .slice(-lines)
      .map((l) => `  | ${l}`)
      .join("\n");
  } catch {
    return "  | (no output)";
  }
}
