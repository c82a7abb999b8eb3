// GET /signal: server-sent events of signals as they are recorded, resumable with Last-Event-ID.
import { createRoute, z } from "@hono/zod-openapi";
import { errorResponse, HttpError } from "../../common/errors";
import { keepOpen, lastEventIdOf, sseResponse, sseStream } from "../../common/http/sse";
import type { RouterApp } from "../app";
import { severityRank, SEVERITIES } from "../signals/signal-files";
import type { SignalEvent } from "../signals/hub";
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
      headers: { "X-Last-Event-Id": { schema: { type: "string" }, description: "the newest event id when the stream opened (0 when none yet): a client resuming can stop reading once it has seen it" } },
      description:
        'text/event-stream. `event: signal`, `id: <n>`, data {marker_id, path, severity, source, session_id, title, content, ts, count, repeat}; repeat is true when an open signal absorbed a duplicate (count went up).',
      content: { "text/event-stream": { schema: z.string() } },
    },
    400: errorResponse("Bad Last-Event-ID"),
    ...authResponses,
  },
});

function parseLastId(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d{1,15}$/.test(v)) throw new HttpError(400, "invalid_request", `Last-Event-ID must be an event id from this stream (a whole number), got ${JSON.stringify(v)}`);
  return Number(v);
}

export const registerSignal = (app: RouterApp) =>
  app.openapi(route, async (c) => {
    const hub = c.env.deps.signals;
    const lastId = parseLastId(lastEventIdOf(c.req.raw));
    const min = c.req.valid("query").min_severity;
    const passes = (e: SignalEvent) => !min || typeof e.data.severity !== "string" || severityRank(e.data.severity) <= severityRank(min);
    // The stream is meant to stay open: no idle timeout for it (the keep-alives guard proxies).
    keepOpen(c.env.server, c.req.raw);
    let stop: (() => void) | undefined;
    const stream = sseStream({
      keepAliveMs: c.env.deps.config.signalHeartbeatSeconds * 1000,
      onCancel: () => stop?.(),
      run: async (sink) => {
        const queue: SignalEvent[] = [];
        let closed = false;
        let wake: (() => void) | undefined;
        stop = () => {
          closed = true;
          wake?.();
        };
        const sub = hub.subscribe(
          lastId,
          (e) => {
            queue.push(e);
            wake?.();
          },
          stop,
        );
        try {
          sink.write(`retry: 3000\n: connected; last event id ${hub.lastId}\n\n`);
          if (sub.gap) sink.event({ event: "gap", data: { last_event_id: lastId, oldest_kept: sub.backlog[0]?.id ?? hub.lastId + 1 } });
          queue.unshift(...sub.backlog);
          while (!closed && !sink.closed) {
            while (queue.length > 0 && !closed) {
              const e = queue.shift()!;
              if (passes(e)) sink.event({ id: e.id, event: e.event, data: e.data });
            }
            if (closed || sink.closed) break;
            await new Promise<void>((resolve) => (wake = resolve));
            wake = undefined;
          }
        } finally {
          sub.unsubscribe();
        }
      },
    });
    // Where the stream starts: a client that only wants what is new resumes from here next time.
    return sseResponse(stream, { "X-Last-Event-Id": String(hub.lastId) }) as never;
  });
