// The pump behind GET /signal: replays what a client missed since its Last-Event-ID (a `gap`
// event first when the ring no longer holds it all), then passes on live signals in id order,
// the ones below min_severity left out, until the client goes or the hub closes.
import type { SseSink } from "../../common/http/sse";
import type { SignalEvent, SignalHub } from "./hub";
import { severityRank } from "./signal-files";

export interface SignalPumpOptions {
  /** The client's Last-Event-ID: events after it are replayed first. */
  lastId?: number;
  /** Only signals at least this severe. */
  minSeverity?: string;
}

export interface SignalPump {
  run(sink: SseSink): Promise<void>;
  /** Ends the pump (the client went away). */
  stop(): void;
}

export function signalPump(hub: SignalHub, opts: SignalPumpOptions): SignalPump {
  const { lastId, minSeverity: min } = opts;
  const passes = (e: SignalEvent) => !min || typeof e.data.severity !== "string" || severityRank(e.data.severity) <= severityRank(min);
  let stop: (() => void) | undefined;
  return {
    stop: () => stop?.(),
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
  };
}
