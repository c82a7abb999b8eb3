// The job service: submission, the gate (at most SERVICE_MAX_PARALLEL_JOBS running, the rest
// FIFO), cancel, wait, restart recovery, drain and shutdown. Records live in the JobStore; the
// queue and the running set live in this process, and every state change is written through.
import { HttpError } from "../../common/errors";
import type { KeyValueStore } from "../../common/kv/store";
import { log } from "../../common/logger";
import { DRAIN_RETRY_AFTER_SECONDS, drainPod, isDraining, type DrainResult } from "./drain";
import type { ExecutionResult, Executor, ProfileCatalog, ProfileLike, StartedInfo } from "./executor";
import { isFinished, isJobId, type Job, type JobSubmission } from "./schema";
import { listJobs, scanJobs, type JobQuery, type JobStore } from "./store";
import { Waiters } from "./waiters";
import {
  CANCELLED_BY_REQUEST,
  INTERRUPTED_BY_RESTART,
  INTERRUPTED_BY_STOP,
  finished,
  laterThan,
  newJob,
  withResult,
  type AbortReason,
  type FinalStatus,
} from "./transitions";

const logger = log("jobs");

export interface JobServiceOptions<P extends ProfileLike> {
  store: JobStore;
  /** Holds the draining flag (Redis or the file key-value store). */
  kv: KeyValueStore;
  execute: Executor<P>;
  profiles: ProfileCatalog<P>;
  podName: string;
  maxParallel: number;
  /** Job timeout when the profile sets none (SERVICE_CLAUDE_TIMEOUT): bounds wait=true. */
  defaultTimeoutSeconds: number;
  /**
   * Agent mode (HUB_AGENT): the agent package is the service's identity and no task repository
   * is cloned, so a job naming one is refused; a job without one still runs.
   */
  agentName?: string;
  /** How often running jobs are checked for a cancel made by another process, and the drain flag re-read. */
  watchMs?: number;
  /** How often expired job files are swept (default: 10 minutes). */
  sweepMs?: number;
  /** How long close() waits for cancelled agents to exit (default 15 s). */
  closeGraceMs?: number;
  now?: () => number;
}

interface Running {
  controller: AbortController;
  /** Why it was aborted: set before the abort so the finish knows what to record. */
  abortedFor?: AbortReason;
  done: Promise<void>;
}

export interface JobService {
  submit(input: JobSubmission): Promise<Job>;
  get(id: string): Promise<Job>;
  list(query: JobQuery): Promise<Job[]>;
  cancel(id: string): Promise<Job>;
  /** The job once finished, or as it is when the bound (the job timeout plus a minute) or `signal` ends the wait. */
  wait(id: string, opts?: { signal?: AbortSignal; timeoutMs?: number }): Promise<Job>;
  /** Start-up: this pod's running jobs become failed, its queued jobs are queued again. */
  recover(): Promise<{ failed: number; requeued: number }>;
  drain(timeoutSeconds: number): Promise<DrainResult>;
  isDraining(): Promise<boolean>;
  stats(): { running: number; queued: number; maxParallel: number };
  /** Stops starting jobs; running ones are stopped and recorded failed; queued ones stay queued. */
  close(): Promise<void>;
}

