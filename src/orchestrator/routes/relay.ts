// GET /v1/relay/{correlation_id}: the events of a non-streaming turn (relay/relay.ts) as SSE,
// from the start or after Last-Event-ID, following the turn live until its done sentinel
// (XREAD BLOCK on Redis, so a reader on any pod sees the events as they are appended).
import { createRoute, z } from "@hono/zod-openapi";
import { HttpError, openAiErrorResponse } from "../../common/errors";
import { sseResponse, sseStream } from "../../common/http/sse";
import type { AgentModeDeps } from "../agent-mode/deps";
import { agentModeOff } from "../agent-mode/errors";
import type { OrchestratorApp } from "../app";
import { CURSOR_PATTERN, parseCursor, RELAY_MAX_ENTRIES, truncation, type Cursor } from "../relay/relay";
import { keepOpen } from "./keep-open";
import { openAiAuthResponses } from "./responses";

/** One wait of a follower; between two, it notices a reader gone or a stream expired. */
const FOLLOW_WAIT_MS = 5_000;

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
    params: z.object({ correlation_id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, "a correlation id (letters, digits, . _ : -)").openapi({ description: "the turn's X-Correlation-Id" }) }),
    headers: z.object({ "last-event-id": z.string().regex(CURSOR_PATTERN, "an event id from this stream (a stream entry id <ms>-<n>, or a sequence number)").optional() }),
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
    const relay = deps.relay;
    const id = c.req.valid("param").correlation_id;
    let after: Cursor | undefined = parseCursor(c.req.valid("header")["last-event-id"]);
    if (after?.kind === "id" && relay.log.kind === "file") {
      throw new HttpError(400, "invalid_request", `Last-Event-ID ${after.id} is a Redis stream entry id, but this service keeps the relay in files (no REDIS_URL): resume with the sequence number it sent as the event id`);
    }
    const first = await relay.read(id, after);
    if (!first.known) throw new HttpError(404, "relay_not_found", `no turn with correlation id ${id} (none ran, or it ended over an hour ago)`);
    keepOpen(c);
    let follower: Awaited<ReturnType<typeof relay.follow>> | undefined;
    const stream = sseStream({
      run: async (sink) => {
        const cut = truncation(first.oldest, after);
        if (cut) sink.event({ event: "truncated", data: JSON.stringify(cut) });
        let batch = first.entries;
        let seen: number | undefined;
        try {
          for (;;) {
            // A follower the writer outran by more than the cap: the gap is said, as at the start.
            const head = batch[0];
            if (seen !== undefined && head && head.seq > seen + 1) {
              sink.event({ event: "truncated", data: JSON.stringify({ max_entries: RELAY_MAX_ENTRIES, first_seq: head.seq, missed: head.seq - seen - 1 }) });
            }
            for (const e of batch) {
              sink.event({ id: e.id, event: e.event, data: JSON.stringify(e.data) });
              after = parseCursor(e.id);
              seen = e.seq;
              if (e.event === "done") return;
            }
            if (sink.closed) return;
            follower ??= await relay.follow(id);
            try {
              batch = await follower.next(after, FOLLOW_WAIT_MS);
            } catch (err) {
              if (sink.closed) return; // the reader left and its follower was closed under the wait
              throw err;
            }
            if (batch.length === 0 && !(await relay.read(id, after)).known) return; // expired meanwhile
          }
        } finally {
          await follower?.close();
        }
      },
      // A reader gone mid-wait: free its follower (a blocked XREAD holds a connection) now.
      onCancel: () => void follower?.close().catch(() => {}),
    });
    return sseResponse(stream) as never;
  });
}
