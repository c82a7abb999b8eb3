// The orchestrator app's types: what its handlers reach through c.env.deps, and the app they are
// registered on. In a module of their own so route files need not import app.ts, which imports them.
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { EdgeBindings } from "../common/http/edge";
import type { McpSessions } from "../common/mcp/sessions";
import type { StoragePath } from "../common/storage";
import type { AgentModeDeps } from "./agent-mode/deps";
import type { OrchestratorConfig } from "./config";
import type { JobChangeFeed } from "./jobs/changes";
import type { JobEventStore } from "./jobs/events";
import type { JobService } from "./jobs/service";
import type { ProfileList } from "./profiles/listing";
import type { CompanionSync } from "./repos/companions";
import type { TeamChatDeps } from "./teamchat/deps";

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
  mcpSessions?: McpSessions;
  /** Agent mode (SERVICE_HUB_URL + HUB_AGENT); undefined = off (chat routes answer 503). */
  agentMode?: AgentModeDeps;
  /** Team chat (TEAMCHAT_APP_ID + TEAMCHAT_APP_PASSWORD); undefined = no /api/messages. */
  teamChat?: TeamChatDeps;
  /** The paths the service writes to, reported with their free space by GET /admin/status. */
  storage?: StoragePath[];
}

export type OrchestratorEnv = { Bindings: EdgeBindings & { deps: OrchestratorDeps } };
export type OrchestratorApp = OpenAPIHono<OrchestratorEnv>;
