// The orchestrator's MCP server (spec: job-orchestrator, Endpoints, "/mcp … five tools"):
// run_task, get_job, list_jobs, cancel_job, list_profiles. Transport-agnostic: http.ts serves
// it over Streamable HTTP and the older SSE transport, stdio.ts over stdin/stdout.
import { z } from "@hono/zod-openapi";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { toolErrorOf } from "../../common/mcp/tool-error";
import { VERSION } from "../../common/version";
import { flatten, type JobEventStore } from "../jobs/events";
import { JOB_LIST_DEFAULT, JOB_LIST_MAX, JobListQuery, JobSubmission } from "../jobs/schema";
import type { JobService } from "../jobs/service";
import type { ProfileList } from "../profiles/listing";

export interface McpDeps {
  jobs: JobService;
  /** The jobs' event logs: get_job adds the last events. */
  jobEvents?: JobEventStore;
  profiles: { list(): ProfileList | Promise<ProfileList> };
}

/** While run_task waits, a progress notification this often keeps clients that reset their timeout on progress waiting. */
const PROGRESS_EVERY_MS = 10_000;

const ok = (value: Record<string, unknown>): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value, null, 2) }],
  structuredContent: value,
});

/** Domain errors become tool errors the model can read; anything else is a server fault. */
async function answer(fn: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    return ok(await fn());
  } catch (err) {
    const failed = toolErrorOf(err);
    if (failed) return failed;
    throw err;
  }
}

const jobId = z.string().describe("The job id (from run_task or list_jobs)");

export function createMcpServer(deps: McpDeps): McpServer {
  const server = new McpServer({ name: "brain-stack-orchestrator", version: VERSION });
  const { jobs } = deps;
  const submission = JobSubmission.shape;

  server.registerTool(
    "run_task",
    {
      title: "Run an agent task",
      description:
        "Submit a task for the coding agent: it clones repo_url (cached), works on a new branch in its own worktree with the " +
        "profile's model and limits, and (profile auto_pr) opens a pull request. Answers at once with the job (poll get_job); " +
        "with wait: true it answers when the job has finished.",
      inputSchema: {
        task: submission.task.describe("What the agent should do"),
        repo_url: submission.repo_url.describe("Repository to work in (https, ssh, git@host:path, file:// or a path); omitted = a scratch directory"),
        profile: submission.profile.describe("Profile name (list_profiles) or auto (default)"),
        base_ref: submission.base_ref.describe("Branch, tag or commit to start from (default: the remote's default branch)"),
        session_id: submission.session_id.describe("Agent session UUID to start or resume"),
        max_budget_usd: submission.max_budget_usd.describe("Spending cap in USD (overrides the profile's); the job fails when the agent reaches it"),
        wait: submission.wait.describe("Block until the job finishes (bounded by the job timeout)"),
      },
    },
    async (args, extra) =>
      answer(async () => {
        const job = await jobs.submit(JobSubmission.parse(args));
        if (!args.wait) return job;
        const token = extra._meta?.progressToken;
        let ticks = 0;
        const progress =
          token === undefined
            ? undefined
            : setInterval(() => {
                void extra
                  .sendNotification({
                    method: "notifications/progress",
                    params: { progressToken: token, progress: ++ticks, message: `job ${job.id} is still running` },
                  })
                  .catch(() => {});
              }, PROGRESS_EVERY_MS);
        try {
          return await jobs.wait(job.id, { signal: extra.signal });
        } finally {
          clearInterval(progress);
        }
      }),
  );

  server.registerTool(
    "get_job",
    {
      title: "Get a job",
      description:
        "Status, output, error, branch, PR URL, timestamps, and what it has cost so far (usage with cache tokens, total_cost_usd, num_turns, " +
        "duration_ms), with its last events (text, tool calls and results, status changes), so progress shows while it runs.",
      inputSchema: {
        job_id: jobId,
        events: z.number().int().min(0).max(200).default(20).describe("How many of the job's last events to include (0–200, default 20)"),
      },
      annotations: { readOnlyHint: true },
    },
    async ({ job_id, events }) =>
      answer(async () => {
        const job = await jobs.get(job_id);
        const last = deps.jobEvents && events > 0 ? await deps.jobEvents.last(job.id, events) : [];
        return { ...job, events: last.map(flatten) };
      }),
  );

  server.registerTool(
    "list_jobs",
    {
      title: "List jobs",
      description: "Recent jobs, newest first.",
      inputSchema: {
        limit: JobListQuery.shape.limit.describe(`At most this many (1–${JOB_LIST_MAX}, default ${JOB_LIST_DEFAULT})`),
        status: JobListQuery.shape.status.describe("Only jobs in this status"),
      },
      annotations: { readOnlyHint: true },
    },
    async ({ limit, status }) => answer(async () => ({ jobs: await jobs.list({ limit, status }) })),
  );

  server.registerTool(
    "cancel_job",
    {
      title: "Cancel a job",
      description: "Cancel a queued or running job (a running agent is stopped). A finished job cannot be cancelled.",
      inputSchema: { job_id: jobId },
      annotations: { destructiveHint: true, idempotentHint: false },
    },
    async ({ job_id }) => answer(() => jobs.cancel(job_id)),
  );

  server.registerTool(
    "list_profiles",
    {
      title: "List profiles",
      description: "Profiles a task can run with (model, max_turns, auto_pr, permission mode, timeout), and profile files that failed to load.",
      annotations: { readOnlyHint: true },
    },
    async () => answer(async () => deps.profiles.list()),
  );

  return server;
}
