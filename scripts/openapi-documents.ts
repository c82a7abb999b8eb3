// Builds both apps with a neutral configuration (no env, no files, a temp vault) and returns
// their OpenAPI documents, keyed by the file they are checked in as.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openApiDocument } from "../src/common/openapi-app";
import { SERVICE_API_INFO } from "../src/orchestrator/app";
import { loadOrchestratorConfig } from "../src/orchestrator/config";
import { createOrchestratorRuntime } from "../src/orchestrator/runtime";
import { ROUTER_API_INFO } from "../src/router/app";
import { loadRouterConfig } from "../src/router/config";
import { createRouterRuntime } from "../src/router/runtime";

export async function buildDocuments(): Promise<Record<string, Record<string, unknown>>> {
  const home = mkdtempSync(join(tmpdir(), "openapi-home-"));
  const env = { SERVICE_POD_NAME: "openapi" };
  const router = await createRouterRuntime(loadRouterConfig(env, home, { vault: join(home, "vault") }));
  const orchestrator = await createOrchestratorRuntime(loadOrchestratorConfig(env, home));
  try {
    return {
      "router.json": openApiDocument(router.app, ROUTER_API_INFO),
      "service.json": openApiDocument(orchestrator.app, SERVICE_API_INFO),
    };
  } finally {
    await router.close();
    await orchestrator.close();
    rmSync(home, { recursive: true, force: true });
  }
}
