// For the agent-mode suites: a hub made in the test as a local git repository (file:// URL), and
// the orchestrator app with the agent-mode routes registered, served on a loopback port, with
// test/fixtures/fake-claude as the agent CLI.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Server } from "bun";
import { createParser } from "eventsource-parser";
import { createFileStore } from "../../src/common/kv/file-store";
import { createRedisStore } from "../../src/common/kv/redis-store";
import type { KeyValueStore } from "../../src/common/kv/store";
import { type AgentModeDeps, createAgentModeDeps } from "../../src/orchestrator/agent-mode/deps";
import { createOrchestratorApp } from "../../src/orchestrator/app";
import { loadOrchestratorConfig, type OrchestratorConfig } from "../../src/orchestrator/config";
import { createCompanionSync } from "../../src/orchestrator/repos/companions";
import { FAKE_AGENT_ENV } from "./orchestrator-process";
import { TEST_REDIS_URL } from "./servers";

export const FAKE_CLAUDE = resolve(import.meta.dir, "../fixtures/fake-claude");
const SCENARIOS_DIR = resolve(import.meta.dir, "../fixtures/claude-stream-json");
export const KEY = "test-key";
export { FAKE_AGENT_ENV };
export const AGENT = "deploy-helper";

export const MANIFEST = `name: ${AGENT}
model: sonnet
max_turns: 12
permission_mode: bypassPermissions
mcp_categories: [knowledge, deploy]
description: answers questions about deployments
`;

/** The files of agents/<name>/ (relative paths → content); a null content leaves the file out. */
export function hubFiles(overrides: Record<string, string | null> = {}, name = AGENT): Record<string, string> {
  const base: Record<string, string | null> = {
    [`agents/${name}/agent.yml`]: MANIFEST,
    [`agents/${name}/package/CLAUDE.md`]: "# Deploy helper\nYou answer questions about deployments.\n",
    [`agents/${name}/package/system.md`]: "Be brief.\n",
    [`agents/${name}/package/.claude/settings.json`]: JSON.stringify({ permissions: { allow: ["Bash"] } }),
    [`agents/${name}/package/.mcp.json`]: JSON.stringify({ mcpServers: {} }),
    [`agents/${name}/package/prompts/triage.md`]: "Triage the failure.\n",
    [`agents/${name}/package/runners/01-first.sh`]: 'echo "first $HUB_AGENT" >> runner.log\n',
    [`agents/${name}/package/runners/02-second.sh`]: "echo second >> runner.log\n",
    [`agents/${name}/evaluation/cases.md`]: "- the build passes\n",
    ...overrides,
  };
  return Object.fromEntries(Object.entries(base).filter((e): e is [string, string] => e[1] !== null));
}

