// For the orchestrator route tests (src/orchestrator/routes/*.test.ts): the orchestrator app with
// the in-test executor, served on a free port (the MCP clients need a URL), behind an API key.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server } from "bun";
import { createOrchestratorApp } from "../../src/orchestrator/app";
import { loadOrchestratorConfig, type OrchestratorConfig } from "../../src/orchestrator/config";
import { createCompanionSync } from "../../src/orchestrator/repos/companions";
import { McpSseSessions } from "../../src/orchestrator/routes/mcp";
import { type ServiceHarness, serviceHarness, testProfiles } from "./job-service";

const KEY = "test-key";
export const AUTH = { authorization: `Bearer ${KEY}` };

export interface TestServer {
  url: string;
  h: ServiceHarness;
  config: OrchestratorConfig;
  server: Server<undefined>;
  mcpSessions: McpSseSessions;
  /** fetch relative to the server, with the key and JSON content type. */
  call(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

export async function startTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const home = await mkdtemp(join(tmpdir(), "orch-routes-"));
  const config = loadOrchestratorConfig({ SERVICE_API_KEYS: KEY, SERVICE_POD_NAME: "pod-a", ...env }, home);
  const h = await serviceHarness({ maxParallel: config.maxParallelJobs });
  const mcpSessions = new McpSseSessions();
  const app = createOrchestratorApp({ config, jobs: h.service, profiles: testProfiles, companions: createCompanionSync(config), mcpSessions });
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: app.fetch, idleTimeout: 255 });
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    h,
    config,
    server,
    mcpSessions,
    call(path, init = {}) {
      const { json, headers, ...rest } = init;
      return fetch(`${url}${path}`, {
        ...rest,
        headers: { ...AUTH, ...(json !== undefined ? { "content-type": "application/json" } : {}), ...(headers as Record<string, string>) },
        body: json !== undefined ? JSON.stringify(json) : rest.body,
      });
    },
    async close() {
      await mcpSessions.close();
      await server.stop(true);
      await h.cleanup();
      await rm(home, { recursive: true, force: true });
    },
  };
}
