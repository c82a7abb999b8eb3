// The agent CLI's retries of the model API and the refusals retrying cannot fix. Claude Code
// (tested: 2.1.331, 2.1.332) retries a failed request up to 10 times with exponential backoff (minutes in
// all), printing a `system` line with subtype `api_retry` before each wait; no recording has
// them. A 401/403 (authentication_failed) is retried too, so a refused key would leave a job
// `running` for minutes: the run is stopped at the first such line instead (process.ts).
import type { AgentEvent } from "./stream-json";

/** One api_retry line, as the job record and the chat stream show it. */
export interface ApiRetry {
  attempt: number;
  max_retries: number;
  retry_delay_ms: number;
  /** HTTP status of the failed request; null when there was none (connection error). */
  error_status: number | null;
  /** The CLI's error category: overloaded, rate_limit, authentication_failed, … */
  error: string;
}

/** A string member as the line has it (the SDK's types name the known values; a line may have others, or none). */
export const nonEmpty = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** The retry an event announces, or undefined. */
export function apiRetryOf(ev: AgentEvent): ApiRetry | undefined {
  if (ev.type !== "system" || ev.subtype !== "api_retry") return undefined;
  return {
    attempt: num(ev.attempt) ?? 0,
    max_retries: num(ev.max_retries) ?? 0,
    retry_delay_ms: num(ev.retry_delay_ms) ?? 0,
    error_status: num(ev.error_status) ?? null,
    error: nonEmpty(ev.error) ?? "unknown",
  };
}

/** Errors no retry can fix: the credentials are refused or lack the permission. */
const UNRECOVERABLE_ERRORS = new Set(["authentication_failed", "permission_denied", "billing_error", "oauth_org_not_allowed"]);

export function isUnrecoverable(r: ApiRetry): boolean {
  return r.error_status === 401 || r.error_status === 403 || UNRECOVERABLE_ERRORS.has(r.error);
}

const what = (r: ApiRetry) => (r.error_status === null ? r.error : `HTTP ${r.error_status} ${r.error}`);

/** "the model API failed (HTTP 529 overloaded); the agent retries (attempt 2 of 10) in 1.2 s". */
export function retryText(r: ApiRetry): string {
  const secs = (r.retry_delay_ms / 1000).toFixed(1);
  return `the model API failed (${what(r)}); the agent retries (attempt ${r.attempt} of ${r.max_retries}) in ${secs} s`;
}

/** The error of a run stopped on an unrecoverable retry. */
export function unrecoverableText(r: ApiRetry): string {
  return (
    `the model API refused the agent's credentials (${what(r)}); retrying cannot fix that, so the agent was stopped ` +
    "instead of retrying: check MODEL_CLI_OAUTH_TOKEN or MODEL_AUTH_TOKEN (and MODEL_BASE_URL)"
  );
}
