// The orchestrator app with the agent-mode routes, for scripts/bench/chat.ts: its own process,
// so its RSS is the service's alone. Config from the environment (SERVICE_PORT, SERVICE_HUB_URL,
// HUB_AGENT, SERVICE_CLAUDE_BINARY, …) with HOME as the home; GET /health answers when ready.
import { join } from "node:path";
import { createFileStore } from "../../../src/common/kv/file-store";
import { createAgentModeDeps } from "../../../src/orchestrator/agent-mode/deps";
import { createOrchestratorApp } from "../../../src/orchestrator/app";
import { loadOrchestratorConfig } from "../../../src/orchestrator/config";
import { createCompanionSync } from "../../../src/orchestrator/repos/companions";

const home = process.env.HOME!;
const config = loadOrchestratorConfig(process.env, home);
const kv = await createFileStore({ dir: join(config.stateDir, "kv") });
const deps = await createAgentModeDeps(config, kv);
if (!deps) throw new Error("set SERVICE_HUB_URL and HUB_AGENT");
const app = createOrchestratorApp({
  config,
  jobs: {} as never,
  profiles: { list: () => ({ profiles: [], errors: [] }) } as never,
  companions: createCompanionSync(config),
  agentMode: deps,
});
Bun.serve({ hostname: "127.0.0.1", port: config.port, fetch: app.fetch, idleTimeout: 255 });
process.on("SIGTERM", async () => {
  await deps.close();
  process.exit(0);
});
