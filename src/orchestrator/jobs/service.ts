// The job service: submission, cancel, wait, restart recovery, drain and shutdown. Records live
// in the JobStore (the source of truth); which process runs a job, and when, is the JobQueue's
// (queue.ts: in this process without Redis, BullMQ shared by every pod with it), which calls
// back here with at most SERVICE_MAX_PARALLEL_JOBS at once. Every state change is written through.
// It composes named parts: the per-job records chain (records-chain.ts), the runner (runner.ts),
// what waits to be queued or recorded (backlog.ts), the reconciler (reconciler.ts), pause and
// drain (pause-drain.ts) and the housekeeping timers (housekeeping.ts).

import { DomainError } from "../../common/domain-error";
import type { KeyValueStore } from "../../common/kv/store";
import { log } from "../../common/logger";
import { isStorageFull, storageFullError } from "../../common/storage";
import type { Executor, ProfileCatalog, ProfileLike } from "../execution/executor";
import { assertRepoAllowed, parseRepoUrl } from "../repos/url";
import { createBacklog } from "./backlog";
import type { JobChangeFeed } from "./changes";
import { DRAIN_RETRY_AFTER_SECONDS, type DrainResult } from "./drain";
import type { JobEventLog } from "./events";
import { startHousekeeping } from "./housekeeping";
import { createPauseDrain } from "./pause-drain";
import { createEmbeddedQueue, type JobQueue } from "./queue";
import { createReconciler } from "./reconciler";
import { createRecordsChain } from "./records-chain";
import { createRunner } from "./runner";
import { isFinished, isJobId, type Job, type JobSubmission } from "./schema";
import { type JobQuery, type JobStore, listJobs, scanJobs } from "./store";
import { CANCELLED_BY_REQUEST, type FinalStatus, finished, INTERRUPTED_BY_RESTART, newJob } from "./transitions";
import { Waiters } from "./waiters";

const logger = log("jobs");
/** Seconds a client is told to wait when no store could record its job. */
const STORE_RETRY_AFTER_SECONDS = 5;

export interface JobServiceOptions<P extends ProfileLike> {
  store: JobStore;
  /** SERVICE_ALLOW_LOCAL_REPOS: a repo_url may be file:// or a local path. */
  allowLocalRepos?: boolean;
  /** Holds the draining flag (Redis or the file key-value store). */
  kv: KeyValueStore;
  execute: Executor<P>;
  profiles: ProfileCatalog<P>;
  podName: string;
  maxParallel: number;
  /** Where queued jobs wait (default: the embedded in-process queue). */
  queue?: JobQueue;
  /**
   * Shared queue only: how often every live job is checked for a lost owner (a dead pod) and a
   * lost queue entry (Redis restarted empty); default 15 s. A lost owner is failed once it has
   * been missing for this long twice.
   */
  reconcileMs?: number;
  /** Job timeout when the profile sets none (SERVICE_CLAUDE_TIMEOUT): bounds wait=true. */
  defaultTimeoutSeconds: number;
  /**
   * Agent mode (HUB_AGENT): the agent package is the service's identity and no task repository
   * is cloned, so a job naming one is refused; a job without one still runs.
   */
  agentName?: string;
  /** The jobs' event logs (GET /jobs/{id}/events); without it no events are kept. */
  events?: JobEventLog;
  /** Told of every status change (GET /jobs?watch=true); shared across pods when it is Redis's. */
  changes?: JobChangeFeed;
  /** How often running jobs are checked for a cancel made by another process, and the drain flag re-read. */
  watchMs?: number;
  /** How often expired job files are swept (default: 10 minutes). */
  sweepMs?: number;
  /** How long close() waits for cancelled agents to exit (default 15 s). */
  closeGraceMs?: number;
  now?: () => number;
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
  /** Ends a drain now (DELETE /admin/drain): new jobs are taken and queued ones start. */
  undrain(): Promise<{ was_draining: boolean }>;
  isDraining(): Promise<boolean>;
  stats(): JobStats;
  /** Jobs waiting to start: the whole shared queue, or this process's embedded one. */
  queueDepth(): Promise<number>;
  /** Stops starting jobs; running ones are stopped and recorded failed; queued ones stay queued. */
  close(): Promise<void>;
}

export interface JobStats {
  /** Jobs running in this process. */
  running: number;
  /** Jobs waiting in this process's embedded queue (0 with a shared queue: see queueDepth). */
  queued: number;
  maxParallel: number;
  /** Jobs this process finished since it started, by final status. */
  finished: Record<FinalStatus, number>;
}

