// The agent's environment is an allowlist (the agent runs arbitrary tools, so whatever it can
// read it can leak): of what the service inherited only the names below and those the operator
// adds (SERVICE_AGENT_ENV), never one of the service's own secrets; then the job's own variables
// (telemetry, git identity, …) and the model credentials from config. spec: Authentication,
// "Job environment": when the OAuth token is set, the static key and custom endpoint are
// removed from the job env, even when inherited.

import type { Settings } from "../../common/config/settings";
import { routerSettings } from "../../router/config";
import { type OrchestratorConfig, orchestratorSettings } from "../config";
import { type AgentHomeConfig, prepareAgentHome } from "./home";

export type AgentEnvConfig = Pick<OrchestratorConfig, "modelOauthToken" | "modelAuthToken" | "modelBaseUrl" | "agentEnv"> & AgentHomeConfig;

const envNames = (settings: Settings, pick: (s: Settings[string]) => boolean) =>
  Object.values(settings)
    .filter(pick)
    .flatMap((s) => (typeof s.env === "string" ? [s.env] : [...s.env]));

/** Every variable either service treats as a secret (API keys, tokens, store URLs, private keys). */
export const SERVICE_SECRET_VARS: ReadonlySet<string> = new Set([
  ...envNames(orchestratorSettings, (s) => s.secret === true),
  ...envNames(routerSettings, (s) => s.secret === true),
]);

/** The model endpoint variables, neutral and real names: set from config only. */
const MODEL_ENDPOINT_VARS = envNames(orchestratorSettings, (s) => s === orchestratorSettings.modelBaseUrl);

/**
 * What the agent inherits by name: the process basics (search path, locale, terminal, temp dir,
 * user and shell), how it reaches its model API (proxies, extra CA certificates), and Claude
 * Code's own settings that are not prefixed (ANTHROPIC_* and CLAUDE_CODE_* are, below).
 */
export const AGENT_ENV_NAMES: ReadonlySet<string> = new Set([
  "PATH",
  "HOME",
  "TERM",
  "COLORTERM",
  "TMPDIR",
  "LANG",
  "LANGUAGE",
  "TZ",
  "USER",
  "LOGNAME",
  "SHELL",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "IS_SANDBOX",
  "DISABLE_AUTOUPDATER",
  "DISABLE_TELEMETRY",
  "DISABLE_ERROR_REPORTING",
  "DISABLE_BUG_COMMAND",
  "DISABLE_COST_WARNINGS",
  "DISABLE_NON_ESSENTIAL_MODEL_CALLS",
  "DISABLE_PROMPT_CACHING",
  "MAX_THINKING_TOKENS",
  "MAX_MCP_OUTPUT_TOKENS",
  "MCP_TIMEOUT",
  "MCP_TOOL_TIMEOUT",
  "BASH_DEFAULT_TIMEOUT_MS",
  "BASH_MAX_TIMEOUT_MS",
  "BASH_MAX_OUTPUT_LENGTH",
]);

/** Prefixes the agent inherits: the locale's categories, and Claude Code's model and CLI settings. */
export const AGENT_ENV_PREFIXES: readonly string[] = ["LC_", "ANTHROPIC_", "CLAUDE_CODE_"];

/** Whether a variable of the service's environment reaches the agent; `added`: SERVICE_AGENT_ENV. */
export function inheritable(name: string, added: readonly string[] = []): boolean {
  if (SERVICE_SECRET_VARS.has(name)) return false;
  if (AGENT_ENV_NAMES.has(name) || AGENT_ENV_PREFIXES.some((p) => name.startsWith(p))) return true;
  return added.some((a) => (a.endsWith("*") ? name.startsWith(a.slice(0, -1)) : name === a));
}

/** The SERVICE_AGENT_ENV entries that name a secret of the service (they never reach the agent). */
export const secretsNamed = (added: readonly string[]): string[] => added.filter((a) => !a.endsWith("*") && SERVICE_SECRET_VARS.has(a));

export interface AgentEnvInput {
  /** The inherited environment (process.env in the service). */
  base: Record<string, string | undefined>;
  config: AgentEnvConfig;
  /** The job's own variables (telemetry, git identity, …); applied before the model credentials rule. */
  extra?: Record<string, string | undefined>;
}

export function buildAgentEnv({ base, config, extra }: AgentEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  const added = config.agentEnv ?? [];
  for (const [k, v] of Object.entries(base)) if (v !== undefined && inheritable(k, added)) env[k] = v;
  for (const k of MODEL_ENDPOINT_VARS) delete env[k];
  for (const [k, v] of Object.entries(extra ?? {})) if (v !== undefined) env[k] = v;

  // The agent's own home, not the service's (agent/home.ts).
  env.HOME = prepareAgentHome(config);
  if (config.claudeConfigDir) env.CLAUDE_CONFIG_DIR = config.claudeConfigDir;

  if (config.modelOauthToken) {
    env.CLAUDE_CODE_OAUTH_TOKEN = config.modelOauthToken;
    delete env.ANTHROPIC_AUTH_TOKEN;
    delete env.ANTHROPIC_BASE_URL;
    delete env.ANTHROPIC_API_KEY;
  } else {
    if (config.modelAuthToken) env.ANTHROPIC_AUTH_TOKEN = config.modelAuthToken;
    if (config.modelBaseUrl) env.ANTHROPIC_BASE_URL = config.modelBaseUrl;
  }
  return env;
}
