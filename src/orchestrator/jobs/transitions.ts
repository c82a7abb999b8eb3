// A job's states and transitions as pure functions (spec: job-orchestrator, States and
// transitions): queued → running → succeeded | failed | cancelled; queued → cancelled;
// running → failed when the service stops or restarts under it.
import type { ExecutionResult } from "../execution/executor";
import type { Job, JobSubmission } from "./schema";

export const CANCELLED_BY_REQUEST = "cancelled by request";
export const INTERRUPTED_BY_RESTART = "interrupted: the service restarted while this job ran";
export const INTERRUPTED_BY_STOP = "interrupted: the service stopped while this job ran (drain the pod first to let jobs finish)";
/** Why a running job failed when its pod disappeared (shared queue): names the pod. */
export const ownerLost = (pod: string, how: string): string =>
  `interrupted: pod ${pod} stopped while this job ran (${how}; killed, evicted or cut off from Redis); not run again`;
/** Stored output is capped; the agent's result text is rarely near it. */
const MAX_OUTPUT_CHARS = 1_000_000;

export type FinalStatus = "succeeded" | "failed" | "cancelled";
/** Why a running job's agent was stopped. */
export type AbortReason = "cancel" | "stop";

export function newJob(input: JobSubmission, opts: { profile: string; pod: string; at: string }): Job {
  return {
    id: Bun.randomUUIDv7(),
    status: "queued",
    profile: opts.profile,
    task: input.task,
    repo_url: input.repo_url ?? null,
    base_ref: input.base_ref ?? null,
    session_id: input.session_id ?? null,
    exit_code: null,
    pr_url: null,
    branch: null,
    error: null,
    output: null,
    pod_name: opts.pod,
    created_at: opts.at,
    started_at: null,
    finished_at: null,
    updated_at: opts.at,
    usage: null,
    cost_usd: null,
    total_cost_usd: null,
    num_turns: null,
    duration_ms: null,
    max_budget_usd: input.max_budget_usd ?? null,
    recall: [],
    api_retry: null,
  };
}

export const finished = (job: Job, status: FinalStatus, fields: Partial<Job>, at: string): Job => ({
  ...job,
  ...fields,
  status,
  finished_at: at,
});

/** The record once the executor has returned. */
export function withResult(job: Job, result: ExecutionResult, abortedFor: AbortReason | undefined, at: string): Job {
  const fields: Partial<Job> = {
    exit_code: result.exit_code,
    output: capOutput(result.output),
    pr_url: result.pr_url ?? job.pr_url,
    branch: result.branch ?? job.branch,
    session_id: result.session_id ?? job.session_id,
    // The running totals (cache tokens) and the result's OpenAI-style counts, side by side.
    usage: isRecord(result.usage) ? { ...job.usage, ...result.usage } : job.usage,
    cost_usd: typeof result.cost_usd === "number" ? result.cost_usd : job.cost_usd,
    total_cost_usd: typeof result.cost_usd === "number" ? result.cost_usd : job.total_cost_usd,
    num_turns: typeof result.num_turns === "number" ? result.num_turns : job.num_turns,
  };
  // A cancel already wrote status, error and finished_at; keep them, add what the agent left.
  if (job.status === "cancelled") return { ...job, ...fields };
  if (abortedFor === "stop") return finished(job, "failed", { ...fields, error: INTERRUPTED_BY_STOP }, at);
  if (abortedFor === "cancel" || result.status === "cancelled") {
    return finished(job, "cancelled", { ...fields, error: CANCELLED_BY_REQUEST }, at);
  }
  if (result.status === "succeeded") return finished(job, "succeeded", { ...fields, error: result.error ?? null }, at);
  return finished(job, "failed", { ...fields, error: result.error ?? `the agent exited with code ${result.exit_code}` }, at);
}

/** A timestamp never before `previous`, so the latest copy of a job always has the greatest updated_at. */
export function laterThan(previous: string, candidate: string): string {
  return candidate > previous ? candidate : new Date(Date.parse(previous) + 1).toISOString();
}

function capOutput(output: string): string {
  if (output.length <= MAX_OUTPUT_CHARS) return output;
  return `${output.slice(0, MAX_OUTPUT_CHARS)}\n…[truncated ${output.length - MAX_OUTPUT_CHARS} characters]`;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
