// The job orchestrator's Hono sub-app: middleware and routes, nothing else.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { edgeProtection } from "../common/config/edge-settings";
import { registerHealth } from "../common/health";
import { bearerAuth } from "../common/middleware/bearer-auth";
import type { EdgeBindings } from "../common/middleware/stack";
import { createOpenApiApp, serveDocs } from "../common/openapi-app";
import type { StoragePath } from "../common/storage";
import { VERSION } from "../common/version";
import { type AgentModeDeps, registerAgentMode } from "./agent-mode/routes";
import type { OrchestratorConfig } from "./config";
import { registerOrchestratorConsole } from "./console";
import type { JobChangeFeed } from "./jobs/changes";
import type { JobEventStore } from "./jobs/events";
import type { JobService } from "./jobs/service";
import type { ProfileList } from "./profiles/listing";
import type { CompanionSync } from "./repos/companions";
import { registerAdmin } from "./routes/admin";
import { registerAdminStatus } from "./routes/admin-status";
import apiGuide from "./routes/api-guide.md" with { type: "text" };
import { registerJobEvents, registerJobWatch } from "./routes/job-events";
import { registerJobs } from "./routes/jobs";
import { McpSseSessions, registerMcp } from "./routes/mcp";
import { registerMetrics } from "./routes/metrics";
import { registerProfiles } from "./routes/profiles";
import { exceptTeamChat, registerTeamChat, type TeamChatDeps } from "./routes/teamchat";

export interface OrchestratorDeps {
  config: OrchestratorConfig;
  jobs: JobService;
  /** The jobs' event logs (GET /jobs/{id}/events, get_job's last events); undefined = none kept. */
  jobEvents?: JobEventStore;
  /** Job status changes (GET /jobs?watch=true); undefined = the list cannot be watched. */
  jobChanges?: JobChangeFeed;
  profiles: { list(): ProfileList | Promise<ProfileList> };
  companions: CompanionSync;
  /** Open MCP SSE sessions; the runtime ends them on shutdown. */
  mcpSessions?: McpSseSessions;
  /** Agent mode (SERVICE_HUB_URL + HUB_AGENT); undefined = off (chat routes answer 503). */
  agentMode?: AgentModeDeps;
  /** Team chat (TEAMCHAT_APP_ID + TEAMCHAT_APP_PASSWORD); undefined = no /api/messages. */
  teamChat?: TeamChatDeps;
  /** The paths the service writes to, reported with their free space by GET /admin/status. */
  storage?: StoragePath[];
}

export type OrchestratorEnv = { Bindings: EdgeBindings & { deps: OrchestratorDeps } };
export type OrchestratorApp = OpenAPIHono<OrchestratorEnv>;

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
  // Always registered, so there is one API document: with agent mode off they answer 503.
  registerAgentMode(app, deps.agentMode);
  registerTeamChat(app, deps.teamChat);
  serveDocs(app, SERVICE_API_INFO);
  registerOrchestratorConsole(app);
  return app;
}
