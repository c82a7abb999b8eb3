// What the job service needs from the execution half (agent runner, repos, profiles), as
// plain contracts: runtime.ts plugs in the real ones (execute.ts beside this file), tests plug
// in small in-test fakes (test/support/job-service.ts).
import type { ApiRetry } from "../agent/api-retry";
import type { TokenUsage } from "../agent/outcome";
import type { AgentEvent } from "../agent/stream-json";

/** The job as the executor sees it. */
export interface ExecutionJob {
  id: string;
  task: string;
  repo_url?: string;
  base_ref?: string;
  session_id?: string;
  /** Spending cap (the job's own, else the profile's): --max-budget-usd. */
  max_budget_usd?: number;
  /** When the job was submitted (ISO 8601): a repository fetch begun after it need not be repeated. */
  created_at?: string;
}

export type ExecutionStatus = "succeeded" | "failed" | "cancelled";

/** How a job ended, as the executor reports it: the one result type of the execution half. */
export interface ExecutionResult {
  status: ExecutionStatus;
  exit_code: number | null;
  /** The agent's result text (else its last text). */
  output: string;
  /** Why the job failed or was cancelled, or what went wrong with the pull request (redacted). */
  error?: string;
  /** The code of a typed error (invalid_repo_url, invalid_base_ref, invalid_session_id, …). */
  error_code?: string;
  pr_url?: string;
  /** The job's branch (kept in the clone cache, pushed when a PR was opened). */
  branch?: string;
  session_id?: string;
  /** Token counts; merged into the job record's usage beside the running totals. */
  usage?: TokenUsage | Record<string, number>;
  cost_usd?: number;
  num_turns?: number;
  timed_out?: boolean;
}

/** Reported once the agent process is up (what it knows by then). */
export interface StartedInfo {
  session_id?: string;
  branch?: string;
  [key: string]: unknown;
}

export interface ExecuteRequest<P> {
  job: ExecutionJob;
  profile: P;
  /** Aborted on cancel or shutdown: the executor stops the agent (SIGTERM, then SIGKILL) and resolves. */
  signal: AbortSignal;
  onStarted?: (info: StartedInfo) => void;
  /** Every agent event as it arrives (the job's event log and running totals are made from them). */
  onEvent?: (event: AgentEvent) => void;
  /** The agent retries the model API; null once the API answered again. */
  onRetry?: (retry: ApiRetry | null) => void;
}

/** Runs one job to its end; resolves (never rejects, ideally) with how it ended. */
export type Executor<P> = (req: ExecuteRequest<P>) => Promise<ExecutionResult>;

/** The fields of a profile the job service reads itself. */
export interface ProfileLike {
  name: string;
  timeout_seconds?: number;
  /** Shared queue: times a job whose pod died is queued again instead of failed (default 0: never run twice). */
  retries?: number;
}

export interface ProfileCatalog<P extends ProfileLike> {
  /** The profile for `requested` ("auto" chooses from the task); undefined when no such profile exists. */
  select(task: string, requested: string): P | undefined;
  /** Names a user may ask for, for the error message of an unknown one. */
  names(): string[];
}
