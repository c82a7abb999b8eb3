// Jobs join the loop (issue 16 part 3) when the orchestrator knows a router (ROUTER_URL +
// KB_ROUTER_TOKEN; the one-process stack's own router by default): the agent runs with
// brain-stack's hooks from a settings file of its own (`--settings <file>`, so it works
// whichever HOME the agent gets) — the feed at session start, signals on each prompt, its
// markers at stop — and when the job ends its milestone (the job, the PR URL, the outcome,
// the cost) is posted once, or buffered in the service's outbox and retried after later jobs.
// The agent never holds the router's token: its settings carry a token minted for the run
// (common/scoped-token.ts), good for the hooks' routes only and only until the run's timeout.
import { chmod, mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { log } from "../../common/logger";
import { mintScopedToken } from "../../common/scoped-token";
import { RouterClient } from "../../router/client";
import { bufferMarker, ReplayInterrupted, replayOutbox } from "../../router/outbox/outbox";
import { RECALL_DEFAULTS, type RecalledNote, recall } from "../../router/recall/recall";
import type { AgentEvent } from "../agent/stream-json";
import type { OrchestratorConfig } from "../config";
import { routerCliCommand } from "./router-cli";

const logger = log("loop");

export type LoopConfig = Pick<OrchestratorConfig, "routerUrl" | "routerToken" | "routerCli" | "stateDir"> & Partial<Pick<OrchestratorConfig, "recallMaxChars">>;

const loopEnabled = (c: LoopConfig): c is LoopConfig & { routerUrl: string; routerToken: string } => Boolean(c.routerUrl && c.routerToken);

const loopDir = (c: LoopConfig) => join(c.stateDir, "loop");
const serviceOutbox = (c: LoopConfig) => join(loopDir(c), "outbox");

const quote = (s: string) => (/^[\w./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** Whom a run's token is for, and how long it lasts (the run's timeout, plus a minute for its last Stop hook). */
export interface LoopRun {
  /** `job:<id>`, `turn:<agent>:<uuid>`. */
  sub: string;
  timeoutSeconds: number;
}

const STOP_GRACE_SECONDS = 60;

/** What a run's first prompt carries besides what its prompt hook finds (recallForTask). */
export interface RunRecall {
  /** The repository's name: the hooks' search hint for every prompt of the run. */
  repo?: string;
  /** The notes chosen for the task, and their block. */
  chosen?: { text: string; notes: RecalledNote[] };
}

const recallMaxChars = (c: LoopConfig) => c.recallMaxChars ?? RECALL_DEFAULTS.maxChars;

/** The agent's settings: the three hooks, and the env they (and the profile's commands) read. */
export function loopSettings(
  c: LoopConfig & { routerUrl: string; routerToken: string },
  run: LoopRun,
  extra: { recallFile?: string; repo?: string } = {},
): Record<string, unknown> {
  const bin = c.routerCli ? quote(c.routerCli) : routerCliCommand();
  const hook = (event: string) => [{ hooks: [{ type: "command", command: `${bin} hook ${event}`, timeout: 10 }] }];
  return {
    hooks: { SessionStart: hook("session-start"), UserPromptSubmit: hook("prompt"), Stop: hook("stop") },
    env: {
      BRAIN_URL: c.routerUrl,
      KB_ROUTER_TOKEN: mintScopedToken(c.routerToken, { sub: run.sub, ttlSeconds: run.timeoutSeconds + STOP_GRACE_SECONDS }),
      BRAIN_OUTBOX: serviceOutbox(c),
      BRAIN_HOOK_STATE_DIR: join(loopDir(c), "sessions"),
      // The prompt hook's recall follows the service's budget (ROUTER_RECALL_MAX_CHARS; 0 turns it off).
      ...(recallMaxChars(c) > 0 ? { BRAIN_RECALL_MAX_CHARS: String(recallMaxChars(c)) } : { BRAIN_RECALL_ENABLED: "0" }),
      ...(extra.repo ? { BRAIN_RECALL_REPO: extra.repo } : {}),
      ...(extra.recallFile ? { BRAIN_RECALL_FILE: extra.recallFile } : {}),
    },
  };
}

/** Writes the settings file for one agent run (and the notes its first prompt carries); returns its path and how to remove them. */
export async function writeLoopSettings(
  c: LoopConfig,
  runId: string,
  run: LoopRun,
  recalled: RunRecall = {},
): Promise<{ path: string; remove: () => Promise<void> } | undefined> {
  if (!loopEnabled(c)) return undefined;
  const dir = join(loopDir(c), "settings");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const base = join(dir, runId.replace(/[^\w.-]/g, "_"));
  const path = `${base}.json`;
  let recallFile: string | undefined;
  if (recalled.chosen?.notes.length) {
    recallFile = `${base}.recall.json`;
    await writeFileAtomic(recallFile, JSON.stringify({ text: recalled.chosen.text, keys: recalled.chosen.notes.map((n) => n.key) }));
    await chmod(recallFile, 0o600);
  }
  await writeFileAtomic(path, `${JSON.stringify(loopSettings(c, run, { recallFile, repo: recalled.repo }), null, 2)}\n`);
  await chmod(path, 0o600);
  return {
    path,
    remove: async () => {
      await rm(path, { force: true });
      if (recallFile) await rm(recallFile, { force: true });
    },
  };
}

/** The repository's name in its URL (`https://host/acme/widgets.git` → widgets). */
export function repoName(url: string | undefined): string | undefined {
  if (!url) return undefined;
  const name = url
    .replace(/[?#].*$/, "")
    .replace(/\/+$/, "")
    .replace(/\.git$/, "")
    .split(/[/:]/)
    .pop();
  return name || undefined;
}

/** The vault's notes that bear on a job's task or a conversation's opening message (issue 35 part 4). Never throws: the router down or slow costs the run its notes, not its start. */
export async function recallForTask(c: LoopConfig, input: { task: string; repo?: string; what: string }): Promise<RunRecall> {
  const repo = input.repo;
  if (!loopEnabled(c) || recallMaxChars(c) <= 0) return { repo };
  const client = new RouterClient({ baseUrl: c.routerUrl, token: c.routerToken, timeoutMs: RECALL_TIMEOUT_MS });
  try {
    const found = await recall(
      client,
      { prompt: input.task, hint: repo, heading: "Team brain: notes that may bear on this task" },
      { ...RECALL_DEFAULTS, maxChars: recallMaxChars(c) },
    );
    if (found.notes.length) logger.info(`${input.what}: recalled ${found.notes.map((n) => n.path).join(", ")}`);
    return { repo, chosen: found };
  } catch (err) {
    logger.warn(`${input.what}: no notes recalled (the router did not answer: ${(err as Error).message})`);
    return { repo };
  }
}

/** How long a run's start waits for the router's notes. */
const RECALL_TIMEOUT_MS = 3_000;

export interface JobEnd {
  id: string;
  task: string;
  profile: string;
  status: string;
  pr_url?: string;
  cost_usd?: number;
  repo_url?: string;
  error?: string;
}

/** The milestone a finished job leaves in the vault. */
function jobMilestone(job: JobEnd, at: Date) {
  const first = job.task.trim().split("\n")[0]?.trim().slice(0, 120) || "job";
  const lines = [
    `Job ${job.id} (${job.profile}) ${job.status}: ${first}`,
    ...(job.repo_url ? [`Repository: ${job.repo_url}`] : []),
    ...(job.pr_url ? [`Pull request: ${job.pr_url}`] : []),
    ...(job.cost_usd !== undefined ? [`Cost: $${job.cost_usd.toFixed(4)}`] : []),
    ...(job.error ? [`Error: ${job.error.slice(0, 500)}`] : []),
  ];
  return {
    type: "milestone" as const,
    content: lines.join("\n"),
    attrs: {
      source: job.id,
      title: `job ${job.profile} ${job.status}: ${first.slice(0, 60)}`,
      outcome: job.status,
      profile: job.profile,
      ts: at.toISOString(),
      ...(job.pr_url ? { pr_url: job.pr_url } : {}),
      ...(job.cost_usd !== undefined ? { cost_usd: job.cost_usd } : {}),
    },
  };
}

/** Posts the job's milestone once (keyed by the job id); buffered in the outbox when the router does not take it. Never throws. */
async function postJobMilestone(c: LoopConfig, job: JobEnd, at = new Date()): Promise<"posted" | "buffered" | "off"> {
  if (!loopEnabled(c)) return "off";
  const marker = jobMilestone(job, at);
  const key = `job:${job.id}:milestone`;
  const client = new RouterClient({ baseUrl: c.routerUrl, token: c.routerToken, timeoutMs: 5_000 });
  try {
    await client.marker(marker, { idempotencyKey: key });
  } catch (err) {
    logger.warn(`job ${job.id}: milestone not recorded now (${(err as Error).message}); it waits in ${serviceOutbox(c)}`);
    await bufferMarker(serviceOutbox(c), { ...marker, idempotency_key: key }).catch((e) =>
      logger.error(`job ${job.id}: milestone not buffered: ${(e as Error).message}`),
    );
    return "buffered";
  }
  // The router answers: what earlier jobs (and agents' hooks) left in the outbox goes now.
  await replayOutbox(client, { dirs: [serviceOutbox(c)], sent: join(loopDir(c), "sent"), rejected: join(loopDir(c), "rejected") }).catch((err) => {
    if (!(err instanceof ReplayInterrupted)) logger.warn(`outbox replay: ${(err as Error).message}`);
  });
  return "posted";
}

/** After a job: its milestone in the vault (when the loop is on), then the result as it was. */
export async function recordJobEnd<R extends { status: string; pr_url?: string; cost_usd?: number; error?: string }>(
  c: LoopConfig,
  req: { job: { id: string; task: string; repo_url?: string }; profile: { name: string } },
  result: R,
): Promise<R> {
  await postJobMilestone(c, {
    id: req.job.id,
    task: req.job.task,
    repo_url: req.job.repo_url,
    profile: req.profile.name,
    status: result.status,
    pr_url: result.pr_url,
    cost_usd: result.cost_usd,
    error: result.error,
  });
  return result;
}

/**
 * A hook that failed in the agent's run, as Claude Code reports it in its stream (a `system`
 * `hook_response` with outcome `error` or a non-zero exit): `SessionStart failed (exit 127):
 * /bin/sh: 1: router-cli: not found`. Undefined for anything else.
 */
export function hookFailure(ev: AgentEvent): string | undefined {
  if (ev.type !== "system" || ev.subtype !== "hook_response") return undefined;
  const exit = typeof ev.exit_code === "number" ? ev.exit_code : undefined;
  if (ev.outcome !== "error" && (exit === undefined || exit === 0)) return undefined;
  const name = typeof ev.hook_event === "string" ? ev.hook_event : typeof ev.hook_name === "string" ? ev.hook_name : "a hook";
  const said = (typeof ev.stderr === "string" && ev.stderr.trim()) || (typeof ev.output === "string" && ev.output.trim()) || "";
  return `${name} hook failed${exit !== undefined ? ` (exit ${exit})` : ""}${said ? `: ${said.split("\n")[0]!.slice(0, 300)}` : ""}`;
}