async function git(args: string[], cwd: string): Promise<void> {
  const proc = Bun.spawn(["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "init.defaultBranch=main", ...args], {
    cwd,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`git ${args.join(" ")} failed: ${err}`);
}

/** A git repository at `dir` holding `files`; its file:// URL. */
export async function makeHub(dir: string, files: Record<string, string> = hubFiles()): Promise<string> {
  await mkdir(dir, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    const p = join(dir, rel);
    await mkdir(dirname(p), { recursive: true });
    await writeFile(p, content);
  }
  await git(["init", "-q"], dir);
  await git(["add", "-A"], dir);
  await git(["commit", "-q", "-m", "hub"], dir);
  return `file://${dir}`;
}

export type KvKind = "file" | "redis";

export interface AgentModeServerOptions {
  /** The user's home: ~/.service, the agent's ~/.claude, clones and the package live under it. */
  home: string;
  hubUrl: string;
  kv: KvKind;
  /** Redis key prefix (kv "redis"); the same one after a restart finds the same state. */
  redisPrefix?: string;
  /** Extra config variables. */
  configEnv?: Record<string, string>;
  /** What the agent inherits; mutate it between requests to pick a scenario. Read at every spawn. */
  agentEnv: Record<string, string | undefined>;
  keepAliveMs?: number;
}

export interface AgentModeServer {
  url: string;
  config: OrchestratorConfig;
  deps: AgentModeDeps;
  kv: KeyValueStore;
  server: Server<undefined>;
  /** fetch relative to the server, with the key and a JSON body. */
  call(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  /** Stops the server and the turns; the kv store stays open when keepKv (a restart). */
  close(opts?: { keepKv?: boolean }): Promise<void>;
}

export async function startAgentModeServer(o: AgentModeServerOptions): Promise<AgentModeServer> {
  const config = loadOrchestratorConfig(
    {
      SERVICE_API_KEYS: KEY,
      SERVICE_HUB_URL: o.hubUrl,
      HUB_AGENT: AGENT,
      SERVICE_CLAUDE_BINARY: FAKE_CLAUDE,
      SERVICE_AGENT_ENV: FAKE_AGENT_ENV,
      SERVICE_CLONE_ROOT: join(o.home, "clones"),
      SERVICE_PACKAGE_DIR: join(o.home, "package"),
      SERVICE_OTEL_ENABLED: "false",
      ...(o.kv === "redis" ? { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: o.redisPrefix ?? `brain-stack-test:${crypto.randomUUID()}` } : {}),
      ...o.configEnv,
    },
    o.home,
  );
  const kv =
    o.kv === "redis"
      ? await createRedisStore({ url: config.redisUrl!, keyPrefix: config.redisKeyPrefix })
      : await createFileStore({ dir: join(config.stateDir, "kv") });
  const deps = await createAgentModeDeps(config, kv, { env: o.agentEnv, keepAliveMs: o.keepAliveMs, killGraceMs: 500 });
  if (!deps) throw new Error("agent mode did not start");
  const app = createOrchestratorApp({
    config,
    jobs: {} as never,
    profiles: { list: () => ({ profiles: [], errors: [] }) } as never,
    companions: createCompanionSync(config),
    agentMode: deps,
  });
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: app.fetch, idleTimeout: 255 });
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    config,
    deps,
    kv,
    server,
    call(path, init = {}) {
      const { json, headers, ...rest } = init;
      return fetch(`${url}${path}`, {
        method: json !== undefined ? "POST" : rest.method,
        ...rest,
        headers: {
          authorization: `Bearer ${KEY}`,
          ...(json !== undefined ? { "content-type": "application/json" } : {}),
          ...(headers as Record<string, string>),
        },
        body: json !== undefined ? JSON.stringify(json) : rest.body,
      });
    },
    async close(opts = {}) {
      await server.stop(true);
      await deps.close();
      if (!opts.keepKv) await kv.close();
    },
  };
}

export async function tempHome(prefix = "agent-mode-"): Promise<{ home: string; cleanup(): Promise<void> }> {
  const home = await mkdtemp(join(tmpdir(), prefix));
  return { home, cleanup: () => rm(home, { recursive: true, force: true }) };
}

export interface SseResult {
  status: number;
  headers: Headers;
  /** Parsed `data:` payloads, [DONE] excluded. */
  chunks: Array<Record<string, any>>;
  done: boolean;
  /** Comment lines (keep-alives). */
  comments: string[];
  /** Anything after [DONE]. */
  afterDone: number;
}

/** Reads an SSE response to its end with eventsource-parser. */
export async function readSse(res: Response): Promise<SseResult> {
  const out: SseResult = { status: res.status, headers: res.headers, chunks: [], done: false, comments: [], afterDone: 0 };
  const parser = createParser({
    onEvent(ev) {
      if (out.done) out.afterDone++;
      else if (ev.data === "[DONE]") out.done = true;
      else out.chunks.push(JSON.parse(ev.data));
    },
    onComment(c) {
      out.comments.push(c);
    },
  });
  const decoder = new TextDecoder();
  for await (const part of res.body!) parser.feed(decoder.decode(part, { stream: true }));
  return out;
}

/** A compact view of a chunk for sequence assertions. */
export function kindOf(chunk: Record<string, any>): string {
  const choice = chunk.choices?.[0] ?? {};
  if (choice.x_service_event_type) return choice.x_service_event_type;
  if (choice.finish_reason === "stop") return "stop";
  if (choice.delta?.role === "assistant") return "role";
  return "text";
}

export interface RecordedStart {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** The --settings file's text as the agent found it. */
  settings?: string;
}

/** The fake agent's start records (FAKE_CLAUDE_RECORD). */
export async function recordedStarts(file: string): Promise<RecordedStart[]> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l))
    .filter((e) => e.event === "start");
}

export const flagOf = (argv: string[], flag: string): string | undefined => {
  const i = argv.indexOf(flag);
  return i >= 0 ? argv[i + 1] : undefined;
};

/** A scenario file made in the test (e.g. a stream cut short by garbage). */
export async function writeScenario(dir: string, name: string, lines: string[]): Promise<string> {
  const p = join(dir, `${name}.jsonl`);
  await writeFile(p, `${lines.join("\n")}\n`);
  return p;
}

export async function scenarioLines(name: string): Promise<string[]> {
  return (await readFile(join(SCENARIOS_DIR, `${name}.jsonl`), "utf8")).split("\n").filter((l) => l.trim() !== "");
}
