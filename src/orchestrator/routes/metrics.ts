// GET /metrics (issue 17): Prometheus text exposition of metrics.ts, behind the API keys like
// every other route (Prometheus sends them with `authorization: {credentials: …}`).
import { createRoute, z } from "@hono/zod-openapi";
import type { OrchestratorApp } from "../app-types";
import { createMetrics } from "../metrics";
import { authResponses } from "./schemas";

const route = createRoute({
  method: "get",
  path: "/metrics",
  operationId: "getMetrics",
  tags: ["health"],
  summary: "Prometheus metrics",
  description:
    "Prometheus text format: orchestrator_jobs_queued (the whole shared queue with REDIS_URL, else this process's), " +
    "orchestrator_jobs_running, orchestrator_job_slots, orchestrator_jobs_finished_total{status}, orchestrator_chat_turns_running; " +
    "every series labelled with pod (SERVICE_POD_NAME).",
  security: [{ bearer: [] }],
  responses: {
    200: {
      description: "The metrics",
      content: { "text/plain": { schema: z.string().openapi({ example: 'orchestrator_jobs_running{pod="service-0"} 2' }) } },
    },
    ...authResponses,
  },
});

export function registerMetrics(app: OrchestratorApp): void {
  let registry: ReturnType<typeof createMetrics> | undefined;
  app.openapi(route, async (c) => {
    const { config, jobs, agentMode } = c.env.deps;
    registry ??= createMetrics({ pod: config.podName, jobs, chatTurns: agentMode ? () => agentMode.chat.running : undefined });
    return c.text(await registry.metrics(), 200, { "content-type": registry.contentType });
  });
}
