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
import type { OrchestratorConfig } from "../config";

const logger = log("loop");

export type LoopConfig = Pick<OrchestratorConfig, "routerUrl" | "routerToken" | "routerCli" | "stateDir">;

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

/** The agent's settings: the three hooks, and the env they (and the profile's commands) read. */
export function loopSettings(c: LoopConfig & { routerUrl: string; routerToken: string }, run: LoopRun): Record<string, unknown> {
  const bin = quote(c.routerCli);
  const hook = (event: string) => [{ hooks: [{ type: "command", command: `${bin} hook ${event}`, timeout: 10 }] }];
  return {
    hooks: { SessionStart: hook("session-start"), UserPromptSubmit: hook("prompt"), Stop: hook("stop") },
    env: {
      BRAIN_URL: c.routerUrl,
      KB_ROUTER_TOKEN: mintScopedToken(c.routerToken, { sub: run.sub, ttlSeconds: run.timeoutSeconds + STOP_GRACE_SECONDS }),
      BRAIN_OUTBOX: serviceOutbox(c),
      BRAIN_HOOK_STATE_DIR: join(loopDir(c), "sessions"),
    },
  };
}

/** Writes the settings file for one agent run; returns its path and how to remove it. */
export async function writeLoopSettings(c: LoopConfig, runId: string, run: LoopRun): Promise<{ path: string; remove: () => Promise<void> } | undefined> {
  if (!loopEnabled(c)) return undefined;
  const dir = join(loopDir(c), "settings");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${runId.replace(/[^\w.-]/g, "_")}.json`);
  await writeFileAtomic(path, `${JSON.stringify(loopSettings(c, run), null, 2)}\n`);
  await chmod(path, 0o600);
  return { path, remove: () => rm(path, { force: true }) };
}

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