export function createJobService<P extends ProfileLike>(opts: JobServiceOptions<P>): JobService {
  const { store, kv, podName: pod } = opts;
  const now = opts.now ?? Date.now;
  const iso = () => new Date(now()).toISOString();
  const queue: string[] = [];
  const running = new Map<string, Running>();
  const waiters = new Waiters((id) => !running.has(id));
  const slotFreed = new Set<() => void>();
  let drainingHere = false; // a drain in this process
  let drainingFlag = false; // the flag in the store (set by service-cli drain), re-read every watchMs
  let closed = false;

  // --- writes, serialized per job so a cancel and a finish never lose each other's fields
  const chains = new Map<string, Promise<unknown>>();
  function mutate(id: string, change: (job: Job) => Job | null): Promise<Job | null> {
    const prev = chains.get(id) ?? Promise.resolve();
    const next = prev.then(async () => {
      const current = await store.get(id);
      if (current === null) return null;
      const changed = change(current);
      if (changed === null || changed === current) return current;
      const written = { ...changed, updated_at: laterThan(current.updated_at, iso()) };
      await store.put(written);
      return written;
    });
    const tail = next.catch(() => {});
    chains.set(id, tail);
    void tail.then(() => {
      if (chains.get(id) === tail) chains.delete(id);
    });
    return next;
  }

  // --- the gate
  function pump(): void {
    if (closed || drainingHere || drainingFlag) return;
    while (running.size < opts.maxParallel && queue.length > 0) {
      const id = queue.shift()!;
      const entry: Running = { controller: new AbortController(), done: Promise.resolve() };
      running.set(id, entry);
      entry.done = run(id, entry)
        .catch((err) => {
          logger.error(`job ${id}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
          return null;
        })
        .then((final) => {
          running.delete(id);
          if (final) waiters.notify(final);
          for (const wake of [...slotFreed]) wake();
          pump();
        });
    }
  }

  /** Runs one job; resolves to its final record, or null when it did not run here. */
  async function run(id: string, entry: Running): Promise<Job | null> {
    const queued = await store.get(id);
    if (queued === null || queued.status !== "queued") return null; // cancelled or expired while queued
    const profile = opts.profiles.select(queued.task, queued.profile);
    if (profile === undefined) {
      return mutate(id, (j) => finish(j, "failed", { error: `profile ${queued.profile} no longer exists (GET /profiles lists them)` }));
    }
    const started = await mutate(id, (j) => (j.status === "queued" ? { ...j, status: "running", started_at: iso(), pod_name: pod } : null));
    if (started === null || started.status !== "running") return null;

    // Stopped (close, cancel) before the agent was spawned: nothing to run.
    const result: ExecutionResult = entry.controller.signal.aborted
      ? { status: "cancelled", exit_code: null, output: "" }
      : await runAgent(started, profile, entry.controller.signal);
    return mutate(id, (j) => withResult(j, result, entry.abortedFor, iso()));
  }

  async function runAgent(job: Job, profile: P, signal: AbortSignal): Promise<ExecutionResult> {
    const id = job.id;
    try {
      return await opts.execute({
        job: {
          id,
          task: job.task,
          repo_url: job.repo_url ?? undefined,
          base_ref: job.base_ref ?? undefined,
          session_id: job.session_id ?? undefined,
          created_at: job.created_at,
        },
        profile,
        signal,
        onStarted: (info: StartedInfo) => {
          const session = typeof info.session_id === "string" ? info.session_id : undefined;
          const branch = typeof info.branch === "string" ? info.branch : undefined;
          if (session === undefined && branch === undefined) return;
          void mutate(id, (j) => (isFinished(j.status) ? null : { ...j, session_id: session ?? j.session_id, branch: branch ?? j.branch })).catch(
            (err: Error) => logger.warn(`job ${id}: could not record the agent's start: ${err.message}`),
          );
        },
        onRetry: (retry) => {
          void mutate(id, (j) => (isFinished(j.status) ? null : { ...j, api_retry: retry && { ...retry, at: iso() } })).catch((err: Error) =>
            logger.warn(`job ${id}: could not record the agent's retry: ${err.message}`),
          );
        },
      });
    } catch (err) {
      return { status: "failed", exit_code: null, output: "", error: `the job runner failed: ${(err as Error).message}` };
    }
  }

  const finish = (job: Job, status: FinalStatus, fields: Partial<Job>): Job => finished(job, status, fields, iso());

  // --- the watch: cancels made by another process, the drain flag set by another process
  const watchTimer = setInterval(() => void watch(), opts.watchMs ?? 2_000);
  watchTimer.unref?.();
  let watching = false;
  async function watch(): Promise<void> {
    if (watching || closed) return;
    watching = true;
    try {
      drainingFlag = await isDraining(kv, pod).catch(() => drainingFlag);
      for (const [id, entry] of running) {
        if (entry.controller.signal.aborted) continue;
        const job = await store.get(id).catch(() => null);
        if (job?.status === "cancelled") {
          entry.abortedFor = "cancel";
          entry.controller.abort(new Error(CANCELLED_BY_REQUEST));
        }
      }
      pump();
    } finally {
      watching = false;
    }
  }

  const sweepTimer = setInterval(() => {
    void store.sweep().then(
      (n) => n > 0 && logger.info(`removed ${n} expired job record(s)`),
      (err: Error) => logger.warn(`sweeping expired jobs failed: ${err.message}`),
    );
  }, opts.sweepMs ?? 10 * 60_000);
  sweepTimer.unref?.();

  async function getJob(id: string): Promise<Job> {
    const job = isJobId(id) ? await store.get(id) : null;
    if (job === null) throw new HttpError(404, "job_not_found", `no job ${id} (jobs expire SERVICE_JOB_TTL seconds after their last change)`);
    return job;
  }

  const service: JobService = {
    async submit(input) {
      if (closed) throw new HttpError(503, "shutting_down", "the service is stopping; submit the job again once it is back");
      if (await service.isDraining()) {
        throw new HttpError(503, "draining", `pod ${pod} is draining before shutdown and takes no new jobs; retry shortly (another pod may take it)`, undefined, {
          "Retry-After": String(DRAIN_RETRY_AFTER_SECONDS),
        });
      }
      // spec: "Agent mode … exposes a completions API instead of cloning task repositories".
      if (opts.agentName !== undefined && input.repo_url) {
        throw new HttpError(
          409,
          "agent_mode",
          `this service runs in agent mode (agent ${opts.agentName}) and clones no task repositories: send the task without repo_url, or chat with the agent at /v1/chat/completions`,
          [{ path: "repo_url", message: "not accepted in agent mode" }],
        );
      }
      const profile = opts.profiles.select(input.task, input.profile);
      if (profile === undefined) {
        throw new HttpError(400, "unknown_profile", `no profile named ${input.profile}; use auto or one of: ${opts.profiles.names().join(", ")}`, [
          { path: "profile", message: `unknown profile ${input.profile}` },
        ]);
      }
      const job = newJob(input, { profile: profile.name, pod, at: iso() });
      await store.put(job);
      queue.push(job.id);
      pump();
      return job;
    },

    get: getJob,

    list: (query) => listJobs(store, query),

    async cancel(id) {
      const job = await getJob(id);
      if (isFinished(job.status)) throw finishedError(job);
      const index = queue.indexOf(id);
      if (index >= 0) queue.splice(index, 1);
      let conflict: Job | undefined;
      const cancelled = await mutate(id, (j) => {
        if (isFinished(j.status)) {
          conflict = j;
          return null;
        }
        return finish(j, "cancelled", { error: CANCELLED_BY_REQUEST });
      });
      if (conflict) throw finishedError(conflict);
      if (cancelled === null) throw new HttpError(404, "job_not_found", `no job ${id}`);
      // spec: States and transitions, cancel row: a running agent gets SIGTERM (the executor's
      // abort), then SIGKILL after its grace period. On another pod, its watch does the same.
      const entry = running.get(id);
      if (entry && !entry.controller.signal.aborted) {
        entry.abortedFor = "cancel";
        entry.controller.abort(new Error(CANCELLED_BY_REQUEST));
      }
      if (!entry) waiters.notify(cancelled);
      return cancelled;
    },

    async wait(id, waitOpts = {}) {
      const job = await getJob(id);
      // A cancelled job still running here finishes when its agent has exited (exit code, output).
      if ((isFinished(job.status) && !running.has(id)) || waitOpts.signal?.aborted) return job;
      const timeoutSeconds = opts.profiles.select(job.task, job.profile)?.timeout_seconds ?? opts.defaultTimeoutSeconds;
      const boundMs = waitOpts.timeoutMs ?? (timeoutSeconds + 60) * 1000;
      return waiters.wait(id, { boundMs, signal: waitOpts.signal, read: () => store.get(id).then((j) => j ?? job, () => job) });
    },

    async recover() {
      const mine = await scanJobs(store, (j) => j.pod_name === pod && (j.status === "running" || j.status === "queued"));
      let failed = 0;
      const requeue: string[] = [];
      for (const job of mine) {
        if (job.status === "running" && !running.has(job.id)) {
          await mutate(job.id, (j) => (j.status === "running" ? finish(j, "failed", { error: INTERRUPTED_BY_RESTART }) : null));
          failed++;
        } else if (job.status === "queued" && !queue.includes(job.id) && !running.has(job.id)) {
          requeue.push(job.id);
        }
      }
      queue.unshift(...requeue.sort()); // oldest first, ahead of anything submitted since start
      if (failed > 0 || requeue.length > 0) {
        logger.info(`recovered pod ${pod}: ${failed} interrupted job(s) marked failed, ${requeue.length} queued job(s) picked up`);
      }
      pump();
      return { failed, requeued: requeue.length };
    },

    async drain(timeoutSeconds) {
      drainingHere = true;
      try {
        return await drainPod({
          kv,
          pod,
          timeoutSeconds,
          countRunning: () => running.size,
          changed: () => new Promise<void>((resolve) => slotFreed.add(function wake() {
            slotFreed.delete(wake);
            resolve();
          })),
        });
      } finally {
        drainingHere = false;
        drainingFlag = false;
        pump();
      }
    },

    async isDraining() {
      if (drainingHere) return true;
      drainingFlag = await isDraining(kv, pod).catch(() => drainingFlag);
      return drainingFlag;
    },

    stats: () => ({ running: running.size, queued: queue.length, maxParallel: opts.maxParallel }),

    async close() {
      if (closed) return;
      closed = true;
      clearInterval(watchTimer);
      clearInterval(sweepTimer);
      const entries = [...running.values()];
      if (entries.length > 0) logger.warn(`stopping ${entries.length} running job(s): ${INTERRUPTED_BY_STOP}`);
      for (const entry of entries) {
        if (entry.controller.signal.aborted) continue;
        entry.abortedFor = "stop";
        entry.controller.abort(new Error("service stopped"));
      }
      const grace = Bun.sleep(opts.closeGraceMs ?? 15_000).then(() => "timeout" as const);
      const outcome = await Promise.race([Promise.all(entries.map((e) => e.done)).then(() => "done" as const), grace]);
      if (outcome === "timeout") logger.warn("some jobs did not stop in time; they will be marked failed on the next start");
      await Promise.all([...chains.values()]);
    },
  };
  return service;
}

function finishedError(job: Job): HttpError {
  return new HttpError(409, "job_finished", `job ${job.id} already finished (${job.status}); only queued or running jobs can be cancelled`);
}
