// GET /profiles (spec: job-orchestrator, Endpoints; Profile).
import { createRoute } from "@hono/zod-openapi";
import type { OrchestratorApp } from "../app-types";
import { ProfileList } from "../profiles/listing";
import { authResponses } from "./schemas";

const route = createRoute({
  method: "get",
  path: "/profiles",
  operationId: "listProfiles",
  tags: ["profiles"],
  summary: "List profiles",
  description:
    "Bundled profiles (code, review) and user profiles (~/.service/profiles/*/, the hooks package). " +
    "A profile file that cannot be read is listed under errors and skipped.",
  security: [{ bearer: [] }],
  responses: {
    200: { description: "Usable profiles and skipped ones", content: { "application/json": { schema: ProfileList } } },
    ...authResponses,
  },
});

export const registerProfiles = (app: OrchestratorApp) => app.openapi(route, async (c) => c.json(await c.env.deps.profiles.list(), 200));
