// A GET /signal subscriber over a real socket: the events and comments it received, parsed
// with eventsource-parser, and a deadline-bound wait.
import { createParser } from "eventsource-parser";
import { ROUTER_TEST_TOKEN as TOKEN } from "./router-client";
import { until } from "./until";

type Json = Record<string, any>;

export interface Stream {
  status: number;
  events: Array<{ id?: string; event?: string; data: Json }>;
  comments: string[];
  waitFor(pred: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): void;
}

export async function subscribe(base: string, opts: { lastEventId?: string; query?: string } = {}): Promise<Stream> {
  const ctrl = new AbortController();
  const res = await fetch(`${base}/signal${opts.query ?? ""}`, {
    headers: { authorization: `Bearer ${TOKEN}`, ...(opts.lastEventId ? { "last-event-id": opts.lastEventId } : {}) },
    signal: ctrl.signal,
  });
  const stream: Stream = {
    status: res.status,
    events: [],
    comments: [],
    async waitFor(pred, what, timeoutMs = 5_000) {
      await until(pred, { ms: timeoutMs, what: () => `${what}; got ${JSON.stringify(stream.events)}`, every: 5 });
    },
    close: () => ctrl.abort(),
  };
  if (res.status !== 200 || !res.body) return stream;
  const parser = createParser({
    onEvent: (e) => stream.events.push({ id: e.id, event: e.event, data: JSON.parse(e.data) }),
    onComment: (c) => stream.comments.push(c.trim()),
  });
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body!) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // aborted
    }
  })();
  return stream;
}
