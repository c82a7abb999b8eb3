// The agent's environment: what the service inherited, minus the service's own secrets (the
// agent runs arbitrary tools), plus the model credentials from config. spec: Authentication,
// "Job environment": when the OAuth token is set, the static key and custom endpoint are
// removed from the job env, even when inherited.

import type { Settings } from "../../common/config/settings";
import { routerSettings } from "../../router/config";
import { type OrchestratorConfig, orchestratorSettings } from "../config";
import { type AgentHomeConfig, prepareAgentHome } from "./home";

export type AgentEnvConfig = Pick<OrchestratorConfig, "modelOauthToken" | "modelAuthToken" | "modelBaseUrl"> & AgentHomeConfig;

const envNames = (settings: Settings, pick: (s: Settings[string]) => boolean) =>
  Object.values(settings)
    .filter(pick)
    .flatMap((s) => (typeof s.env === "string" ? [s.env] : [...s.env]));

/** Every variable either service treats as a secret (API keys, tokens, store URLs, private keys). */
const SERVICE_SECRET_VARS: ReadonlySet<string> = new Set([
  ...envNames(orchestratorSettings, (s) => s.secret === true),
  ...envNames(routerSettings, (s) => s.secret === true),
]);

/** The model endpoint variables, neutral and real names: set from config only. */
const MODEL_ENDPOINT_VARS = envNames(orchestratorSettings, (s) => s === orchestratorSettings.modelBaseUrl);

export interface AgentEnvInput {
  /** The inherited environment (process.env in the service). */
  base: Record<string, string | undefined>;
  config: AgentEnvConfig;
  /** Telemetry, git identity, …; applied before the model credentials rule. */
  extra?: Record<string, string | undefined>;
}

export function buildAgentEnv({ base, config, extra }: AgentEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined && !SERVICE_SECRET_VARS.has(k)) env[k] = v;
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
