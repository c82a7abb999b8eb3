// GET /jobs/{job_id}/events: the job's events as server-sent events (issue 18, part 1), resumable
// with Last-Event-ID; a finished job's whole log is replayed, then the stream ends.
import { createRoute, z } from "@hono/zod-openapi";
import { errorResponse, HttpError } from "../../common/errors";
import { keepOpen } from "../../common/http/edge";
import { eventIdOf, sseResponse, sseStream } from "../../common/http/sse";
import type { OrchestratorApp } from "../app-types";
import { followJobEvents, type StoredJobEvent } from "../jobs/events";
import { JobListQuery } from "../jobs/schema";
import { watchJobs } from "../jobs/watch";
import { authResponses } from "./schemas";

const route = createRoute({
  method: "get",
  path: "/jobs/{job_id}/events",
  operationId: "streamJobEvents",
  tags: ["jobs"],
  summary: "Watch a job (SSE)",
  description:
    "The job's events from the start (or after Last-Event-ID / ?last_event_id=), then live until the job has finished: " +
    "`status` {status, error}, `text` {text, final}, `thinking` {text}, `tool_use` {tool_use_id, name, input}, `tool_result` {tool_use_id, content, is_error}, " +
    "`usage` {usage, total_cost_usd, num_turns, duration_ms}, `error` {code, message}, and `cut` when the log reached its size bound " +
    "(8 MiB; later text, thinking and tool events are not kept). Each event has an id, its position in the log; the stream ends after the final status. " +
    "A `: keep-alive` comment is sent every 15 s of silence. The log lives with the job (a JSONL file beside it, or Redis with its TTL).",
  security: [{ bearer: [] }],
  request: {
    params: z.object({ job_id: z.string().openapi({ param: { name: "job_id", in: "path" } }) }),
    headers: z.object({ "last-event-id": z.string().optional() }),
    query: z.object({
      last_event_id: z.string().optional().openapi({ description: "Same as the Last-Event-ID header (for clients that cannot set headers)" }),
    }),
  },
  responses: {
    200: { description: "text/event-stream: `event: <type>`, `id: <n>`, data = the event as JSON", content: { "text/event-stream": { schema: z.string() } } },
    400: errorResponse("Last-Event-ID is not an event id (a whole number)"),
    ...authResponses,
    404: errorResponse("No such job (job_not_found)"),
    503: errorResponse("This service keeps no job events"),
  },
});

const watchRoute = createRoute({
  method: "get",
  path: "/jobs/events",
  operationId: "watchJobs",
  tags: ["jobs"],
  summary: "Watch the job list (SSE)",
  description:
    "The job list as a live stream, the way a Kubernetes list-watch or BullMQ's QueueEvents is used: `event: job` with each job of the list " +
    "as it is now (GET /jobs's filters, limit and order), `event: synced` {count}, then `event: job` with the whole record each time a job's " +
    "status changes (queued, running, finished, cancelled), on any pod sharing the queue (Redis), filtered by status and since. It stays open " +
    "(a `: keep-alive` comment every 15 s of silence) and keeps no history: a client that reconnects gets the list again.",
  security: [{ bearer: [] }],
  request: { query: JobListQuery },
  responses: {
    200: {
      description: "text/event-stream: `event: job` (data = the job) and `event: synced` (data = {count})",
      content: { "text/event-stream": { schema: z.string() } },
    },
    400: errorResponse("limit outside 1–1000, an unknown status or order, or since not an ISO 8601 date-time"),
    ...authResponses,
    503: errorResponse("This service publishes no job changes (no_job_changes)"),
  },
});

// A batch of events as SSE text, one string: each event's JSON as the log keeps it (made once, by
// the recorder; JSON text holds no line break, so it is one data line); the type is one of the
// schema's names.
function frames(batch: StoredJobEvent[]): string {
  let text = "";
  for (const e of batch) text += `event: ${e.event.type}\nid: ${e.id}\ndata: ${e.json}\n\n`;
  return text;
}

/** GET /jobs/events; registered before GET /jobs/{job_id} (a job id is a UUID, never "events"). */
export function registerJobWatch(app: OrchestratorApp): void {
  app.openapi(watchRoute, async (c) => {
    const { jobs, jobChanges } = c.env.deps;
    if (!jobChanges) throw new HttpError(503, "no_job_changes", "this service publishes no job changes");
    const { limit, status, since, order } = c.req.valid("query");
    keepOpen(c);
    const abort = new AbortController();
    const stream = sseStream({
      onCancel: () => abort.abort(),
      run: async (sink) => {
        sink.write("retry: 3000\n\n");
        for await (const e of watchJobs({ jobs, changes: jobChanges, query: { limit, status, since, order }, signal: abort.signal })) {
          if (sink.closed) break;
          sink.event(e.type === "job" ? { event: "job", data: e.job } : { event: "synced", data: { count: e.count } });
        }
      },
    });
    return sseResponse(stream) as never;
  });
}

export function registerJobEvents(app: OrchestratorApp): void {
  app.openapi(route, async (c) => {
    const { jobs, jobEvents } = c.env.deps;
    if (!jobEvents) throw new HttpError(503, "no_job_events", "this service keeps no job events");
    const id = c.req.valid("param").job_id;
    const after = eventIdOf(c.req.valid("header")["last-event-id"] ?? c.req.valid("query").last_event_id) ?? 0;
    await jobs.get(id); // 404 before the stream opens
    keepOpen(c);
    // The shared SSE helper keeps the connection alive while the agent is silent.
    const abort = new AbortController();
    const stream = sseStream({
      onCancel: () => abort.abort(),
      run: async (sink) => {
        sink.write("retry: 3000\n\n");
        const events = followJobEvents({ store: jobEvents, jobId: id, after, signal: abort.signal, getJob: () => jobs.get(id).catch(() => null) });
        // One write per batch: a fast agent's burst goes out as one chunk.
        for await (const batch of events) {
          if (sink.closed) break;
          sink.write(frames(batch));
        }
      },
    });
    return sseResponse(stream) as never;
  });
}
