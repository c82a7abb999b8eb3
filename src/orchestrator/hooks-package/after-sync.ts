// After POST /admin/sync (or `service-cli hooks sync`): a synced hooks package or bundle has its
// init run again, and a synced hub is taken up without a restart — the agent's package copied
// again, its runners re-run, its system prompt reloaded (agent-mode/deps.ts reload()).
import { log } from "../../common/logger";
import type { AgentModeDeps } from "../agent-mode/deps";
import type { OrchestratorConfig } from "../config";
import type { SyncResult } from "../repos/companions";
import { runHooksInit } from "./hooks-package";

const logger = log("hooks");

export async function afterSync(config: OrchestratorConfig, results: SyncResult[], agentMode: AgentModeDeps | undefined): Promise<void> {
  const synced = (t: SyncResult["target"]) => results.some((r) => r.target === t && r.status === "synced");
  if (synced("agentihooks") || synced("bundle")) {
    await runHooksInit(config).catch((err) => {
      const r = results.find((x) => x.target === "agentihooks") ?? results[0];
      if (r) Object.assign(r, { status: "failed", detail: `${r.detail}; ${(err as Error).message}` });
      logger.error(`hooks package: ${(err as Error).message}`);
    });
  }
  if (synced("agentihub") && agentMode?.reload) {
    const r = results.find((x) => x.target === "agentihub")!;
    try {
      await agentMode.reload();
      r.detail += "; agent package reloaded (copied, runners re-run, system prompt read)";
    } catch (err) {
      Object.assign(r, { status: "failed", detail: `${r.detail}; reload failed, the agent keeps its previous package: ${(err as Error).message}` });
    }
  }
}
