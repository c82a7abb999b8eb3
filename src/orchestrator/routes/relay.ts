// GET /v1/relay/{correlation_id}: the events of a non-streaming turn (relay/relay.ts) as SSE,
// from the start or after Last-Event-ID, following the turn live until its done sentinel
// (XREAD BLOCK on Redis, so a reader on any pod sees the events as they are appended).
import { createRoute, z } from "@hono/zod-openapi";
import { openAiErrorResponse } from "../../common/errors";
import { keepOpen } from "../../common/http/edge";
import { sseResponse, sseStream } from "../../common/http/sse";
import { agentModeOff } from "../agent-mode/errors";
import type { OrchestratorApp } from "../app-types";
import { CORRELATION_ID } from "../chat/request-headers";
import { CURSOR_PATTERN, parseCursor, RELAY_MAX_ENTRIES } from "../relay/relay";
import { openAiAuthResponses } from "./schemas";

const route = createRoute({
  method: "get",
  path: "/v1/relay/{correlation_id}",
  operationId: "getRelay",
  tags: ["agent mode"],
  summary: "Follow a non-streaming turn's events (SSE)",
  description:
    "The events of the non-streaming /v1/chat/completions turn sent with this X-Correlation-Id (or echoed back in it), as they happen: " +
    "`event: <type>` (thinking, narration, tool_use, tool_result, final, usage, error…), `id:` the entry's cursor (a Redis stream entry id `<ms>-<n>` with REDIS_URL, " +
    "else its sequence number), data the event as JSON, then `event: done`. " +
    `Reconnect with Last-Event-ID (an entry id or a sequence number) to resume. At most ${RELAY_MAX_ENTRIES} events are kept, for an hour after done; ` +
    "when older ones were dropped before the reader saw them, the stream first says so: `event: truncated`, data `{max_entries, first_seq, missed?}`.",
  security: [{ bearer: [] }],
  request: {
    params: z.object({
      correlation_id: z.string().regex(CORRELATION_ID, "a correlation id (letters, digits, . _ : -)").openapi({ description: "the turn's X-Correlation-Id" }),
    }),
    headers: z.object({
      "last-event-id": z.string().regex(CURSOR_PATTERN, "an event id from this stream (a stream entry id <ms>-<n>, or a sequence number)").optional(),
    }),
  },
  responses: {
    200: { description: "text/event-stream", content: { "text/event-stream": { schema: z.string() } } },
    400: openAiErrorResponse("Not a correlation id, or a bad Last-Event-ID"),
    404: openAiErrorResponse("No turn with this correlation id (never, or over an hour ago)"),
    503: openAiErrorResponse("Agent mode is off"),
    ...openAiAuthResponses,
  },
});

export function registerRelay(app: OrchestratorApp): void {
  app.openapi(route, async (c) => {
    const deps = c.env.deps.agentMode;
    if (!deps?.relay) throw agentModeOff();
    const relayed = await deps.relay.stream(c.req.valid("param").correlation_id, parseCursor(c.req.valid("header")["last-event-id"]));
    keepOpen(c);
    const stream = sseStream({
      run: async (sink) => {
        for await (const e of relayed.events) {
          if (sink.closed) break;
          sink.event({ id: e.id, event: e.event, data: JSON.stringify(e.data) });
        }
      },
      onCancel: () => void relayed.close(),
    });
    return sseResponse(stream) as never;
  });
}
