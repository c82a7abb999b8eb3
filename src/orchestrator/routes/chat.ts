// POST /v1/chat/completions (spec: Endpoints, "POST /v1/chat/completions"): OpenAI-compatible,
// streaming (SSE) or not. Validation and HTTP shape only; the chat service runs the turn.
import { createRoute, z } from "@hono/zod-openapi";
import { openAiErrorResponse } from "../../common/errors";
import { keepOpen } from "../../common/http/edge";
import { agentModeOff } from "../agent-mode/errors";
import type { OrchestratorApp } from "../app-types";
import { bufferReply, chatCompletion } from "../chat/buffered";
import { chatCompletionStream, SSE_HEADERS } from "../chat/completion-stream";
import { newChunkContext } from "../chat/openai-chunks";
import { correlationIdOf } from "../chat/request-headers";
import { type ChatOpening, CORRELATION_ENV } from "../chat/service";
import { settled } from "../chat/settled";
import { openAiAuthResponses, openAiStorageFullResponses } from "./schemas";

const ContentPart = z.object({ type: z.string(), text: z.string().optional() }).loose();

export const ChatMessage = z
  .object({
    role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
    content: z.union([z.string(), z.array(ContentPart), z.null()]).optional(),
  })
  .loose()
  .openapi("ChatMessage");

export const ChatCompletionRequest = z
  .object({
    model: z
      .string()
      .optional()
      .openapi({ description: "The agent's id (GET /v1/models); any value is answered by this pod's agent", example: "deploy-helper" }),
    stream: z.boolean().optional().default(false),
    messages: z.array(ChatMessage).min(1, "at least one message is required"),
    metadata: z
      .object({ conversation_id: z.string().optional().openapi({ description: "Conversation id (tier 2 of conversation resolution)" }) })
      .loose()
      .nullish(),
    user: z
      .string()
      .nullish()
      .openapi({ description: "End-user id (scopes sessions and the visibility config); a UUID-shaped value is taken as the conversation id (tier 2)" }),
    stream_options: z
      .object({ include_usage: z.boolean().optional().openapi({ description: "Usage in its own last chunk (choices: []), usage: null on the others" }) })
      .loose()
      .nullish(),
  })
  .loose()
  .openapi("ChatCompletionRequest");

export const ChatUsage = z
  .object({
    prompt_tokens: z.number().int().openapi({ description: "input + cache creation + cache read tokens" }),
    completion_tokens: z.number().int(),
    total_tokens: z.number().int(),
    prompt_tokens_details: z.object({ cached_tokens: z.number().int().openapi({ description: "cache read tokens" }) }),
  })
  .openapi("ChatUsage");

const ChatCompletion = z
  .object({
    id: z.string(),
    object: z.literal("chat.completion"),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({ role: z.literal("assistant"), content: z.string(), refusal: z.null() }),
        finish_reason: z.literal("stop"),
        logprobs: z.null(),
      }),
    ),
    usage: ChatUsage,
  })
  .openapi("ChatCompletion");

const SSE_DESCRIPTION =
  "stream true: `data: <chat.completion.chunk JSON>` events — role open; thinking (delta.reasoning_content), tool_use and tool_result " +
  "(fenced content), narration and final (content), each tagged with choices[0].x_service_event_type and filtered by the agent's " +
  "visibility config; an error chunk (also a top-level `error` member) when the turn fails; a stop chunk with usage; `data: [DONE]`. " +
  "`: keep-alive` comments while the agent is silent.";