export function createJobService<P extends ProfileLike>(opts: JobServiceOptions<P>): JobService {
  const { store, kv, podName: pod } = opts;
  const now = opts.now ?? Date.now;
  const iso = () => new Date(now()).toISOString();
  const jobQueue = opts.queue ?? createEmbeddedQueue({ podName: pod, maxParallel: opts.maxParallel });
  const reconcileMs = opts.reconcileMs ?? 15_000;
  const waiters = new Waiters((id) => !runner.isRunning(id));
  let closed = false;

  const records = createRecordsChain({ store, events: opts.events, changes: opts.changes, iso });
  const mutate = records.mutate;

  const pauseDrain = createPauseDrain({ kv, pod, queue: jobQueue, countRunning: () => runner.count() });

  const backlog = createBacklog({ queue: jobQueue, mutate, isRunning: (id) => runner.isRunning(id), notify: (job) => waiters.notify(job) });
  const enqueue = backlog.enqueue;

  const runner = createRunner({
    store,
    execute: opts.execute,
    profiles: opts.profiles,
    events: opts.events,
    pod,
    iso,
    mutate,
    backlog,
    notify: (job) => waiters.notify(job),
    onEnded: () => pauseDrain.jobEnded(),
  });

  const finish = (job: Job, status: FinalStatus, fields: Partial<Job>): Job => finished(job, status, fields, iso());

  const reconciler = createReconciler({
    store,
    kv,
    pod,
    queue: jobQueue,
    profiles: opts.profiles,
    mutate,
    backlog,
    isRunning: (id) => runner.isRunning(id),
    notify: (job) => waiters.notify(job),
    stopped: () => closed,
    reconcileMs,
    now,
    iso,
  });
  const reconcile = reconciler.reconcile;

  jobQueue.onCancel(runner.stopHere);
  jobQueue.onStalled((id) => void reconciler.onStalled(id).catch((err: Error) => logger.warn(`job ${id} stalled: ${err.message}`)));
  // The queue lost its entries (Redis back empty): queued jobs are queued again from their records now, not at the next pass.
  jobQueue.onReset(() => void reconcile());
  jobQueue.start(runner.run);
  const housekeeping = startHousekeeping({
    store,
    events: opts.events,
    watchMs: opts.watchMs ?? 2_000,
    watch,
    sweepMs: opts.sweepMs ?? 10 * 60_000,
    ...(jobQueue.shared && { reconcile: { everyMs: reconcileMs, run: reconcile } }),
  });

  /** The watch: the drain flag and cancels set by another process, and what could not be queued or recorded yet. */
  async function watch(): Promise<void> {
    await pauseDrain.refresh();
    await backlog.retryQueue();
    await backlog.retryWrites();
    await runner.stopCancelledElsewhere();
  }

  async function getJob(id: string): Promise<Job> {
    const job = backlog.known(isJobId(id) ? await store.get(id) : null);
    if (job === null) throw new DomainError("not_found", "job_not_found", `no job ${id} (jobs expire SERVICE_JOB_TTL seconds after their last change)`);
    return job;
  }

  const service: JobService = {
    async submit(input) {
      if (closed) throw new DomainError("unavailable", "shutting_down", "the service is stopping; submit the job again once it is back");
      if (await service.isDraining()) {
        throw new DomainError(
          "unavailable",
          "draining",
          `pod ${pod} is draining before shutdown and takes no new jobs; retry shortly (another pod may take it)`,
          { retryAfterSeconds: DRAIN_RETRY_AFTER_SECONDS },
        );
      }
      // spec: "Agent mode … exposes a completions API instead of cloning task repositories".
      if (opts.agentName !== undefined && input.repo_url) {
        throw new DomainError(
          "conflict",
          "agent_mode",
          `this service runs in agent mode (agent ${opts.agentName}) and clones no task repositories: send the task without repo_url, or chat with the agent at /v1/chat/completions`,
          { details: [{ path: "repo_url", message: "not accepted in agent mode" }] },
        );
      }
      if (input.repo_url) assertRepoAllowed(parseRepoUrl(input.repo_url), opts.allowLocalRepos ?? false);
      const profile = opts.profiles.select(input.task, input.profile);
      if (profile === undefined) {
        throw new DomainError("invalid", "unknown_profile", `no profile named ${input.profile}; use auto or one of: ${opts.profiles.names().join(", ")}`, {
          details: [{ path: "profile", message: `unknown profile ${input.profile}` }],
        });
      }
      const job = newJob(input, { profile: profile.name, pod, at: iso() });
      // Acknowledged only once recorded where every reader finds it; queued (now, or once the
      // queue answers again) after that.
      try {
        await store.put(job);
      } catch (err) {
        logger.warn(`a job could not be recorded: ${(err as Error).message}`);
        if (isStorageFull(err)) throw storageFullError(err);
        throw new DomainError(
          "unavailable",
          "store_unavailable",
          "the job store cannot record the job right now; nothing was queued, submit it again shortly",
          { retryAfterSeconds: STORE_RETRY_AFTER_SECONDS },
        );
      }
      await opts.events?.status(job);
      void opts.changes?.publish(job.id);
      await enqueue(job.id);
      return job;
    },

    get: getJob,

    list: async (query) => (await listJobs(store, query)).map((j) => backlog.known(j)!),

    async cancel(id) {
      const job = await getJob(id);
      if (isFinished(job.status)) throw finishedError(job);
      let conflict: Job | undefined;
      const cancelled = await mutate(id, (j) => {
        if (isFinished(j.status)) {
          conflict = j;
          return null;
        }
        return finish(j, "cancelled", { error: CANCELLED_BY_REQUEST });
      });
      if (conflict) throw finishedError(conflict);
      if (cancelled === null) throw new DomainError("not_found", "job_not_found", `no job ${id}`);
      // Only once the cancel is recorded: a cancel that could not be (a full disk) leaves the job to run.
      backlog.dropUnqueued(id);
      await jobQueue.remove(id).catch(() => {});
      // spec: States and transitions, cancel row: a running agent gets SIGTERM (the executor's
      // abort), then SIGKILL after its grace period. On another pod: the cancel channel tells it
      // at once, and its watch sees the record within seconds should the message be lost.
      if (runner.isRunning(id)) runner.stopHere(id);
      else {
        waiters.notify(cancelled);
        if (job.status === "running") void jobQueue.broadcastCancel(id).catch(() => {});
      }
      return cancelled;
    },

    async wait(id, waitOpts = {}) {
      const job = await getJob(id);
      // A cancelled job still running here finishes when its agent has exited (exit code, output).
      if ((isFinished(job.status) && !runner.isRunning(id)) || waitOpts.signal?.aborted) return job;
      const timeoutSeconds = opts.profiles.select(job.task, job.profile)?.timeout_seconds ?? opts.defaultTimeoutSeconds;
      const boundMs = waitOpts.timeoutMs ?? (timeoutSeconds + 60) * 1000;
      return waiters.wait(id, {
        boundMs,
        signal: waitOpts.signal,
        read: () =>
          store.get(id).then(
            (j) => backlog.known(j) ?? job,
            () => job,
          ),
      });
    },

    async recover() {
      const mine = await scanJobs(store, (j) => j.pod_name === pod && (j.status === "running" || j.status === "queued"));
      let failed = 0;
      const requeue: string[] = [];
      for (const job of mine) {
        if (job.status === "running" && !runner.isRunning(job.id)) {
          const interrupted = (j: Job) => (j.status === "running" && j.pod_name === pod ? finish(j, "failed", { error: INTERRUPTED_BY_RESTART }) : null);
          await mutate(job.id, interrupted).catch((err: Error) => {
            // A full disk at start-up: kept and written once the store takes it (the watch), never left running.
            logger.warn(`job ${job.id}: its interruption could not be recorded (${err.message}); it is written as soon as the store takes it`);
            backlog.endNotRecorded(job.id, interrupted, interrupted(job) ?? job);
          });
          failed++;
        } else if (job.status === "queued" && !backlog.isUnqueued(job.id) && !(await jobQueue.has(job.id).catch(() => true))) {
          requeue.push(job.id);
        }
      }
      for (const id of requeue.sort()) await enqueue(id, true); // oldest first
      if (failed > 0 || requeue.length > 0) {
        logger.info(`recovered pod ${pod}: ${failed} interrupted job(s) marked failed, ${requeue.length} queued job(s) picked up`);
      }
      if (jobQueue.shared) void reconcile();
      return { failed, requeued: requeue.length };
    },

    drain: (timeoutSeconds) => pauseDrain.drain(timeoutSeconds),

    undrain: () => pauseDrain.undrain(),

    isDraining: () => pauseDrain.isDraining(),

    stats: () => ({ running: runner.count(), queued: jobQueue.localDepth(), maxParallel: opts.maxParallel, finished: runner.finished() }),

    queueDepth: () => jobQueue.depth(),

    async close() {
      if (closed) return;
      closed = true;
      pauseDrain.stop();
      housekeeping.stop();
      const outcome = await runner.stopAll(opts.closeGraceMs ?? 15_000);
      if (outcome === "timeout") logger.warn("some jobs did not stop in time; they will be marked failed on the next start");
      await records.settled();
      await backlog.retryWrites().catch(() => {});
      if (backlog.unrecordedCount() > 0)
        logger.warn(`${backlog.unrecordedCount()} job end(s) could not be recorded before the stop; the next start marks them failed`);
      await jobQueue.close();
    },
  };
  return service;
}

function finishedError(job: Job): DomainError {
  return new DomainError("conflict", "job_finished", `job ${job.id} already finished (${job.status}); only queued or running jobs can be cancelled`);
}
