// The runner: runs what the queue hands this process, one agent per job, and keeps the jobs
// running here. Each job is recorded running (on this pod) before its agent starts, its progress
// and what the agent reports on the way are written to the record, and its end is recorded once
// the agent has exited. A cancel or the service's stop aborts the agent; why is kept so the end
// records the right status.
import { log } from "../../common/logger";
import type { ExecuteRequest, ExecutionResult, Executor, ProfileCatalog, ProfileLike, StartedInfo } from "../execution/executor";
import type { Backlog } from "./backlog";
import type { JobEventLog, JobProgress } from "./events";
import type { RecordsChain } from "./records-chain";
import { isFinished, type Job } from "./schema";
import type { JobStore } from "./store";
import { type AbortReason, CANCELLED_BY_REQUEST, type FinalStatus, finished, INTERRUPTED_BY_STOP, withResult } from "./transitions";

const logger = log("jobs");

interface Running {
  controller: AbortController;
  /** Why it was aborted: set before the abort so the finish knows what to record. */
  abortedFor?: AbortReason;
  done: Promise<void>;
}

export interface Runner {
  /** What the queue calls with each job it hands this process; resolves once the job has ended here. */
  run(id: string): Promise<void>;
  isRunning(id: string): boolean;
  /** Jobs running here. */
  count(): number;
  /** Stops the job's agent if it runs here (a cancel). */
  stopHere(id: string): void;
  /** Stops the agents here of jobs whose record another process cancelled. */
  stopCancelledElsewhere(): Promise<void>;
  /** Stops every agent here (the service stops): "done" once all have ended, "timeout" after graceMs. */
  stopAll(graceMs: number): Promise<"done" | "timeout">;
  /** Jobs this process finished since it started, by final status. */
  finished(): Record<FinalStatus, number>;
}

