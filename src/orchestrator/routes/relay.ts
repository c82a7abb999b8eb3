// GET /v1/relay/{correlation_id}: the events of a non-streaming turn (relay/relay.ts) as SSE,
// from the start or after Last-Event-ID, following the turn live until its done sentinel.
import { createRoute, z } from "@hono/zod-openapi";
import { HttpError, openAiErrorResponse } from "../../common/errors";
import { sseResponse, sseStream } from "../../common/http/sse";
import type { AgentModeDeps } from "../agent-mode/deps";
import { agentModeOff } from "../agent-mode/errors";
import type { OrchestratorApp } from "../app";
import { RELAY_MAX_ENTRIES } from "../relay/relay";
import { keepOpen } from "./keep-open";
import { openAiAuthResponses } from "./schemas";

const POLL_MS = 100;

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
    params: z.object({ correlation_id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, "a correlation id (letters, digits, . _ : -)").openapi({ description: "the turn's X-Correlation-Id" }) }),
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

export function registerRelay(app: OrchestratorApp, deps: AgentModeDeps | undefined): void {
  app.openapi(route, async (c) => {
    if (!deps?.relay) throw agentModeOff();
    const relay = deps.relay;
    const id = c.req.valid("param").correlation_id;
    let after = Number(c.req.valid("header")["last-event-id"] ?? 0);
    const first = await relay.read(id, after);
    if (!first.known) throw new HttpError(404, "relay_not_found", `no turn with correlation id ${id} (none ran, or it ended over an hour ago)`);
    keepOpen(c);
    const stream = sseStream({
      run: async (sink) => {
        let batch = first;
        for (;;) {
          for (const e of batch.entries) {
            sink.event({ id: e.seq, event: e.event, data: JSON.stringify(e.data) });
            after = e.seq;
          }
          if (batch.done || sink.closed) return;
          await Bun.sleep(POLL_MS);
          batch = await relay.read(id, after);
          if (!batch.known) return; // expired meanwhile
        }
      },
    });
    return sseResponse(stream) as never;
  });
}
