// POST /jobs, GET /jobs, GET /jobs/{job_id}, DELETE /jobs/{job_id} (spec: job-orchestrator,
// Endpoints). Validation and HTTP shape only; the job service does the rest.
import { createRoute, z } from "@hono/zod-openapi";
import { errorResponse } from "../../common/errors";
import { keepOpen } from "../../common/http/edge";
import type { OrchestratorApp } from "../app-types";
import { isFinished, Job, JobList, JobListQuery, JobSubmission } from "../jobs/schema";
import { authResponses, storageFullResponses } from "./schemas";

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

const JobIdParam = z.object({
  job_id: z.string().openapi({ param: { name: "job_id", in: "path" }, example: "0194a3b2-6c1e-7f00-8a3b-1c2d3e4f5a6b" }),
});

const submit = createRoute({
  method: "post",
  path: "/jobs",
  operationId: "createJob",
  tags: ["jobs"],
  summary: "Submit a job",
  description:
    "Queues an agent job and answers at once with 202 and the job (status queued; it starts as soon as a slot is free). " +
    "With wait: true the answer comes when the job has finished (200), or with 202 and the job as it is once the job timeout " +
    "plus a minute has passed. At most SERVICE_MAX_PARALLEL_JOBS jobs run at once; the rest wait their turn (FIFO).",
  security: [{ bearer: [] }],
  request: { body: { required: true, content: { "application/json": { schema: JobSubmission } } } },
  responses: {
    200: json(Job, "wait: true and the job has finished"),
    202: json(Job, "Accepted: the job is queued or running (Location: /jobs/{id})"),
    400: errorResponse("Invalid body: empty task, bad repository URL, bad base_ref or session_id, unknown profile"),
    ...authResponses,
    ...storageFullResponses,
    409: errorResponse("Agent mode (HUB_AGENT set): the service clones no task repositories, so a job with repo_url is refused (agent_mode)"),
    503: errorResponse("The pod is draining (Retry-After says when to retry) or stopping"),
  },
});

const list = createRoute({
  method: "get",
  path: "/jobs",
  operationId: "listJobs",
  tags: ["jobs"],
  summary: "List jobs",
  description:
    "Newest first (order=asc: oldest first); since= keeps jobs created at or after a time. Jobs expire SERVICE_JOB_TTL seconds after their last change.",
  security: [{ bearer: [] }],
  request: { query: JobListQuery },
  responses: {
    200: json(JobList, "The jobs"),
    400: errorResponse("limit outside 1–1000, an unknown status or order, or since not an ISO 8601 date-time"),
    ...authResponses,
  },
});

const get = createRoute({
  method: "get",
  path: "/jobs/{job_id}",
  operationId: "getJob",
  tags: ["jobs"],
  summary: "Get a job",
  security: [{ bearer: [] }],
  request: { params: JobIdParam },
  responses: {
    200: json(Job, "The job"),
    ...authResponses,
    404: errorResponse("No such job (job_not_found), or it has expired"),
  },
});

const cancel = createRoute({
  method: "delete",
  path: "/jobs/{job_id}",
  operationId: "cancelJob",
  tags: ["jobs"],
  summary: "Cancel a job",
  description:
    "A queued or running job becomes cancelled at once; a running agent gets SIGTERM, then SIGKILL after a grace period. " +
    "The exit code and output of a running agent are added to the job when it has exited.",
  security: [{ bearer: [] }],
  request: { params: JobIdParam },
  responses: {
    200: json(Job, "The cancelled job"),
    ...authResponses,
    ...storageFullResponses,
    404: errorResponse("No such job (job_not_found)"),
    409: errorResponse("The job has already finished (job_finished)"),
  },
});

export function registerJobs(app: OrchestratorApp): void {
  app.openapi(submit, async (c) => {
    const { jobs } = c.env.deps;
    const body = c.req.valid("json");
    const job = await jobs.submit(body);
    c.header("Location", `/jobs/${job.id}`);
    if (!body.wait) return c.json(job, 202);
    keepOpen(c);
    const done = await jobs.wait(job.id, { signal: c.req.raw.signal });
    return isFinished(done.status) ? c.json(done, 200) : c.json(done, 202);
  });

  app.openapi(list, async (c) => {
    const { limit, status, since, order } = c.req.valid("query");
    return c.json({ jobs: await c.env.deps.jobs.list({ limit, status, since, order }) }, 200);
  });

  app.openapi(get, async (c) => c.json(await c.env.deps.jobs.get(c.req.valid("param").job_id), 200));

  app.openapi(cancel, async (c) => c.json(await c.env.deps.jobs.cancel(c.req.valid("param").job_id), 200));
}
