// The job orchestrator's Hono sub-app: middleware and routes, nothing else.
import { edgeProtection } from "../common/config/edge-settings";
import { registerHealth } from "../common/health";
import { bearerAuth } from "../common/middleware/bearer-auth";
import { createOpenApiApp, serveDocs } from "../common/openapi-app";
import { VERSION } from "../common/version";
import type { OrchestratorApp, OrchestratorDeps, OrchestratorEnv } from "./app-types";
import { registerOrchestratorConsole } from "./console";
import { registerAdmin } from "./routes/admin";
import { registerAdminStatus } from "./routes/admin-status";
import apiGuide from "./routes/api-guide.md" with { type: "text" };
import { registerChat } from "./routes/chat";
import { registerCompletions } from "./routes/completions";
import { registerJobEvents, registerJobWatch } from "./routes/job-events";
import { registerJobs } from "./routes/jobs";
import { McpSseSessions, registerMcp } from "./routes/mcp";
import { registerMetrics } from "./routes/metrics";
import { registerModels } from "./routes/models";
import { registerResponses } from "./routes/openai-responses";
import { registerProfiles } from "./routes/profiles";
import { registerRelay } from "./routes/relay";
import { exceptTeamChat, registerTeamChat } from "./routes/teamchat";

const SERVICE_NAME = "job-orchestrator";

export const SERVICE_API_INFO = {
  title: "brain-stack job orchestrator",
  version: VERSION,
  description:
    "Runs Claude Code as background jobs (REST and MCP) or as a chat agent behind an OpenAI-compatible /v1/chat/completions. " +
    "With SERVICE_API_KEYS set, every endpoint but GET /health needs `Authorization: Bearer <key>`.\n\n" +
    "MCP (tools run_task, get_job, list_jobs, cancel_job, list_profiles), same keys: Streamable HTTP at `POST /mcp`; " +
    "the older HTTP+SSE transport at `GET /mcp/sse` (or `GET /mcp` with `Accept: text/event-stream`) with messages to " +
    "`POST /mcp/messages?sessionId=…`.",
  server: "http://127.0.0.1:8200",
  guide: apiGuide,
};

export function createOrchestratorApp(deps: OrchestratorDeps): OrchestratorApp {
  const app = createOpenApiApp<OrchestratorEnv>(undefined, {
    logTag: "orchestrator",
    maxBodyBytes: deps.config.maxBodyBytes,
    // The team-chat platform cannot send SERVICE_API_KEYS: /api/messages proves itself with
    // the platform's signed JWT instead (checked in its route).
    authorize: exceptTeamChat(
      bearerAuth({
        tokens: deps.config.apiKeys,
        // /console is the page shell only: it calls the API with the key the user pastes.
        openPaths: ["/health", "/openapi.json", "/docs", "/console"],
        // With no keys the process only binds loopback (enforced in main.ts), so open is safe.
        whenUnset: { mode: "open" },
      }),
      deps.teamChat,
    ),
    ...edgeProtection(deps.config, deps.config.apiKeys.length > 0),
    bindings: { deps },
  });
  registerHealth(app, SERVICE_NAME);
  registerJobWatch(app); // before GET /jobs/{job_id}
  registerJobs(app);
  registerJobEvents(app);
  registerProfiles(app);
  registerAdmin(app);
  registerAdminStatus(app);
  registerMetrics(app);
  registerMcp(app, deps, deps.mcpSessions ?? new McpSseSessions());
  // The agent-mode surface (POST /v1/chat/completions, POST /v1/responses, GET /v1/models,
  // POST /completions, GET /v1/relay/{correlation_id}): always registered, so there is one API
  // document; with agent mode off the chat routes answer 503 agent_mode_off and no model is listed.
  registerChat(app);
  registerModels(app);
  registerCompletions(app);
  registerResponses(app);
  registerRelay(app);
  if (deps.teamChat) registerTeamChat(app);
  serveDocs(app, SERVICE_API_INFO);
  registerOrchestratorConsole(app);
  return app;
}
