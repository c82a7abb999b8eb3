// Agent mode at start-up (spec: What the service does, "Agent mode"; Resources, "Agent
// package"): entered when HUB_AGENT and the hub (SERVICE_HUB_URL, cloned once into the clone
// root, or SERVICE_HUB_PATH used as-is) are set. Reads agents/<name>/agent.yml, copies
// agents/<name>/package/ to SERVICE_PACKAGE_DIR, validates it, runs its runners/, caches the
// system prompt. Anything broken throws an AgentPackageError naming the file: start-up stops.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { log } from "../../common/logger";
import { buildAgentEnv } from "../agent/env";
import type { OrchestratorConfig } from "../config";
import { dirFromUrl } from "../profiles/load";
import { companionParent, createCompanionSync } from "../repos/companions";
import { AgentPackageError } from "./errors";
import { type AgentManifest, readManifest } from "./manifest";
import { installPackage, readSystemPrompt, runRunners, validatePackage } from "./package";

const logger = log("agent-mode");

export interface AgentMode {
  /** HUB_AGENT: the model id clients pick, and the namespace of sessions and visibility. */
  agentId: string;
  manifest: AgentManifest;
  /** The hub checkout the package came from. */
  hubDir: string;
  /** The agent's cwd (SERVICE_PACKAGE_DIR). */
  packageDir: string;
  /** CLAUDE.md (+ system.md), read once. */
  systemPrompt: string;
  /** runners/ that ran, in order. */
  runners: string[];
}

export type AgentModeConfig = Pick<
  OrchestratorConfig,
  | "agentEnv"
  | "hubUrl"
  | "hubPath"
  | "hubAgent"
  | "packageDir"
  | "cloneRoot"
  | "sharedFsRoot"
  | "stateDir"
  | "githostToken"
  | "githostApiUrl"
  | "githostUrl"
  | "hooksUrl"
  | "hooksPath"
  | "hooksBranch"
  | "hooksBundleUrl"
  | "modelOauthToken"
  | "modelAuthToken"
  | "modelBaseUrl"
  | "claudeHomeDir"
  | "home"
  | "claudeConfigDir"
>;

class AgentModeConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AgentModeConfigError";
  }
}

const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Whether the config asks for agent mode (HUB_AGENT and a hub). */
const agentModeWanted = (config: Pick<OrchestratorConfig, "hubUrl" | "hubPath" | "hubAgent">): boolean =>
  config.hubAgent !== "" && (config.hubUrl !== "" || config.hubPath !== "");

/** undefined when agent mode is not configured; throws when it is and the hub or package is broken. */
export async function loadAgentMode(config: AgentModeConfig, opts: { env?: Record<string, string | undefined> } = {}): Promise<AgentMode | undefined> {
  if (config.hubAgent === "") return undefined;
  if (!agentModeWanted(config)) {
    throw new AgentModeConfigError(
      `HUB_AGENT=${config.hubAgent} is set but no hub is: set SERVICE_HUB_URL (or SERVICE_HUB_PATH) for agent mode, or unset HUB_AGENT`,
    );
  }
  const name = config.hubAgent;
  if (!AGENT_NAME.test(name)) throw new AgentModeConfigError(`HUB_AGENT=${JSON.stringify(name)} is not a directory name under agents/`);

  const hubDir = await hubCheckout(config);
  const agentDir = join(hubDir, "agents", name);
  if (!existsSync(agentDir)) throw new AgentPackageError(agentDir, `is missing: the hub has no agent ${JSON.stringify(name)} (HUB_AGENT)`);
  const manifest = await readManifest(join(agentDir, "agent.yml"));
  if (manifest.name !== name)
    logger.warn(`${join(agentDir, "agent.yml")}: name ${JSON.stringify(manifest.name)} differs from HUB_AGENT=${name}; serving it as ${name}`);

  const source = join(agentDir, "package");
  // Checked in the hub first, so the message names the hub's file, not the copy.
  await validatePackage(source);
  const packageDir = resolve(config.packageDir);
  await installPackage(source, packageDir);
  const env = buildAgentEnv({ base: opts.env ?? process.env, config, extra: { HUB_AGENT: name, SERVICE_PACKAGE_DIR: packageDir } });
  const runners = await runRunners(packageDir, env, source);
  const systemPrompt = await readSystemPrompt(packageDir);
  logger.info(
    `agent mode: ${name} (model ${manifest.model}, max_turns ${manifest.max_turns}, ${manifest.permission_mode}) from ${hubDir}, ` +
      `package at ${packageDir}${runners.length > 0 ? `, runners: ${runners.join(", ")}` : ""}`,
  );
  return { agentId: name, manifest, hubDir, packageDir, systemPrompt, runners };
}

/** The hub's directory: cloned (or fetched) from SERVICE_HUB_URL, else SERVICE_HUB_PATH as-is. */
async function hubCheckout(config: AgentModeConfig): Promise<string> {
  if (config.hubUrl === "") {
    const dir = resolve(config.hubPath);
    if (!existsSync(dir)) throw new AgentPackageError(dir, "is missing (SERVICE_HUB_PATH)");
    return dir;
  }
  if (config.hubPath !== "") logger.warn(`SERVICE_HUB_URL and SERVICE_HUB_PATH are both set: the hub is cloned from the URL (the path is ignored)`);
  const [result] = await createCompanionSync(config).sync("agentihub");
  if (result?.status !== "synced") throw new AgentModeConfigError(`cannot fetch the agent hub: ${result?.detail ?? "no result"}`);
  logger.info(`agent hub: ${result.detail}`);
  return join(companionParent(config), dirFromUrl(config.hubUrl));
}
