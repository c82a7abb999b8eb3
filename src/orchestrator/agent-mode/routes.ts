// The agent-mode surface: POST /v1/chat/completions, POST /v1/responses, GET /v1/models (+
// /v1/models/{model}), POST /completions, GET /v1/relay/{correlation_id}. Registered whether agent mode is on or not, so the OpenAPI document is the
// same either way: with deps undefined (agent mode off) the chat routes answer 503
// agent_mode_off and the model list is empty.
import type { OrchestratorApp } from "../app";
import { registerChatRoute } from "../routes/chat";
import { registerCompletionsRoute } from "../routes/completions";
import { registerModelsRoutes } from "../routes/models";
import { registerRelayRoute } from "../routes/relay";
import { registerResponsesRoute } from "../routes/openai-responses";
import type { AgentModeDeps } from "./deps";

export function registerAgentModeRoutes(app: OrchestratorApp, deps: AgentModeDeps | undefined): void {
  registerChatRoute(app, deps);
  registerModelsRoutes(app, deps);
  registerCompletionsRoute(app, deps);
  registerResponsesRoute(app, deps);
  registerRelayRoute(app, deps);
}

export { createAgentModeDeps, type AgentModeDeps } from "./deps";
export { loadAgentMode, type AgentMode } from "./load";
