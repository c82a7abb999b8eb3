// Runs one job end to end (spec: Standard mode): check out the repository (clone cache +
// worktree) or make a scratch directory, spawn the agent with the profile's flags and the job's
// environment, read its stream as it comes, open the pull request when the profile says so,
// clean up, and ship the transcript in the background. runtime.ts hands it to the job service
// as its Executor (the contract in executor.ts); it never throws for anything a job can run
// into, it reports it in the result.
import { existsSync } from "node:fs";
import { mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { DomainError } from "../../common/domain-error";
import { log } from "../../common/logger";
import { type ApiRetry, apiRetryOf, isUnrecoverable, retryText } from "../agent/api-retry";
import { buildAgentEnv } from "../agent/env";
import { type AgentRun, startAgent } from "../agent/process";
import { chooseSession } from "../agent/session";
import type { AgentEvent } from "../agent/stream-json";
import type { OrchestratorConfig } from "../config";
import { hookFailure, recallForTask, repoName, writeLoopSettings } from "../loop/job-loop";
import type { Profile } from "../profiles/profile";
import { type CachedRepo, ensureClone } from "../repos/clone-cache";
import { gitAuthFor, resolveGitCredentials } from "../repos/credentials";
import type { GitAuth } from "../repos/git";
import { openPullRequest } from "../repos/pr";
import { configSecrets, redact } from "../repos/redact";
import { parseRepoUrl } from "../repos/url";
import { addWorktree, assertJobId, removeWorktree, type Worktree } from "../repos/worktree";
import { telemetryEnv } from "../telemetry/otel-env";
import { shipTranscript, tracingEnabled } from "../telemetry/transcript";
import type { ExecutionJob, ExecutionResult } from "./executor";

const logger = log("execute");

export interface ExecuteJobInput {
  job: ExecutionJob;
  profile: Profile;
  config: OrchestratorConfig;
  /** Aborting cancels the job: SIGTERM to the agent, SIGKILL after killGraceMs. */
  signal: AbortSignal;
  /** Once the agent process runs; `recall`: the vault's notes its first turn carries. */
  onStarted?: (info: {
    pid: number;
    session_id: string;
    worktree?: string;
    branch?: string;
    recall: Array<{ path: string; title: string; kind: string }>;
  }) => void;
  /** Every agent event, as it arrives. */
  onEvent?: (event: AgentEvent) => void;
  /** The agent retries the model API (an api_retry line); null once the API answered again. */
  onRetry?: (retry: ApiRetry | null) => void;
  /** What child processes inherit (default process.env); the service's secrets are removed for the agent. */
  env?: Record<string, string | undefined>;
  /** Between SIGTERM and SIGKILL; default 5000. */
  killGraceMs?: number;
  /** Bound on shipping the transcript (in the background); default 10000. */
  shipTimeoutMs?: number;
}

export async function executeJob(input: ExecuteJobInput): Promise<ExecutionResult> {
  const { job, profile, config, signal } = input;
  const env = input.env ?? process.env;
  const secrets = configSecrets(config);
  const t0 = Date.now();
  let cached: CachedRepo | undefined;
  let worktree: Worktree | undefined;
  let scratch: string | undefined;
  let branch: string | undefined;
  let run: AgentRun | undefined;
  let loopSettings: Awaited<ReturnType<typeof writeLoopSettings>>;
  const cancelled = (): ExecutionResult => ({ status: "cancelled", exit_code: null, output: "", error: "cancelled", ...(branch && { branch }) });

  try {
    assertJobId(job.id);
    let auth: GitAuth | undefined;
    let token: string | undefined;
    let cwd: string;
    if (job.repo_url) {
      const repo = parseRepoUrl(job.repo_url);
      const creds = await resolveGitCredentials(config);
      token = creds?.token;
      if (token) secrets.push(token);
      auth = gitAuthFor(repo, creds);
      const root = config.sharedFsRoot ? join(config.sharedFsRoot, "repos") : config.reposRoot;
      const submitted = job.created_at ? Date.parse(job.created_at) : Number.NaN;
      cached = await ensureClone(repo, { root, env, auth, secrets, signal, ...(Number.isFinite(submitted) && { freshAfter: submitted }) });
      if (signal.aborted) return cancelled();
      worktree = await addWorktree(cached, { jobId: job.id, baseRef: job.base_ref, root: config.worktreeRoot, env, secrets });
      branch = worktree.branch;
      cwd = worktree.path;
    } else {
      scratch = join(config.worktreeRoot, job.id);
      await rm(scratch, { recursive: true, force: true });
      await mkdir(scratch, { recursive: true });
      cwd = scratch;
    }
    if (config.sharedFsRoot) await materialiseProfile(profile, join(config.sharedFsRoot, "jobs", job.id));
    const session = await chooseSession(config, cwd, job.session_id);
    if (signal.aborted) return cancelled();

    const identity = gitIdentityEnv(config.gitAuthor);
    const agentEnv = buildAgentEnv({
      base: env,
      config,
      extra: { ...telemetryEnv(config, { jobId: job.id, profile: profile.name, podName: config.podName }, env.OTEL_RESOURCE_ATTRIBUTES), ...identity },
    });
    const timeoutMs = (profile.timeout_seconds ?? config.claudeTimeout) * 1000;
    // The loop (issue 16): brain-stack's hooks in a settings file of the job's own.
    // Its first turn carries the vault's notes that bear on the task and the repository (issue 35).
    const recalled = await recallForTask(config, { task: job.task, repo: repoName(job.repo_url), what: `job ${job.id}` });
    if (signal.aborted) return cancelled();
    loopSettings = await writeLoopSettings(config, `job-${job.id}`, { sub: `job:${job.id}`, timeoutSeconds: timeoutMs / 1000 }, recalled);
    run = startAgent({
      binary: config.claudeBinary,
      args: {
        prompt: job.task,
        model: profile.model,
        maxTurns: profile.max_turns,
        maxBudgetUsd: job.max_budget_usd ?? profile.max_budget_usd,
        permissionMode: profile.permission_mode,
        ...(session.resume ? { resume: session.sessionId } : { sessionId: session.sessionId }),
        appendSystemPrompt: await systemPromptOf(profile),
        allowedTools: profile.allowed_tools,
        ...(loopSettings && { extraArgs: ["--settings", loopSettings.path] }),
      },
      cwd,
      env: agentEnv,
      timeoutMs,
      killGraceMs: input.killGraceMs,
      signal,
      readGatherMs: JOB_READ_GATHER_MS,
    });
    logger.info(`job ${job.id}: agent pid ${run.pid} started in ${cwd} (profile ${profile.name}, model ${profile.model})`);
    try {
      input.onStarted?.({
        pid: run.pid,
        session_id: session.sessionId,
        worktree: worktree?.path,
        branch,
        recall: loopSettings ? (recalled.chosen?.notes ?? []).map((n) => ({ path: n.path, title: n.title, kind: n.kind })) : [],
      });
    } catch (err) {
      logger.error(`job ${job.id}: onStarted threw:`, err);
    }
    let retrying = false;
    // A read of stdout at a time: a burst of lines is handled without an async hop per line.
    for await (const batch of run.batches()) {
      for (const ev of batch) {
        try {
          const failed = hookFailure(ev);
          if (failed) logger.warn(`job ${job.id}: ${failed}`);
          const retry = apiRetryOf(ev);
          if (retry && !isUnrecoverable(retry)) {
            retrying = true;
            logger.warn(`job ${job.id}: ${retryText(retry)}`);
            input.onRetry?.(retry);
          } else if (retrying && (ev.type === "assistant" || ev.type === "stream_event")) {
            retrying = false;
            input.onRetry?.(null);
          }
          input.onEvent?.(ev);
        } catch (err) {
          logger.error(`job ${job.id}: an event handler threw:`, err);
        }
      }
    }
    const outcome = await run.wait();

    const result: ExecutionResult = {
      status: outcome.cancelled || signal.aborted ? "cancelled" : outcome.failed ? "failed" : "succeeded",
      exit_code: outcome.exitCode,
      output: redact(outcome.resultText ?? outcome.lastAssistantText ?? "", secrets),
      ...(outcome.error && { error: redact(outcome.error, secrets) }),
      ...(outcome.errorCode && { error_code: outcome.errorCode }),
      ...(branch && { branch }),
      ...(outcome.sessionId && { session_id: outcome.sessionId }),
      ...(outcome.usage && { usage: outcome.usage }),
      ...(outcome.costUsd !== undefined && { cost_usd: outcome.costUsd }),
      ...(outcome.numTurns !== undefined && { num_turns: outcome.numTurns }),
      ...(outcome.timedOut && { timed_out: true }),
    };

    if (result.status === "succeeded" && profile.auto_pr && worktree) {
      const pr = await openPullRequest({
        worktree,
        title: prTitle(job.task),
        body: prBody(job, profile, result.output),
        author: config.gitAuthor,
        env: { ...env, ...identity },
        auth,
        ghToken: token,
        secrets,
        signal,
      });
      if (pr.pr_url) result.pr_url = pr.pr_url;
      if (pr.error) {
        // The agent's work is on the branch, kept in the clone cache; the job did not deliver its PR.
        result.status = signal.aborted ? "cancelled" : "failed";
        result.error = signal.aborted ? "cancelled" : pr.error;
      }
    }

    if (tracingEnabled(config)) {
      void shipTranscript({
        config,
        cwd,
        sessionId: outcome.sessionId ?? session.sessionId,
        fromOffset: session.transcriptOffset,
        timeoutMs: input.shipTimeoutMs,
        trace: {
          id: job.id,
          name: `job ${profile.name}`,
          input: job.task,
          output: result.output,
          metadata: {
            profile: profile.name,
            model: profile.model,
            status: result.status,
            exit_code: result.exit_code,
            repo_url: job.repo_url,
            pod: config.podName,
            pr_url: result.pr_url,
          },
          tags: ["brain-stack", `profile:${profile.name}`],
        },
      });
    }
    logger.info(`job ${job.id}: ${result.status} in ${Date.now() - t0} ms${result.error ? `: ${result.error}` : ""}`);
    return result;
  } catch (err) {
    run?.cancel();
    if (signal.aborted) return cancelled();
    const message = redact(err instanceof Error ? err.message : String(err), secrets);
    logger.warn(`job ${job.id}: failed: ${message}`);
    const code = err instanceof DomainError ? err.code : typeof (err as { code?: unknown }).code === "string" ? (err as { code: string }).code : undefined;
    return { status: "failed", exit_code: null, output: "", error: message, ...(code && { error_code: code }), ...(branch && { branch }) };
  } finally {
    if (cached && worktree)
      await removeWorktree(cached, worktree.path, env).catch((err) => logger.warn(`job ${job.id}: worktree not removed: ${(err as Error).message}`));
    if (scratch) await rm(scratch, { recursive: true, force: true }).catch(() => {});
    await loopSettings?.remove().catch(() => {});
  }
}

/**
 * A background job's agent output gathers 2 ms per read, not the chat stream's 1: half the
 * wake-ups in a burst, so less service CPU an event, for at most 1 ms more before a watcher sees a
 * line. The chat stream keeps 1 ms: its deltas come fast enough that 2 ms of them near-fill the
 * 64 KiB pipe, where the agent would wait on the reader.
 */
const JOB_READ_GATHER_MS = 2;

const gitIdentityEnv = (a: { name: string; email: string }) => ({
  GIT_AUTHOR_NAME: a.name,
  GIT_AUTHOR_EMAIL: a.email,
  GIT_COMMITTER_NAME: a.name,
  GIT_COMMITTER_EMAIL: a.email,
});

/** The profile's append_system_prompt, then its directory's CLAUDE.md. */
async function systemPromptOf(profile: Profile): Promise<string | undefined> {
  const parts = [profile.append_system_prompt];
  if (profile.dir) parts.push(await readFile(join(profile.dir, "CLAUDE.md"), "utf8").catch(() => undefined));
  const text = parts.filter((p): p is string => typeof p === "string" && p.trim() !== "").join("\n\n");
  return text === "" ? undefined : text;
}

/** Shared-filesystem mode: the profile a job ran with, at {root}/jobs/{job-id}/. */
async function materialiseProfile(profile: Profile, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const { dir: source, ...data } = profile;
  await writeFileAtomic(join(dir, "profile.json"), `${JSON.stringify(data, null, 2)}\n`);
  if (source && existsSync(join(source, "CLAUDE.md"))) {
    await writeFileAtomic(join(dir, "CLAUDE.md"), await readFile(join(source, "CLAUDE.md")));
  }
}

const prTitle = (task: string) => {
  const first = task.trim().split("\n")[0]?.trim() || "Agent changes";
  return first.length > 72 ? `${first.slice(0, 71)}…` : first;
};

const prBody = (job: ExecutionJob, profile: Profile, output: string) => {
  const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);
  return [
    clip(job.task.trim(), 8000),
    ...(output.trim() ? ["", "## Agent summary", "", clip(output.trim(), 40_000)] : []),
    "",
    "---",
    `Opened by brain-stack job \`${job.id}\` (profile \`${profile.name}\`, model \`${profile.model}\`).`,
  ].join("\n");
};