const route = createRoute({
  method: "post",
  path: "/v1/chat/completions",
  operationId: "createChatCompletion",
  tags: ["agent mode"],
  summary: "Chat with the agent (OpenAI-compatible)",
  description:
    "Runs one agent turn in the conversation the request resolves to (headers X-Conversation-Id, X-LibreChat-Conversation-Id, " +
    "X-OpenWebUI-Chat-Id or X-Open-WebUI-Chat-Id; else metadata.conversation_id or a UUID-shaped user; else a hash of the system " +
    "prompt and first user message; else none). Sessions are scoped by X-User-Id (or X-OpenWebUI-User-Id). Slash tokens in the " +
    "last user message (/show-tools, /hide-all, /stream-status, …) change the agent's sticky visibility config and are stripped. " +
    "One turn per conversation runs at a time: another request meanwhile gets 429 with Retry-After. The non-streaming path hands " +
    `the agent a correlation id (X-Correlation-Id, or a new UUID; echoed in the response header) as ${CORRELATION_ENV}.`,
  security: [{ bearer: [] }],
  request: { body: { required: true, content: { "application/json": { schema: ChatCompletionRequest } } } },
  responses: {
    200: {
      description: "stream false: one chat.completion object. stream true: an SSE stream.",
      content: { "application/json": { schema: ChatCompletion }, "text/event-stream": { schema: z.string().openapi({ description: SSE_DESCRIPTION }) } },
    },
    400: openAiErrorResponse("Invalid body (OpenAI error shape): no messages, last message not from the user, empty message"),
    ...openAiAuthResponses,
    ...openAiStorageFullResponses,
    429: openAiErrorResponse("A turn of this conversation is still running (code conversation_busy; Retry-After in seconds)"),
    502: openAiErrorResponse("stream false: the agent failed (code: authentication_failed, error_max_turns, error_during_execution, agent_exit, …)"),
    503: openAiErrorResponse("Agent mode is off (agent_mode_off): SERVICE_HUB_URL and HUB_AGENT are not set"),
  },
});

/** A header value as sent: printable ASCII as is, anything else (non-ASCII, line breaks, NUL) percent-encoded. */
export const headerSafe = (v: string): string => (/^[\x20-\x7e]*$/.test(v) ? v : encodeURIComponent(v.toWellFormed()));

export function turnHeaders(opening: ChatOpening, correlationId?: string): Record<string, string> {
  const h: Record<string, string> = {};
  if (opening.kind === "turn" && opening.info.task !== undefined) {
    // A client's background task: no conversation, no session.
    h["x-client-task"] = opening.info.task;
  } else if (opening.kind === "turn") {
    h["x-conversation-id"] = headerSafe(opening.info.conversation.key);
    h["x-conversation-tier"] = opening.info.conversation.tier;
    h["x-session-id"] = opening.info.sessionId;
  }
  if (correlationId) h["x-correlation-id"] = correlationId;
  return h;
}

export function registerChat(app: OrchestratorApp): void {
  app.openapi(route, async (c) => {
    const deps = c.env.deps.agentMode;
    if (!deps) throw agentModeOff();
    const body = c.req.valid("json");
    const model = body.model || deps.agent.agentId;
    const correlationId = correlationIdOf((name) => c.req.header(name), { stream: body.stream });
    const opening = await deps.chat.open({
      messages: body.messages,
      metadata: body.metadata,
      user: body.user,
      header: (name) => c.req.header(name),
      correlationId,
    });
    if (body.stream) {
      // The turn may be silent for minutes: no idle timeout for this request; keep-alives cover proxies.
      keepOpen(c);
      return settled(opening, () => {
        const stream = chatCompletionStream(opening, newChunkContext(model, { includeUsage: body.stream_options?.include_usage === true }), {
          keepAliveMs: deps.keepAliveMs,
        });
        return new Response(stream, { status: 200, headers: { ...SSE_HEADERS, ...turnHeaders(opening) } });
      }) as never;
    }
    keepOpen(c);
    // The non-streaming event relay: the turn's events, as they come, under its correlation id.
    const relay = correlationId && opening.kind === "turn" ? deps.relay?.writer(correlationId) : undefined;
    let reply;
    try {
      reply = await bufferReply(opening, relay?.append);
    } finally {
      await relay?.done().catch(() => {});
    }
    return c.json(chatCompletion(`chatcmpl-${crypto.randomUUID()}`, model, reply), 200, turnHeaders(opening, correlationId));
  });
}
