// The job record and the job submission, as JSON (spec: job-orchestrator, Job). One schema
// each, named for the OpenAPI document and reused by the routes, the MCP tools and the store.
import { z } from "@hono/zod-openapi";
import { validateSessionId } from "../agent/session";
import { parseRepoUrl } from "../repos/url";
import { validateBaseRef } from "../repos/worktree";

export const JOB_STATUSES = ["queued", "running", "succeeded", "failed", "cancelled"] as const;
export const JobStatus = z.enum(JOB_STATUSES).openapi("JobStatus");
export type JobStatus = z.infer<typeof JobStatus>;

/** Statuses a job never leaves. */
const FINISHED: ReadonlySet<JobStatus> = new Set(["succeeded", "failed", "cancelled"]);
export const isFinished = (status: JobStatus): boolean => FINISHED.has(status);

const ApiRetry = z
  .object({
    attempt: z.number().int().openapi({ example: 2 }),
    max_retries: z.number().int().openapi({ example: 10 }),
    retry_delay_ms: z.number().openapi({ description: "How long the agent waits before this attempt", example: 1150 }),
    error_status: z.number().int().nullable().openapi({ description: "HTTP status of the failed request (null: no answer)", example: 529 }),
    error: z.string().openapi({ description: "The agent CLI's error category", example: "overloaded" }),
    at: z.string().openapi({ format: "date-time", description: "When the service saw the retry" }),
  })
  .openapi("ApiRetry");

const RecalledNote = z
  .object({
    path: z.string().openapi({ description: "vault path (GET /notes/{path}, `router-cli get`)", example: "left/reference/lessons-2026-09-03.md" }),
    title: z.string().openapi({ example: "Lessons 2026-09-03" }),
    kind: z.enum(["lesson", "decision", "note"]),
  })
  .openapi("RecalledNote");

const timestamp = z.string().openapi({ format: "date-time", example: "2025-01-01T12:00:00.000Z" });

export const Job = z
  .object({
    id: z.string().openapi({ description: "Time-ordered UUID (v7)", example: "0194a3b2-6c1e-7f00-8a3b-1c2d3e4f5a6b" }),
    status: JobStatus,
    profile: z.string().openapi({ description: "The profile the job runs with (auto already resolved)", example: "code" }),
    task: z.string().openapi({ example: "Fix the failing test in src/parser.ts" }),
    repo_url: z.string().nullable().openapi({ example: "https://github.com/acme/widgets.git" }),
    base_ref: z.string().nullable().openapi({ description: "Branch, tag or commit the work starts from; null = the remote's default branch", example: "main" }),
    session_id: z.string().nullable().openapi({ description: "The agent's session UUID (resumable with --resume)" }),
    exit_code: z.number().int().nullable().openapi({ description: "The agent's exit code; null until it exits, or when it never started" }),
    pr_url: z.string().nullable().openapi({ example: "https://github.com/acme/widgets/pull/42" }),
    branch: z.string().nullable().openapi({ description: "The branch the agent worked on", example: "service/0194a3b2" }),
    error: z.string().nullable().openapi({ description: "Why the job failed or was cancelled" }),
    output: z.string().nullable().openapi({ description: "The agent's final result text" }),
    pod_name: z.string().openapi({ description: "The service instance (SERVICE_POD_NAME) that owns the job", example: "service-0" }),
    created_at: timestamp,
    started_at: timestamp.nullable(),
    finished_at: timestamp.nullable(),
    updated_at: timestamp,
    usage: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({
        description:
          "Token usage, updated while the job runs: input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens " +
          "(and, once finished, prompt_tokens, completion_tokens, total_tokens in OpenAI's terms)",
        example: { input_tokens: 1200, output_tokens: 340, cache_creation_input_tokens: 2048, cache_read_input_tokens: 18000 },
      }),
    cost_usd: z.number().nullable().openapi({ description: "Same as total_cost_usd (kept for older clients)", example: 0.0123 }),
    // Added with the job's event log (issue 18): absent in records written before, hence the defaults.
    total_cost_usd: z
      .number()
      .nullable()
      .default(null)
      .openapi({ description: "What the agent reported it cost (its result line); null until it ends", example: 0.0123 }),
    num_turns: z.number().int().nullable().default(null).openapi({ description: "Model turns so far (the result line's count once finished)", example: 3 }),
    duration_ms: z.number().int().nullable().default(null).openapi({ description: "How long the agent has run (so far, while running)", example: 8123 }),
    max_budget_usd: z
      .number()
      .nullable()
      .default(null)
      .openapi({ description: "The spending cap the job runs with (its own, else its profile's); null = none", example: 2 }),
    recall: z
      .array(RecalledNote)
      .default([])
      .openapi({
        description:
          "The vault's notes the agent's first turn was given, found by searching the task and the repository's name (ROUTER_RECALL_MAX_CHARS); " +
          "set when the agent starts; empty when none bore on the task or no router is known",
      }),
    api_retry: ApiRetry.nullable()
      .default(null)
      .openapi({ description: "Set while the agent retries the model API (its last retry); null once the API answered again" }),
  })
  .openapi("Job");
