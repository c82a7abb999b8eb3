// The agent-mode surface: POST /v1/chat/completions, POST /v1/responses, GET /v1/models (+
// /v1/models/{model}), POST /completions, GET /v1/relay/{correlation_id}. Registered whether agent mode is on or not, so the OpenAPI document is the
// same either way: with deps undefined (agent mode off) the chat routes answer 503
// agent_mode_off and the model list is empty.
import type { OrchestratorApp } from "../app";
import { registerChat } from "../routes/chat";
import { registerCompletions } from "../routes/completions";
import { registerModels } from "../routes/models";
import { registerResponses } from "../routes/openai-responses";
import { registerRelay } from "../routes/relay";
import type { AgentModeDeps } from "./deps";

export function registerAgentMode(app: OrchestratorApp, deps: AgentModeDeps | undefined): void {
  registerChat(app, deps);
  registerModels(app, deps);
  registerCompletions(app, deps);
  registerResponses(app, deps);
  registerRelay(app, deps);
}

export { type AgentModeDeps, createAgentModeDeps } from "./deps";
