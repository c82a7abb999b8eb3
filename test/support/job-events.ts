// Reads GET /jobs/{id}/events the way a client does (fetch + an SSE parser), for the job-event suites.
import { createParser } from "eventsource-parser";

export interface SseEvent {
  id: number;
  type: string;
  data: Record<string, unknown>;
}

/** Every event until the server ends the stream (or `stopAfter` says stop). */
export async function readJobEvents(
  url: string,
  headers: Record<string, string>,
  opts: { lastEventId?: number; stopAfter?: (e: SseEvent, all: SseEvent[]) => boolean; timeoutMs?: number } = {},
): Promise<{ status: number; events: SseEvent[]; contentType: string | null }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), opts.timeoutMs ?? 20_000);
  const res = await fetch(url, {
    headers: { ...headers, accept: "text/event-stream", ...(opts.lastEventId !== undefined && { "last-event-id": String(opts.lastEventId) }) },
    signal: abort.signal,
  });
  const events: SseEvent[] = [];
  if (res.status !== 200 || !res.body) {
    clearTimeout(timer);
    return { status: res.status, events, contentType: res.headers.get("content-type") };
  }
  let stop = false;
  const parser = createParser({
    onEvent: (m) => {
      if (stop) return;
      const e = { id: Number(m.id), type: m.event ?? "message", data: JSON.parse(m.data) };
      events.push(e);
      if (opts.stopAfter?.(e, events)) stop = true;
    },
  });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (stop) break;
    }
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return { status: res.status, events, contentType: res.headers.get("content-type") };
}