export type Job = z.infer<typeof Job>;

/** A zod check from a validator that throws (the runner's own, so submission and run agree). */
const checkedBy = (validate: (value: string) => unknown) => (value: string, ctx: z.RefinementCtx) => {
  try {
    validate(value);
  } catch (err) {
    ctx.addIssue({ code: "custom", message: (err as Error).message });
  }
};

export const JobSubmission = z
  .object({
    task: z
      .string()
      .trim()
      .min(1, "must not be empty")
      // A NUL cannot reach the agent (an argument or prompt ends at it).
      .refine((t) => !t.includes("\0"), "must not contain a NUL character")
      .openapi({ description: "What the agent should do", example: "Add a --json flag to the export command" }),
    repo_url: z
      .string()
      .trim()
      .superRefine(checkedBy(parseRepoUrl))
      .optional()
      .openapi({
        description:
          "Repository to clone (cached) and work in: https://, http://, ssh://, user@host:path, file:// or an absolute path, " +
          "without credentials (set GITHOST_TOKEN). Omitted = an empty scratch directory.",
        example: "https://github.com/acme/widgets.git",
      }),
    profile: z
      .string()
      .trim()
      .min(1)
      .default("auto")
      .openapi({ description: "Profile name (GET /profiles), or auto to choose from the task", example: "auto" }),
    base_ref: z
      .string()
      .trim()
      .superRefine(checkedBy(validateBaseRef))
      .optional()
      .openapi({ description: "Branch, tag or commit to start from; omitted = the remote's default branch", example: "main" }),
    session_id: z
      .string()
      .superRefine(checkedBy(validateSessionId))
      .optional()
      .openapi({ description: "Agent session UUID: a new session with this id, or the one to resume" }),
    max_budget_usd: z.number().positive().max(100_000).optional().openapi({
      description: "Spending cap in USD for this job (the CLI's --max-budget-usd); overrides the profile's. A job that reaches it fails (error_max_budget_usd)",
      example: 2,
    }),
    wait: z.boolean().default(false).openapi({ description: "Answer when the job has finished (200) instead of at once (202); bounded by the job timeout" }),
  })
  .openapi("JobSubmission");
export type JobSubmission = z.infer<typeof JobSubmission>;
/** What a caller may leave out: the defaults above fill it in. */
export type JobSubmissionInput = z.input<typeof JobSubmission>;

export const JobList = z
  .object({
    jobs: z.array(Job).openapi({ description: "Newest first" }),
  })
  .openapi("JobList");
export type JobList = z.infer<typeof JobList>;

export const JOB_LIST_DEFAULT = 20;
export const JOB_LIST_MAX = 1000;

export const JobListQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(JOB_LIST_MAX)
    .default(JOB_LIST_DEFAULT)
    .openapi({ param: { name: "limit", in: "query" }, description: `At most this many jobs (1–${JOB_LIST_MAX})`, example: JOB_LIST_DEFAULT }),
  status: JobStatus.optional().openapi({ param: { name: "status", in: "query" }, description: "Only jobs in this status" }),
  since: z
    .string()
    .datetime({ offset: true, message: "must be an ISO 8601 date-time, e.g. 2025-01-01T12:00:00Z" })
    .optional()
    .openapi({ param: { name: "since", in: "query" }, description: "Only jobs created at or after this time (ISO 8601)", example: "2025-01-01T00:00:00Z" }),
  order: z
    .enum(["desc", "asc"])
    .default("desc")
    .openapi({ param: { name: "order", in: "query" }, description: "By created time: desc (newest first, the default) or asc (oldest first)" }),
});
export type JobListQuery = z.infer<typeof JobListQuery>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Job ids are UUIDs; anything else names no job (and never reaches a file path). */
export const isJobId = (id: string): boolean => UUID.test(id);
