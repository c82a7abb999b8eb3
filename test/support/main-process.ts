// Starts `bun src/main.ts` as a real subprocess on free ports (port 0) with a temp HOME,
// and reads the bound ports back from its start-up log.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { until } from "./until";

export const REPO = join(import.meta.dir, "..", "..");
const MAIN = join(REPO, "src", "main.ts");

export interface MainProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  routerUrl?: string;
  /** The router's MCP listener (PORT_BRAIN_MCP). */
  mcpUrl?: string;
  orchestratorUrl?: string;
  home: string;
  /** Everything printed so far (stdout + stderr). */
  output(): string;
  /** Resolves once the output matches, or throws after timeoutMs. */
  waitForOutput(pattern: string | RegExp, timeoutMs?: number): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `${prefix}-`));
}

/** Runs main.ts to completion (for start-up failures): exit code and output. */
export async function runMain(args: string[], env: Record<string, string>, timeoutMs = 15_000) {
  const home = env.HOME ?? tempDir("home");
  const proc = Bun.spawn(["bun", MAIN, ...args], {
    cwd: home,
    // PORT_BRAIN_MCP=0: the MCP listener never collides with another run (or a stack on 8104).
    env: { PATH: process.env.PATH ?? "", HOME: home, PORT_BRAIN_MCP: "0", ...env },
    stdout: "pipe",
    stderr: "pipe",
    timeout: timeoutMs,
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** Starts main.ts (or `entry`, e.g. scripts/start.ts) and resolves once every requested service has logged its address. */
export async function startMain(
  args: string[],
  env: Record<string, string>,
  opts: { expect?: Array<"router" | "orchestrator">; timeoutMs?: number; entry?: string } = {},
): Promise<MainProcess> {
  const home = env.HOME ?? tempDir("home");
  const expect = opts.expect ?? ["router", "orchestrator"];
  const proc = Bun.spawn(["bun", opts.entry ?? MAIN, ...args], {
    cwd: home,
    // SERVICE_ALLOW_LOCAL_REPOS=1: the suites' repositories are local bare repos (file://).
    env: { PATH: process.env.PATH ?? "", HOME: home, PORT_BRAIN_API: "0", PORT_BRAIN_MCP: "0", SERVICE_PORT: "0", SERVICE_ALLOW_LOCAL_REPOS: "1", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  const decoder = new TextDecoder();
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) out += decoder.decode(chunk, { stream: true });
  };
  const pumps = Promise.all([pump(proc.stdout), pump(proc.stderr)]);
  const main: MainProcess = {
    proc,
    home,
    output: () => out,
    async waitForOutput(pattern, timeoutMs = 5_000) {
      const matches = () => (typeof pattern === "string" ? out.includes(pattern) : pattern.test(out));
      await until(matches, { ms: timeoutMs, what: () => `output matching ${pattern}:\n${out}`, every: 10 });
    },
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null) proc.kill(signal);
      const code = await proc.exited;
      await pumps;
      return code;
    },
  };
  const started = () => {
    if (proc.exitCode !== null) throw new Error(`main.ts exited (${proc.exitCode}) before it started:\n${out}`);
    const router = /knowledge router on (http:\/\/\S+?:\d+)/.exec(out)?.[1];
    const orchestrator = /job orchestrator on (http:\/\/\S+?:\d+)/.exec(out)?.[1];
    const ready = expect.every((s) => (s === "router" ? router : orchestrator));
    const mcp = /router MCP on (http:\/\/\S+?:\d+)/.exec(out)?.[1];
    return ready && (!router || mcp) ? { router, orchestrator, mcp } : undefined;
  };
  try {
    const urls = await until(started, { ms: opts.timeoutMs ?? 15_000, what: () => `main.ts to start:\n${out}` });
    main.routerUrl = urls.router;
    main.mcpUrl = urls.mcp;
    main.orchestratorUrl = urls.orchestrator;
    return main;
  } catch (err) {
    await main.stop("SIGKILL");
    throw err;
  }
}

/** Reads a job's record (`read`) until it has ended (succeeded, failed or cancelled), and returns it; the stack's output explains a time-out. */
export async function untilJobEnds(main: MainProcess, read: () => Promise<Record<string, any>>, ms = 120_000): Promise<Record<string, any>> {
  let job: Record<string, any> = {};
  await until(
    async () => {
      job = await read();
      return ["succeeded", "failed", "cancelled"].includes(job.status);
    },
    { ms, every: 200, what: () => `the job to end: ${JSON.stringify(job)}\n${main.output()}` },
  );
  return job;
}
