// GET /health/pipeline and GET /health/deep: the two reports computed where the vault is mounted.
import { createRoute, z } from "@hono/zod-openapi";
import { StorageStatus } from "../../common/storage-schema";
import type { RouterApp } from "../app-types";
import { deepReport } from "../health/deep";
import { pipelineReport } from "../health/pipeline";
import { STAGE_NAMES } from "../health/report";
import { authResponses } from "./schemas";

const Stage = z
  .object({
    name: z.enum(STAGE_NAMES),
    verdict: z.enum(["ok", "warn", "fail"]),
    evidence: z.record(z.string(), z.unknown()).openapi({ description: "what the verdict rests on (counts, paths, times); the drain stage quotes error_tail" }),
    message: z.string(),
  })
  .openapi("PipelineStage");

export const PipelineReport = z
  .object({
    status: z.enum(["ok", "warn", "fail"]).openapi({ description: "the worst stage verdict" }),
    stages: z.array(Stage).length(7).openapi({ description: "ingest, drain, arcs, lessons, signals, feed, index — in that order" }),
    checked_at: z.string().openapi({ format: "date-time" }),
    took_ms: z.number(),
    scanned: z.number().int().openapi({ description: "directory entries read (at most PIPELINE_SCAN_LIMIT)" }),
  })
  .openapi("PipelineReport");
export type PipelineReport = z.infer<typeof PipelineReport>;

const Probe = z
  .object({
    name: z.enum(["vault", "embeddings", "completion"]),
    verdict: z.enum(["ok", "fail", "skipped"]).openapi({ description: "skipped only when the dependency is not configured" }),
    ms: z.number(),
    message: z.string(),
  })
  .openapi("DeepProbe");

export const DeepReport = z
  .object({
    status: z.enum(["ok", "fail"]).openapi({ description: "fail when any probe failed or a storage path is full" }),
    probes: z.array(Probe).length(3),
    storage: z.array(StorageStatus).openapi({ description: "the vault and DATA_DIR with their free space: which path is full" }),
    checked_at: z.string().openapi({ format: "date-time" }),
  })
  .openapi("DeepReport");
export type DeepReport = z.infer<typeof DeepReport>;

const pipelineRoute = createRoute({
  method: "get",
  path: "/health/pipeline",
  operationId: "getPipelineHealth",
  tags: ["health"],
  summary: "Seven-stage pipeline report",
  security: [{ bearer: [] }],
  responses: {
    200: { description: "The report (200 whatever the verdicts; read status)", content: { "application/json": { schema: PipelineReport } } },
    ...authResponses,
  },
});

const deepRoute = createRoute({
  method: "get",
  path: "/health/deep",
  operationId: "getDeepHealth",
  tags: ["health"],
  summary: "Dependency probes",
  description:
    "Three real probes: a vault write round-trip; the index's vector dimension read from its database and a real embedding call checked against it; " +
    "a one-token completion through the gateway. A missing server token is a hard failure: like every router path this answers 503 server_token_unset then.",
  security: [{ bearer: [] }],
  responses: {
    200: { description: "The report (200 whatever the verdicts; read status)", content: { "application/json": { schema: DeepReport } } },
    ...authResponses,
  },
});

export function registerHealthReports(app: RouterApp): void {
  app.openapi(pipelineRoute, async (c) => c.json(await pipelineReport(c.env.deps.pipeline), 200));
  app.openapi(deepRoute, async (c) => c.json(await deepReport(c.env.deps.deep), 200));
}
