// GET /v1/relay/{correlation_id}: the events of a non-streaming turn (relay/relay.ts) as SSE,
// from the start or after Last-Event-ID, following the turn live until its done sentinel.
import { createRoute, z } from "@hono/zod-openapi";
import { openAiErrorResponse } from "../../common/errors";
import { sseResponse, sseStream } from "../../common/http/sse";
import type { AgentModeDeps } from "../agent-mode/deps";
import { agentModeOff } from "../agent-mode/errors";
import type { OrchestratorApp } from "../app";
import { CORRELATION_ID } from "../chat/request-headers";
import { RELAY_MAX_ENTRIES } from "../relay/relay";
import { keepOpen } from "./keep-open";
import { openAiAuthResponses } from "./responses";

const route = createRoute({
  method: "get",
  path: "/v1/relay/{correlation_id}",
  operationId: "getRelay",
  tags: ["agent mode"],
  summary: "Follow a non-streaming turn's events (SSE)",
  description:
    "The events of the non-streaming /v1/chat/completions turn sent with this X-Correlation-Id (or echoed back in it), as they happen: " +
    "`event: <type>` (thinking, narration, tool_use, tool_result, final, usage, error…), `id: <n>`, data the event as JSON, then `event: done`. " +
    `Reconnect with Last-Event-ID to resume. At most ${RELAY_MAX_ENTRIES} events are kept, for an hour after done.`,
  security: [{ bearer: [] }],
  request: {
    params: z.object({ correlation_id: z.string().regex(CORRELATION_ID, "a correlation id (letters, digits, . _ : -)").openapi({ description: "the turn's X-Correlation-Id" }) }),
    headers: z.object({ "last-event-id": z.string().regex(/^\d+$/, "an event id from this stream").optional() }),
  },
  responses: {
    200: { description: "text/event-stream", content: { "text/event-stream": { schema: z.string() } } },
    400: openAiErrorResponse("Not a correlation id, or a bad Last-Event-ID"),
    404: openAiErrorResponse("No turn with this correlation id (never, or over an hour ago)"),
    503: openAiErrorResponse("Agent mode is off"),
    ...openAiAuthResponses,
  },
});

export function registerRelayRoute(app: OrchestratorApp, deps: AgentModeDeps | undefined): void {
  app.openapi(route, async (c) => {
    if (!deps?.relay) throw agentModeOff();
    let closed = () => false;
    const entries = await deps.relay.follow(c.req.valid("param").correlation_id, Number(c.req.valid("header")["last-event-id"] ?? 0), () => closed());
    keepOpen(c);
    const stream = sseStream({
      run: async (sink) => {
        closed = () => sink.closed;
        for await (const e of entries) sink.event({ id: e.seq, event: e.event, data: JSON.stringify(e.data) });
      },
    });
    return sseResponse(stream) as never;
  });
}
