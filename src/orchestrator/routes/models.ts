// GET /v1/models and GET /v1/models/{model} (OpenAI-compatible): the one agent this pod
// serves, so chat clients (Open WebUI, LibreChat) can list and pick it.
import { createRoute, z } from "@hono/zod-openapi";
import { HttpError, openAiErrorResponse } from "../../common/errors";
import type { AgentModeDeps } from "../agent-mode/deps";
import type { OrchestratorApp } from "../app-types";
import { openAiAuthResponses } from "./schemas";

const Model = z
  .object({
    id: z.string().openapi({ example: "deploy-helper" }),
    object: z.literal("model"),
    created: z.number().int(),
    owned_by: z.string().openapi({ example: "brain-stack" }),
  })
  .openapi("Model");

const ModelList = z.object({ object: z.literal("list"), data: z.array(Model) }).openapi("ModelList");

const list = createRoute({
  method: "get",
  path: "/v1/models",
  operationId: "listModels",
  tags: ["agent mode"],
  summary: "List models (the agent)",
  security: [{ bearer: [] }],
  responses: {
    200: { description: "The agent, as the only model (an empty list when agent mode is off)", content: { "application/json": { schema: ModelList } } },
    ...openAiAuthResponses,
  },
});

const get = createRoute({
  method: "get",
  path: "/v1/models/{model}",
  operationId: "retrieveModel",
  tags: ["agent mode"],
  summary: "Get a model (the agent)",
  security: [{ bearer: [] }],
  request: { params: z.object({ model: z.string().openapi({ param: { name: "model", in: "path" } }) }) },
  responses: {
    200: { description: "The agent", content: { "application/json": { schema: Model } } },
    ...openAiAuthResponses,
    404: openAiErrorResponse("Not this pod's agent (OpenAI error shape, code model_not_found)"),
  },
});

export function registerModels(app: OrchestratorApp): void {
  const created = Math.floor(Date.now() / 1000);
  /** This pod's agent as a model, or undefined with agent mode off. */
  const modelOf = (deps: AgentModeDeps | undefined) =>
    deps ? { id: deps.agent.agentId, object: "model" as const, created, owned_by: "brain-stack" } : undefined;
  app.openapi(list, (c) => {
    const model = modelOf(c.env.deps.agentMode);
    return c.json({ object: "list" as const, data: model ? [model] : [] }, 200);
  });
  app.openapi(get, (c) => {
    const model = modelOf(c.env.deps.agentMode);
    const wanted = c.req.valid("param").model;
    if (!model || wanted !== model.id) {
      throw new HttpError(404, "model_not_found", model ? `this pod serves only the agent ${model.id}` : `agent mode is off: no model ${wanted}`);
    }
    return c.json(model, 200);
  });
}
