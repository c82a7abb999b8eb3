// GET /signal: server-sent events of signals as they are recorded, resumable with Last-Event-ID.
import { createRoute, z } from "@hono/zod-openapi";
import { errorResponse } from "../../common/errors";
import { keepOpen } from "../../common/http/edge";
import { eventIdOf, lastEventIdOf, sseResponse, sseStream } from "../../common/http/sse";
import type { RouterApp } from "../app-types";
import { SEVERITIES } from "../signals/signal-files";
import { signalPump } from "../signals/stream";
import { authResponses } from "./schemas";

const route = createRoute({
  method: "get",
  path: "/signal",
  operationId: "streamSignals",
  tags: ["signals"],
  summary: "Stream of signals (SSE)",
  description:
    "Each recorded signal is an event `signal` with an id; a `: keep-alive` comment follows every SIGNAL_HEARTBEAT_SECONDS (15). " +
    "Reconnect with Last-Event-ID (or ?last_event_id=) to receive what was missed, without loss or duplicates; when the id is older than the kept " +
    "backlog (5,000 events) a `gap` event comes first. Without an id the stream starts with what is recorded from now on.",
  security: [{ bearer: [] }],
  request: {
    headers: z.object({ "last-event-id": z.string().optional() }),
    query: z.object({
      last_event_id: z.string().optional().openapi({ description: "same as the Last-Event-ID header (for clients that cannot set headers)" }),
      min_severity: z.enum(SEVERITIES).optional().openapi({ description: "only signals at least this severe" }),
    }),
  },
  responses: {
    200: {
      headers: {
        "X-Last-Event-Id": {
          schema: { type: "string" },
          description: "the newest event id when the stream opened (0 when none yet): a client resuming can stop reading once it has seen it",
        },
      },
      description:
        "text/event-stream. `event: signal`, `id: <n>`, data {marker_id, path, severity, source, session_id, title, content, ts, count, repeat}; repeat is true when an open signal absorbed a duplicate (count went up).",
      content: { "text/event-stream": { schema: z.string() } },
    },
    400: errorResponse("Bad Last-Event-ID"),
    ...authResponses,
  },
});

export const registerSignal = (app: RouterApp) =>
  app.openapi(route, async (c) => {
    const hub = c.env.deps.signals;
    const lastId = eventIdOf(lastEventIdOf(c.req.raw));
    const pump = signalPump(hub, { lastId, minSeverity: c.req.valid("query").min_severity });
    // The stream is meant to stay open: no idle timeout for it (the keep-alives guard proxies).
    keepOpen(c);
    const stream = sseStream({ keepAliveMs: c.env.deps.config.signalHeartbeatSeconds * 1000, onCancel: pump.stop, run: pump.run });
    // Where the stream starts: a client that only wants what is new resumes from here next time.
    return sseResponse(stream, { "X-Last-Event-Id": String(hub.lastId) }) as never;
  });
