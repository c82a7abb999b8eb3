// Settings of the HTTP edge both services share (Host and Origin checks, CORS, session and
// auth-failure limits). The router reads them from ~/.router/.env (same names), the
// orchestrator from ~/.service/config.yml under `server.`.
import type { McpLimits } from "../mcp/sessions";
import { AuthThrottle } from "../middleware/auth-throttle";
import { BrowserGuard } from "../middleware/browser-guard";
import { int, list } from "./parsers";
import type { Settings } from "./settings";

export function edgeSettings(file: "dotenv" | "yaml") {
  const key = (env: string, yaml: string) => (file === "dotenv" ? env : `server.${yaml}`);
  return {
    allowedHosts: {
      env: "ALLOWED_HOSTS",
      fileKey: key("ALLOWED_HOSTS", "allowed_hosts"),
      default: "",
      defaultDoc: "none",
      parse: list(),
      doc: "host names (comma-separated) served besides the bind address and localhost when no credential is configured; any other Host → 403",
    },
    corsOrigins: {
      env: "CORS_ORIGINS",
      fileKey: key("CORS_ORIGINS", "cors_origins"),
      default: "",
      defaultDoc: "none (CORS off)",
      parse: list(),
      doc: "origins (comma-separated, e.g. https://app.example.com) allowed to call from a browser (CORS); any other Origin → 403",
    },
    mcpMaxSessionsPerClient: {
      env: "MCP_MAX_SESSIONS_PER_CLIENT",
      fileKey: key("MCP_MAX_SESSIONS_PER_CLIENT", "mcp_max_sessions_per_client"),
      default: "64",
      parse: int(1, 100_000),
      doc: "MCP sessions and SSE streams one credential may hold open; more → 429",
    },
    mcpMaxSessions: {
      env: "MCP_MAX_SESSIONS",
      fileKey: key("MCP_MAX_SESSIONS", "mcp_max_sessions"),
      default: "1000",
      parse: int(1, 1_000_000),
      doc: "MCP sessions and SSE streams of the whole process; more → 429",
    },
    mcpSessionIdleSeconds: {
      env: "MCP_SESSION_IDLE_SECONDS",
      fileKey: key("MCP_SESSION_IDLE_SECONDS", "mcp_session_idle_seconds"),
      default: "1800",
      parse: int(1, 7 * 86_400),
      doc: "an MCP session (or SSE stream) with no request for this long is closed",
    },
    authFailureLimit: {
      env: "AUTH_FAILURE_LIMIT",
      fileKey: key("AUTH_FAILURE_LIMIT", "auth_failure_limit"),
      default: "30",
      parse: int(1, 1_000_000),
      doc: "failed bearer attempts per client address per minute; past it that address's refused requests get 429 until the minute is over (a valid token is still served)",
    },
  } satisfies Settings;
}

/** The edge settings as loaded. */
export interface EdgeConfig {
  host: string;
  allowedHosts: string[];
  corsOrigins: string[];
  mcpMaxSessionsPerClient: number;
  mcpMaxSessions: number;
  mcpSessionIdleSeconds: number;
  authFailureLimit: number;
}

/** The guard and throttle of a service's edge (http/edge.ts), from its config. */
export function edgeProtection(config: EdgeConfig, credentialed: boolean): { guard: BrowserGuard; throttle: AuthThrottle } {
  return {
    guard: new BrowserGuard({ bindHost: config.host, allowedHosts: config.allowedHosts, corsOrigins: config.corsOrigins, credentialed }),
    throttle: new AuthThrottle({ limit: config.authFailureLimit, windowMs: 60_000 }),
  };
}

export const mcpLimitsOf = (config: EdgeConfig): McpLimits => ({
  perClient: config.mcpMaxSessionsPerClient,
  total: config.mcpMaxSessions,
  idleMs: config.mcpSessionIdleSeconds * 1000,
});