export function createRunner<P extends ProfileLike>(deps: {
  store: JobStore;
  execute: Executor<P>;
  profiles: ProfileCatalog<P>;
  events?: JobEventLog;
  pod: string;
  iso: () => string;
  mutate: RecordsChain["mutate"];
  backlog: Backlog;
  /** Told of a job's final record once it has ended here. */
  notify: (job: Job) => void;
  /** A job here has ended (a slot is free). */
  onEnded: () => void;
}): Runner {
  const { store, pod, iso, mutate } = deps;
  const running = new Map<string, Running>();
  const finishedHere: Record<FinalStatus, number> = { succeeded: 0, failed: 0, cancelled: 0 };

  async function runFromQueue(id: string): Promise<void> {
    if (running.has(id)) return; // never twice at once here
    const entry: Running = { controller: new AbortController(), done: Promise.resolve() };
    running.set(id, entry);
    let final: Job | null = null;
    entry.done = run(id, entry).then(
      (job) => {
        final = job;
      },
      (err) => logger.error(`job ${id}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`),
    );
    try {
      await entry.done;
    } finally {
      running.delete(id);
      const job = final as Job | null;
      if (job) {
        deps.notify(job);
        if (isFinished(job.status)) finishedHere[job.status as FinalStatus]++;
      }
      deps.onEnded();
    }
  }

  /** Runs one job; resolves to its final record, or null when it did not run here. */
  async function run(id: string, entry: Running): Promise<Job | null> {
    const queued = await store.get(id);
    if (queued === null || queued.status !== "queued") return null; // cancelled or expired while queued
    const profile = deps.profiles.select(queued.task, queued.profile);
    if (profile === undefined) {
      return mutate(id, (j) => finished(j, "failed", { error: `profile ${queued.profile} no longer exists (GET /profiles lists them)` }, iso()));
    }
    let started: Job | null;
    try {
      started = await mutate(id, (j) => (j.status === "queued" ? { ...j, status: "running", started_at: iso(), pod_name: pod } : null));
    } catch (err) {
      // Not recorded as started, so not run: back to the queue (the next watch), never dropped.
      deps.backlog.startNotRecorded(id, err as Error);
      return null;
    }
    if (started === null || started.status !== "running" || started.pod_name !== pod) return null;

    // Stopped (close, cancel) before the agent was spawned: nothing to run.
    const recorder = deps.events?.recorder(
      id,
      (p) => void mutate(id, (j) => (isFinished(j.status) ? null : { ...j, ...progressFields(j, p) })).catch(() => {}),
    );
    const result: ExecutionResult = entry.controller.signal.aborted
      ? { status: "cancelled", exit_code: null, output: "" }
      : await runAgent(started, profile, entry.controller.signal, recorder?.push);
    const totals = await recorder?.finish(result);
    const end = (j: Job) => withResult(totals ? { ...j, ...progressFields(j, totals) } : j, result, entry.abortedFor, iso());
    try {
      return await mutate(id, end);
    } catch (err) {
      // The agent has exited: its end is kept here and written as soon as the store takes it.
      logger.warn(`job ${id}: its end could not be recorded (${(err as Error).message}); it is written as soon as the store takes it`);
      const job = end(started);
      deps.backlog.endNotRecorded(id, end, job);
      return job;
    }
  }

  async function runAgent(job: Job, profile: P, signal: AbortSignal, onEvent?: ExecuteRequest<P>["onEvent"]): Promise<ExecutionResult> {
    const id = job.id;
    try {
      return await deps.execute({
        job: {
          id,
          task: job.task,
          repo_url: job.repo_url ?? undefined,
          base_ref: job.base_ref ?? undefined,
          session_id: job.session_id ?? undefined,
          ...(job.max_budget_usd !== null && { max_budget_usd: job.max_budget_usd }),
          created_at: job.created_at,
        },
        profile,
        signal,
        ...(onEvent && { onEvent }),
        onStarted: (info: StartedInfo) => {
          const session = typeof info.session_id === "string" ? info.session_id : undefined;
          const branch = typeof info.branch === "string" ? info.branch : undefined;
          const recall = Array.isArray(info.recall) ? (info.recall as Job["recall"]) : undefined;
          if (session === undefined && branch === undefined && recall === undefined) return;
          void mutate(id, (j) =>
            isFinished(j.status) ? null : { ...j, session_id: session ?? j.session_id, branch: branch ?? j.branch, recall: recall ?? j.recall },
          ).catch((err: Error) => logger.warn(`job ${id}: could not record the agent's start: ${err.message}`));
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

  function stopHere(id: string): void {
    const entry = running.get(id);
    if (!entry || entry.controller.signal.aborted) return;
    entry.abortedFor = "cancel";
    entry.controller.abort(new Error(CANCELLED_BY_REQUEST));
  }

  return {
    run: runFromQueue,
    isRunning: (id) => running.has(id),
    count: () => running.size,
    stopHere,
    async stopCancelledElsewhere() {
      for (const [id, entry] of running) {
        if (entry.controller.signal.aborted) continue;
        const job = await store.get(id).catch(() => null);
        if (job?.status === "cancelled") stopHere(id);
      }
    },
    async stopAll(graceMs) {
      const entries = [...running.values()];
      if (entries.length > 0) logger.warn(`stopping ${entries.length} running job(s): ${INTERRUPTED_BY_STOP}`);
      for (const entry of entries) {
        if (entry.controller.signal.aborted) continue;
        entry.abortedFor = "stop";
        entry.controller.abort(new Error("service stopped"));
      }
      const grace = Bun.sleep(graceMs).then(() => "timeout" as const);
      return Promise.race([Promise.all(entries.map((e) => e.done)).then(() => "done" as const), grace]);
    },
    finished: () => ({ ...finishedHere }),
  };
}

/** The running totals as job record fields (issue 18, part 2). */
function progressFields(job: Job, p: JobProgress): Partial<Job> {
  return {
    usage: { ...job.usage, ...p.usage },
    total_cost_usd: p.total_cost_usd ?? job.total_cost_usd,
    cost_usd: p.total_cost_usd ?? job.cost_usd,
    num_turns: p.num_turns,
    duration_ms: p.duration_ms,
    session_id: p.session_id ?? job.session_id,
  };
}
