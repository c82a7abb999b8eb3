// POST /completions (spec: Endpoints): one message to the agent-mode pod, for the agents TUI.
// The spec leaves the body open; ours: {message, conversation_id?, user?} →
// {reply, conversation_id, session_id, usage}. Same turn machinery as /v1/chat/completions
// (sessions, slash tokens, the busy rule); errors in the service's own JSON shape.
import { createRoute, z } from "@hono/zod-openapi";
import { errorResponse } from "../../common/errors";
import { keepOpen } from "../../common/http/edge";
import { agentModeOff } from "../agent-mode/errors";
import type { OrchestratorApp } from "../app-types";
import { bufferReply } from "../chat/buffered";
import { completionRequest, correlationIdOf } from "../chat/request-headers";
import { MAX_ID } from "../chat/resolution";
import { ChatUsage, turnHeaders } from "./chat";
import { authResponses, storageFullResponses } from "./schemas";

export const CompletionRequest = z
  .object({
    message: z.string().trim().min(1, "must not be empty").openapi({ example: "Why did the last deploy fail?" }),
    conversation_id: z
      .string()
      .trim()
      .min(1)
      .max(MAX_ID)
      .optional()
      .openapi({ description: "Continue this conversation; omitted: a new one (its id is in the reply)" }),
    user: z.string().trim().min(1).max(MAX_ID).optional().openapi({ description: "End-user id: scopes the conversation (like X-User-Id)" }),
  })
  .openapi("CompletionRequest");

export const CompletionResponse = z
  .object({
    reply: z.string().openapi({ description: "The agent's final answer (for a slash-token message: the visibility config as JSON)" }),
    conversation_id: z.string(),
    session_id: z.string().nullable().openapi({ description: "The agent's session UUID; null when nothing was spawned" }),
    usage: ChatUsage,
  })
  .openapi("CompletionResponse");

const route = createRoute({
  method: "post",
  path: "/completions",
  operationId: "createCompletion",
  tags: ["agent mode"],
  summary: "Send one message to the agent (agents TUI)",
  security: [{ bearer: [] }],
  request: { body: { required: true, content: { "application/json": { schema: CompletionRequest } } } },
  responses: {
    200: { description: "The agent's answer", content: { "application/json": { schema: CompletionResponse } } },
    400: errorResponse("Invalid body"),
    ...authResponses,
    ...storageFullResponses,
    429: errorResponse("A turn of this conversation is still running (conversation_busy; Retry-After in seconds)"),
    502: errorResponse("The agent failed (authentication_failed, error_max_turns, agent_exit, …)"),
    503: errorResponse("Agent mode is off (agent_mode_off)"),
  },
});

export function registerCompletions(app: OrchestratorApp): void {
  app.openapi(route, async (c) => {
    const deps = c.env.deps.agentMode;
    if (!deps) throw agentModeOff();
    const header = (name: string) => c.req.header(name);
    const { conversationId, request } = completionRequest(c.req.valid("json"), header);
    const correlationId = correlationIdOf(header);
    const opening = await deps.chat.open({ ...request, correlationId });
    keepOpen(c);
    const reply = await bufferReply(opening);
    return c.json(
      {
        reply: reply.content,
        conversation_id: conversationId,
        session_id: opening.kind === "turn" ? opening.info.sessionId : null,
        usage: reply.usage,
      },
      200,
      turnHeaders(opening, correlationId),
    );
  });
}
