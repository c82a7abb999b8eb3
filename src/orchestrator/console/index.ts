// The orchestrator's /console page (issue 18, part 5).
import type { OpenAPIHono } from "@hono/zod-openapi";
import { registerConsole } from "../../common/console/serve";
import script from "./page.client.js" with { type: "text" };

// biome-ignore lint/suspicious/noExplicitAny: any app, whatever its service's Env (Hono's generic is invariant)
export const registerOrchestratorConsole = (app: OpenAPIHono<any>) =>
  registerConsole(app, { service: "job orchestrator", title: "Job orchestrator", probe: "/admin/status", tokenHint: "one of SERVICE_API_KEYS", script });
