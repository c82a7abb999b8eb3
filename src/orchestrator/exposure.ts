// spec gap "behaviour when no keys are configured", decided: without SERVICE_API_KEYS the
// orchestrator serves on a loopback bind only (and says so); bound elsewhere it refuses to
// start unless SERVICE_ALLOW_NO_AUTH=1. Used by main.ts (src/stack.ts) and `service-cli serve`.
import { log } from "../common/logger";
import { isLoopback, StartupError } from "../common/server";
import type { OrchestratorConfig } from "./config";

const logger = log("main");

export function checkOrchestratorExposure(config: Pick<OrchestratorConfig, "apiKeys" | "host" | "allowNoAuth" | "configFile">): void {
  if (config.apiKeys.length > 0) return;
  if (isLoopback(config.host)) {
    logger.warn(`SERVICE_API_KEYS is not set: the orchestrator serves without auth, on loopback (${config.host}) only`);
    return;
  }
  if (!config.allowNoAuth) {
    throw new StartupError(
      `SERVICE_API_KEYS is not set and SERVICE_HOST=${config.host} is not a loopback address: refusing to serve without auth. ` +
        `Set SERVICE_API_KEYS (or server.api_keys in ${config.configFile}), bind 127.0.0.1, or set SERVICE_ALLOW_NO_AUTH=1`,
    );
  }
  logger.warn(`SERVICE_ALLOW_NO_AUTH=1: the orchestrator serves WITHOUT auth on ${config.host}`);
}
