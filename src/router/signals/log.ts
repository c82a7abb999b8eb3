// Where signal events are ordered (issue 17, part 6): one log per vault, shared by every router
// process (the API and the MCP listener run as two processes in compose). A process appends to
// the log, which assigns the id; every process follows the log and hands each event, once and
// in id order, to its own subscribers. So a signal raised through either process reaches the
// subscribers of both, ids never collide, and Last-Event-ID means the same event everywhere.
//   - journal-log.ts: the journal file under DATA_DIR, ids assigned under its file lock (no Redis);
//   - redis-log.ts: a Redis Stream when REDIS_URL is set;
//   - memoryLog() below: one process, no persistence (tests, a hub without a journal).

export interface SignalEvent {
  id: number;
  /** SSE event name: "signal". */
  event: string;
  data: Record<string, unknown>;
}

export interface SignalLog {
  readonly kind: string;
  /** The most recent events (up to `count`), oldest first; the last one's id is the log's last id. */
  open(count: number): Promise<SignalEvent[]>;
  /** Appends an event; the log assigns its id. */
  append(event: string, data: Record<string, unknown>): Promise<SignalEvent>;
  /**
   * Calls `onEvents` with every event after `afterId`, oldest first, as the log grows (by any
   * process), until close(). `kick()` asks for a look now (after an append here).
   */
  follow(afterId: number, onEvents: (events: SignalEvent[]) => void): void;
  kick(): void;
  close(): Promise<void>;
}

export function memoryLog(): SignalLog {
  let last = 0;
  let listener: ((events: SignalEvent[]) => void) | undefined;
  return {
    kind: "memory",
    open: async () => [],
    async append(event, data) {
      const e = { id: ++last, event, data };
      listener?.([e]);
      return e;
    },
    follow(afterId, onEvents) {
      last = Math.max(last, afterId);
      listener = onEvents;
    },
    kick() {},
    async close() {
      listener = undefined;
    },
  };
}
