// POST /dispatch: bundle a task with its context and submit it to the job orchestrator.
import { createRoute, z } from "@hono/zod-openapi";
import { errorResponse } from "../../common/errors";
import type { RouterApp } from "../app-types";
import { dispatch } from "../dispatch/dispatch";
import { QUERY_MAX_CHARS } from "../search/limits";
import { authResponses } from "./schemas";

export const DispatchRequest = z
  .object({
    task: z
      .string()
      // The bundle (task + context) must fit the orchestrator's body limit: refused here, not as its 413.
      .max(1_000_000, "task is longer than 1,000,000 characters")
      .refine((s) => s.trim().length > 0, "task is empty")
      .openapi({ example: "Fix the flaky deploy test" }),
    query: z.string().max(QUERY_MAX_CHARS).optional().openapi({ description: "what to search the vault for (default: the task)" }),
    repo_url: z.string().optional(),
    profile: z.string().optional(),
    include_linked: z
      .boolean()
      .default(false)
      .openapi({ description: "also bundle the notes the top 3 sources link to and are linked from (one hop, 12,000 characters at most)" }),
  })
  .openapi("DispatchRequest");

export const DispatchResponse = z
  .object({
    bundle_id: z.string(),
    bundle: z.string().openapi({ description: "where the bundle is kept: bundles/<id>.md in the vault, or s3://bucket/bundles/<id>.md" }),
    job_id: z.string(),
    status: z.string().openapi({ example: "queued" }),
    sources: z.array(z.string()).openapi({ description: "vault paths the bundle cites" }),
    linked: z.array(z.string()).optional().openapi({ description: "with include_linked: the linked notes the bundle carries" }),
  })
  .openapi("DispatchResponse");

const route = createRoute({
  method: "post",
  path: "/dispatch",
  operationId: "dispatch",
  tags: ["dispatch"],
  summary: "Assemble a bundle and submit it as a job",
  security: [{ bearer: [] }],
  request: { body: { required: true, content: { "application/json": { schema: DispatchRequest } } } },
  responses: {
    202: { description: "Bundle stored, job submitted", content: { "application/json": { schema: DispatchResponse } } },
    400: errorResponse(
      "Bad request, or the orchestrator refused the job's input (bad repo URL, unknown profile): its code and message, details.bundle_id names the kept bundle",
    ),
    409: errorResponse("The orchestrator refused the job as conflicting with its state (e.g. agent_mode: repo_url on an agent-mode pod); its code and message"),
    413: errorResponse("The orchestrator refused the bundle as larger than its MAX_BODY_BYTES"),
    429: errorResponse("The orchestrator is busy (its code, message and Retry-After)"),
    502: errorResponse(
      "The orchestrator is unreachable (orchestrator_unreachable), refused SERVICE_API_KEY (orchestrator_auth_failed) or failed (orchestrator_error); " +
        "or the object store or gateway failed. details.bundle_id names the kept bundle",
    ),
    504: errorResponse("The orchestrator (orchestrator_timeout) or the language model gateway did not answer in time"),
    ...authResponses,
    503: errorResponse("No server token configured (the router fails closed); or the orchestrator is draining or stopping (its code, message and Retry-After)"),
  },
});

export const registerDispatch = (app: RouterApp) => app.openapi(route, async (c) => c.json(await dispatch(c.env.deps.dispatch, c.req.valid("json")), 202));
