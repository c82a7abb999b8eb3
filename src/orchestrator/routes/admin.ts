// POST /admin/sync (spec: job-orchestrator, Endpoints) and POST /admin/drain (spec: States and
// transitions, "Drain (pre-shutdown)"; what `service-cli drain` and a pod's preStop hook call).
import { createRoute, z } from "@hono/zod-openapi";
import { errorResponse } from "../../common/errors";
import { keepOpen } from "../../common/http/edge";
import type { OrchestratorApp } from "../app-types";
import { DRAIN_DEFAULT_SECONDS } from "../jobs/drain";
import { SYNC_TARGETS } from "../repos/companions";
import { authResponses, storageFullResponses } from "./schemas";

const SyncQuery = z.object({
  target: z
    .enum(["all", ...SYNC_TARGETS])
    .default("all")
    .openapi({ param: { name: "target", in: "query" }, description: "agentihooks (hooks package), bundle (its bundle), agentihub (agent hub), or all" }),
});

export const SyncResponse = z
  .object({
    results: z.array(
      z
        .object({
          target: z.enum(SYNC_TARGETS),
          status: z.enum(["synced", "skipped", "failed"]).openapi({ description: "skipped: not configured, or a path used as-is" }),
          detail: z.string().openapi({ example: "/home/me/.service/agentihub updated 1a2b3c4 → 5d6e7f8" }),
        })
        .openapi("SyncResult"),
    ),
  })
  .openapi("SyncResponse");

const DrainQuery = z.object({
  timeout: z.coerce
    .number()
    .int()
    .min(0)
    .max(86_400)
    .default(DRAIN_DEFAULT_SECONDS)
    .openapi({
      param: { name: "timeout", in: "query" },
      description: `Seconds to wait for running jobs (default ${DRAIN_DEFAULT_SECONDS})`,
      example: DRAIN_DEFAULT_SECONDS,
    }),
});

export const DrainResponse = z
  .object({
    drained: z.boolean().openapi({ description: "True when no job of this pod was running at the end" }),
    running: z.number().int().openapi({ description: "Jobs of this pod still running when the drain ended" }),
  })
  .openapi("DrainResponse");

const sync = createRoute({
  method: "post",
  path: "/admin/sync",
  operationId: "syncCompanions",
  tags: ["admin"],
  summary: "Sync companion repos",
  description:
    "Clones, or fetches and resets to the remote ref, each configured companion repository: the hooks package " +
    "(SERVICE_HOOKS_URL, SERVICE_HOOKS_BRANCH; SERVICE_HOOKS_PATH is used as-is), its bundle (SERVICE_HOOKS_BUNDLE_URL) and the " +
    "agent hub (SERVICE_HUB_URL), under SERVICE_CLONE_ROOT (else SERVICE_SHARED_FS_ROOT, else ~/.service). One result per target; " +
    "a failed target does not stop the others and the answer is still 200.",
  security: [{ bearer: [] }],
  request: { query: SyncQuery },
  responses: {
    200: { description: "One result per target", content: { "application/json": { schema: SyncResponse } } },
    400: errorResponse("Unknown target"),
    ...authResponses,
    ...storageFullResponses,
  },
});

const drain = createRoute({
  method: "post",
  path: "/admin/drain",
  operationId: "drainPod",
  tags: ["admin"],
  summary: "Drain this pod",
  description:
    "Marks this pod (SERVICE_POD_NAME) draining: POST /jobs answers 503 with Retry-After and queued jobs do not start. " +
    "Waits until none of its jobs is running or the timeout has passed, then clears the flag and answers. " +
    "Call it before stopping the service (a Kubernetes preStop hook) so running jobs finish instead of being stopped.",
  security: [{ bearer: [] }],
  request: { query: DrainQuery },
  responses: {
    200: { description: "How the drain ended", content: { "application/json": { schema: DrainResponse } } },
    400: errorResponse("timeout is not a whole number of seconds between 0 and 86400"),
    ...authResponses,
    ...storageFullResponses,
  },
});

const UndrainResponse = z
  .object({ was_draining: z.boolean().openapi({ description: "True when the pod was draining (a drain here, or the flag set by another process)" }) })
  .openapi("UndrainResponse");

const undrain = createRoute({
  method: "delete",
  path: "/admin/drain",
  operationId: "undrainPod",
  tags: ["admin"],
  summary: "End a drain",
  description:
    "Clears this pod's draining flag whoever set it: POST /jobs takes jobs again and queued jobs start. A drain still waiting answers when " +
    "its timeout passes or the jobs end, as before. Without this, the flag is cleared only by the drain that set it when it ends " +
    "(a second drain meanwhile waits with it and leaves it set).",
  security: [{ bearer: [] }],
  responses: {
    200: { description: "The drain is over", content: { "application/json": { schema: UndrainResponse } } },
    ...authResponses,
    ...storageFullResponses,
  },
});

export function registerAdmin(app: OrchestratorApp): void {
  app.openapi(undrain, async (c) => c.json(await c.env.deps.jobs.undrain(), 200));
  app.openapi(sync, async (c) => {
    keepOpen(c);
    return c.json({ results: await c.env.deps.companions.sync(c.req.valid("query").target) }, 200);
  });
  app.openapi(drain, async (c) => {
    keepOpen(c);
    return c.json(await c.env.deps.jobs.drain(c.req.valid("query").timeout), 200);
  });
}
