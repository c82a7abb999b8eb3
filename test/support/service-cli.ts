// For the service-cli suites: the compiled binary run against a live orchestrator (or none),
// with a temp HOME of its own, and job records written straight into a file store.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Job } from "../../src/orchestrator/jobs/schema";
import { type CliResult, runCompiled } from "./cli";
import { tempDir } from "./main-process";
import { KEY, type Orchestrator } from "./orchestrator-process";
import { until } from "./until";

export { KEY };

/** The environment that points the CLI at `o` with its key; a fresh HOME unless given. */
export function envFor(o: Pick<Orchestrator, "url">, extra: Record<string, string> = {}): Record<string, string> {
  const { hostname, port } = new URL(o.url);
  return { HOME: tempDir("cli-home"), SERVICE_HOST: hostname, SERVICE_PORT: port, SERVICE_API_KEY: KEY, ...extra };
}

export const svc = (args: string[], env: Record<string, string>, opts: { cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> =>
  runCompiled("service-cli", args, { env, ...opts });

/** A port nothing listens on. */
export function deadPort(): string {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = String(server.port);
  server.stop(true);
  return port;
}

/** The non-empty lines of a stream (consola frames an error with blank lines on some terminals). */
export const lines = (text: string): string[] =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);

/** A job record, as the service stores it. */
export function jobRecord(overrides: Partial<Job> = {}): Job {
  const now = new Date().toISOString();
  return {
    id: Bun.randomUUIDv7(),
    status: "succeeded",
    profile: "review",
    task: "Explain the parser",
    repo_url: null,
    base_ref: null,
    session_id: null,
    exit_code: 0,
    pr_url: null,
    branch: null,
    error: null,
    output: "done",
    pod_name: "pod-test",
    created_at: now,
    started_at: now,
    finished_at: now,
    updated_at: now,
    usage: null,
    cost_usd: null,
    total_cost_usd: null,
    num_turns: null,
    duration_ms: null,
    max_budget_usd: null,
    recall: [],
    api_retry: null,
    ...overrides,
  };
}

export function writeJob(dir: string, job: Job): Job {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${job.id}.json`), JSON.stringify(job));
  return job;
}

/** tmux, installed when missing; undefined (the test then skips, loudly) only outside CI when it cannot be. */
export function tmuxBinary(): string | undefined {
  const found = Bun.which("tmux");
  if (found) return found;
  const install = Bun.spawnSync(["sh", "-c", "(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux) >/dev/null 2>&1"]);
  const after = Bun.which("tmux");
  if (after) return after;
  if (process.env.CI === "true") throw new Error(`tmux is not installed and could not be (exit ${install.exitCode}): the TUI test needs it in CI`);
  console.warn("WARNING: tmux is not installed and could not be installed: this terminal test is SKIPPED");
  return undefined;
}

export interface TmuxSession {
  screen(): string;
  type(...keys: string[]): void;
  waitFor(text: string | RegExp, ms?: number): Promise<void>;
  kill(): void;
}

/** `argv` in a detached tmux session of its own (own server socket), with exactly `env`; echoes EXITED:<code> when it ends. */
export function tmuxSession(tmux: string, env: Record<string, string>, argv: string[], size = { x: 180, y: 50 }): TmuxSession {
  const socket = `svc-cli-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const t = (...args: string[]) => {
    const r = Bun.spawnSync([tmux, "-L", socket, ...args], { stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`tmux ${args.join(" ")}: ${r.stderr.toString()}`);
    return r.stdout.toString();
  };
  const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  const command = `env -i ${Object.entries(env)
    .map(([k, v]) => quote(`${k}=${v}`))
    .join(" ")} ${argv.map(quote).join(" ")}; echo "EXITED:$?"; sleep 60`;
  t("new-session", "-d", "-s", "main", "-x", String(size.x), "-y", String(size.y), command);
  const screen = () => t("capture-pane", "-p", "-t", "main");
  return {
    screen,
    type: (...keys) => void t("send-keys", "-t", "main", ...keys),
    async waitFor(text, ms = 15_000) {
      const seen = () => (typeof text === "string" ? screen().includes(text) : text.test(screen()));
      await until(seen, { ms, what: () => `the terminal to show ${String(text)}; screen:\n${screen()}`, every: 50 });
    },
    kill: () => void Bun.spawnSync([tmux, "-L", socket, "kill-server"]),
  };
}
