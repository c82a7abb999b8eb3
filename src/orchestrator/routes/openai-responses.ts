// POST /v1/responses (issue 15 part 6): OpenAI's Responses API for agent mode, streaming (typed
// SSE events) or not. Validation and HTTP shape only; chat/responses.ts maps the request onto a
// chat turn and chat/responses-events.ts renders it.
import { createRoute, z } from "@hono/zod-openapi";
import { openAiErrorResponse } from "../../common/errors";
import { keepOpen } from "../../common/http/edge";
import { agentModeOff } from "../agent-mode/errors";
import type { OrchestratorApp } from "../app-types";
import { SSE_HEADERS } from "../chat/completion-stream";
import { correlationIdOf } from "../chat/request-headers";
import { newResponseId, openResponse } from "../chat/responses";
import type { ResponseContext } from "../chat/responses-events";
import { bufferResponse, responsesStream } from "../chat/responses-stream";
import { turnHeaders } from "./chat";
import { openAiAuthResponses, openAiStorageFullResponses } from "./schemas";

const InputPart = z.object({ type: z.string(), text: z.string().optional() }).loose();

const InputItem = z
  .object({
    type: z
      .string()
      .optional()
      .openapi({ description: "message (default), or item_reference (an earlier output item of ours: continues its conversation); other items are ignored" }),
    role: z.string().optional(),
    content: z.union([z.string(), z.array(InputPart), z.null()]).optional(),
    id: z.string().optional(),
  })
  .loose()
  .openapi("ResponseInputItem");

const ResponseCreateRequest = z
  .object({
    model: z.string().optional().openapi({ description: "The agent's id; any value is answered by this pod's agent", example: "deploy-helper" }),
    input: z
      .union([z.string().min(1, "must not be empty"), z.array(InputItem).min(1, "at least one item is required")])
      .openapi({ description: "The user's message, or message items ({role, content}); the last message must be the user's" }),
    instructions: z.string().nullish().openapi({ description: "A system message for the first turn of the conversation" }),
    previous_response_id: z.string().nullish().openapi({ description: "Continue the conversation of this response (resumes its agent session)" }),
    metadata: z.record(z.string(), z.string()).nullish().openapi({ description: "Echoed back; metadata.conversation_id names the conversation (tier 2)" }),
    stream: z.boolean().optional().default(false),
    user: z.string().nullish().openapi({ description: "End-user id (scopes sessions and the visibility config)" }),
  })
  .loose()
  .openapi("ResponseCreateRequest");

const OutputText = z.object({ type: z.literal("output_text"), text: z.string(), annotations: z.array(z.unknown()), logprobs: z.array(z.unknown()) });
const OutputItem = z
  .union([
    z.object({
      id: z.string(),
      type: z.literal("message"),
      status: z.string(),
      role: z.literal("assistant"),
      content: z.array(OutputText),
      phase: z
        .enum(["commentary", "final_answer"])
        .optional()
        .openapi({ description: "commentary: narration, tool calls and results; final_answer: the answer" }),
    }),
    z.object({
      id: z.string(),
      type: z.literal("reasoning"),
      status: z.string(),
      summary: z.array(z.object({ type: z.literal("summary_text"), text: z.string() })),
    }),
  ])
  .openapi("ResponseOutputItem");

const ResponseObject = z
  .object({
    id: z.string().openapi({ example: "resp_0f6c1c3e2d2a4b8f9a1b2c3d4e5f6a7b" }),
    object: z.literal("response"),
    created_at: z.number().int(),
    status: z.enum(["completed", "failed", "in_progress"]),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    model: z.string(),
    instructions: z.string().nullable(),
    previous_response_id: z.string().nullable(),
    output: z.array(OutputItem),
    usage: z
      .object({
        input_tokens: z.number().int(),
        input_tokens_details: z.object({ cached_tokens: z.number().int() }),
        output_tokens: z.number().int(),
        output_tokens_details: z.object({ reasoning_tokens: z.number().int() }),
        total_tokens: z.number().int(),
      })
      .nullable(),
    metadata: z.record(z.string(), z.string()),
    user: z.string().nullable(),
  })
  .loose()
  .openapi("Response");

const SSE_DESCRIPTION =
  "stream true: `event: <type>` / `data: <event JSON>` — response.created, response.in_progress; per block an output item: " +
  "output_item.added, content_part.added, output_text.delta…, output_text.done, content_part.done, output_item.done (a message; " +
  "phase commentary for narration and visible tool calls/results, final_answer for the answer), or reasoning_summary_part.added, " +
  "reasoning_summary_text.delta…, reasoning_summary_text.done, reasoning_summary_part.done (thinking, when visible); then " +
  "response.completed with usage, or response.failed with the error (after an `error` event when the service itself failed).";

const route = createRoute({
  method: "post",
  path: "/v1/responses",
  operationId: "createResponse",
  tags: ["agent mode"],
  summary: "Talk to the agent (OpenAI Responses API)",
  description:
    "One agent turn, like POST /v1/chat/completions (same auth, visibility config, slash tokens, busy rule and conversation " +
    "headers). previous_response_id (or an item_reference to one of its output items) continues that response's conversation " +
    "and resumes its agent session; without one a request starts a new conversation named by its response id (or, when its " +
    "input carries earlier turns, the content-hash tier finds it).",
  security: [{ bearer: [] }],
  request: { body: { required: true, content: { "application/json": { schema: ResponseCreateRequest } } } },
  responses: {
    200: {
      description: "stream false: the response object. stream true: an SSE stream of typed events.",
      content: { "application/json": { schema: ResponseObject }, "text/event-stream": { schema: z.string().openapi({ description: SSE_DESCRIPTION }) } },
    },
    400: openAiErrorResponse("Invalid body, last message not the user's, or previous_response_id unknown (previous_response_not_found)"),
    ...openAiAuthResponses,
    ...openAiStorageFullResponses,
    429: openAiErrorResponse("A turn of this conversation is still running (conversation_busy; Retry-After in seconds)"),
    502: openAiErrorResponse("stream false: the agent failed (authentication_failed, error_max_turns, agent_exit, …)"),
    503: openAiErrorResponse("Agent mode is off (agent_mode_off)"),
  },
});

export function registerResponses(app: OrchestratorApp): void {
  app.openapi(route, async (c) => {
    const deps = c.env.deps.agentMode;
    if (!deps) throw agentModeOff();
    const body = c.req.valid("json");
    const { id, hex } = newResponseId();
    const correlationId = correlationIdOf((name) => c.req.header(name), { stream: body.stream });
    const opening = await openResponse({ chat: deps.chat, links: deps.responseLinks, hashFallback: deps.hashFallback }, body, id, {
      header: (name) => c.req.header(name),
      correlationId,
    });
    const ctx: ResponseContext = {
      id,
      hex,
      createdAt: Math.floor(Date.now() / 1000),
      model: body.model || deps.agent.agentId,
      instructions: body.instructions ?? null,
      previousResponseId: body.previous_response_id ?? null,
      metadata: body.metadata ?? {},
      user: body.user ?? null,
    };
    keepOpen(c);
    if (body.stream) {
      return new Response(responsesStream(opening, ctx, { keepAliveMs: deps.keepAliveMs }), {
        status: 200,
        headers: { ...SSE_HEADERS, ...turnHeaders(opening) },
      }) as never;
    }
    return c.json(await bufferResponse(opening, ctx), 200, turnHeaders(opening, correlationId));
  });
}
