// A broken agent hub or package: start-up stops with it, naming the file at fault. And the
// answer of the agent-mode routes when agent mode is off.
import { DomainError } from "../../common/domain-error";

export class AgentPackageError extends Error {
  readonly code = "agent_package_invalid";
  constructor(
    readonly file: string,
    problem: string,
  ) {
    super(`agent package: ${file} ${problem}`);
    this.name = "AgentPackageError";
  }
}

export const agentModeOff = (): DomainError =>
  new DomainError("unavailable", "agent_mode_off", "agent mode is off: set SERVICE_HUB_URL (or SERVICE_HUB_PATH) and HUB_AGENT, then restart the service");
