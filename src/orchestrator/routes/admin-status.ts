// GET /admin/status: this pod's drain state and its gate (what the console's header shows).
import { createRoute, z } from "@hono/zod-openapi";
import { storageStatus } from "../../common/storage";
import { StorageStatus } from "../../common/storage-schema";
import type { OrchestratorApp } from "../app-types";
import { authResponses } from "./schemas";

const PodStatus = z
  .object({
    pod_name: z.string().openapi({ example: "service-0" }),
    draining: z.boolean().openapi({ description: "True while a drain runs here or the pod's drain flag is set: no new jobs are taken" }),
    running: z.number().int().openapi({ description: "Jobs running in this process" }),
    queued: z.number().int().openapi({ description: "Jobs waiting for a slot in this process" }),
    max_parallel: z.number().int().openapi({ description: "SERVICE_MAX_PARALLEL_JOBS" }),
    storage: z
      .array(StorageStatus)
      .openapi({ description: "SERVICE_JOBS_DIR and the service's state directory with their free space: which path is full (jobs then answer 507)" }),
  })
  .openapi("PodStatus");

const route = createRoute({
  method: "get",
  path: "/admin/status",
  operationId: "getAdminStatus",
  tags: ["admin"],
  summary: "Drain state and the job gate of this pod",
  security: [{ bearer: [] }],
  responses: { 200: { description: "The pod's state", content: { "application/json": { schema: PodStatus } } }, ...authResponses },
});

export function registerAdminStatus(app: OrchestratorApp): void {
  app.openapi(route, async (c) => {
    const { jobs, config } = c.env.deps;
    const stats = jobs.stats();
    return c.json(
      {
        pod_name: config.podName,
        draining: await jobs.isDraining(),
        running: stats.running,
        queued: stats.queued,
        max_parallel: stats.maxParallel,
        storage: storageStatus(c.env.deps.storage ?? []),
      },
      200,
    );
  });
}
