// The agent's own home (MODEL_CLI_HOME_DIR, default ~/.service/agent-home): jobs and chat turns
// run with HOME there, so `~/.router/.env`, `~/.service/config.yml` and the rest of the
// service's home are not what the agent's tools find under `~`. The one file brought over is
// what the CLI needs to authenticate after `claude login` on the service's account: its
// credentials file, copied into the agent's .claude/ (mode 0600) when the service's is newer.
import { chmodSync, copyFileSync, mkdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { OrchestratorConfig } from "../config";

export type AgentHomeConfig = Pick<OrchestratorConfig, "claudeHomeDir" | "claudeConfigDir" | "home">;

const CREDENTIALS = ".credentials.json";

/** Creates the agent's home and .claude/, brings the CLI's credentials file over; the home. */
export function prepareAgentHome(config: AgentHomeConfig): string {
  const home = config.claudeHomeDir;
  // Pointed at the service's own home on purpose: nothing to separate or copy.
  if (resolve(home) === resolve(config.home)) return home;
  const claude = config.claudeConfigDir ?? join(home, ".claude");
  try {
    mkdirSync(claude, { recursive: true, mode: 0o700 });
    const from = join(config.home, ".claude", CREDENTIALS);
    const source = statSync(from, { throwIfNoEntry: false });
    if (source?.isFile()) {
      const to = join(claude, CREDENTIALS);
      const copy = statSync(to, { throwIfNoEntry: false });
      // The CLI refreshes its own copy (newer); a new `claude login` on the service's makes that newer.
      if (!copy || source.mtimeMs > copy.mtimeMs) {
        copyFileSync(from, to);
        chmodSync(to, 0o600);
      }
    }
  } catch {
    // An unwritable home shows up as the agent's own error when it starts.
  }
  return home;
}
