// Job events in Redis: one list per job ({prefix}:job-events:{id}), RPUSH in order, LRANGE from a
// position, expiring with the job (SERVICE_JOB_TTL, renewed on every append). Any pod reads it.
// What this process appended last is kept in memory with the positions RPUSH reported, so its
// own live watchers read it without a round trip; reading past it always asks Redis (another
// pod may have appended: a status change, a cancel).
import { createClient } from "redis";
import { maskRedisUrl } from "../../../common/kv/redis-store";
import { log } from "../../../common/logger";
import { jsonOf, parseStored, type StoredJobEvent } from "./schema";
import { AppendSignals, DEFAULT_READ_LIMIT, type JobEventStore } from "./store";

const logger = log("job-events");
/** Events of this process's last appends kept per job for its own watchers, for this many jobs (the latest). */
const TAIL_EVENTS = 4096;
const TAIL_JOBS = 64;

export function createRedisJobEventStore(opts: { url: string; keyPrefix: string; ttlSeconds: number }): JobEventStore {
  // Commands fail at once while Redis is away (no offline queue): a job never waits on its log.
  const client = createClient({
    url: opts.url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 5_000, reconnectStrategy: (n) => Math.min(100 * 2 ** n, 3_000) },
  });
  let reported = false;
  let closed = false;
  client.on("error", (err: Error) => {
    if (reported) return;
    reported = true;
    logger.warn(`Redis for job events (REDIS_URL=${maskRedisUrl(opts.url)}): ${err.message}; events are not kept until it is back`);
  });
  client.on("ready", () => (reported = false));
  // A first connection that fails is tried again in the background (the client reconnects by itself after that).
  let retryMs = 1_000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const connect = (): void => {
    client.connect().catch(() => {
      if (closed) return;
      timer = setTimeout(connect, retryMs);
      timer.unref?.();
      retryMs = Math.min(retryMs * 2, 30_000);
    });
  };
  connect();
  const ready = async () => {
    if (!client.isReady) throw new Error(`Redis at REDIS_URL=${maskRedisUrl(opts.url)} is not connected`);
    return client;
  };
  const key = (id: string) => `${opts.keyPrefix}:job-events:${id}`;
  const signals = new AppendSignals();
  const chains = new Map<string, Promise<void>>();
  /** Per job: this process's last appends, contiguous positions (the first is events[0].id). */
  const tails = new Map<string, StoredJobEvent[]>();
  const remember = (id: string, length: number, events: StoredJobEvent["event"][], texts: readonly string[]) => {
    const first = length - events.length + 1;
    let t = tails.get(id);
    const last = t?.[t.length - 1]?.id;
    // Another pod appended in between: what was kept is no longer followed by our next position.
    if (!t || last !== first - 1) t = [];
    tails.delete(id);
    tails.set(id, t);
    if (tails.size > TAIL_JOBS) tails.delete(tails.keys().next().value!);
    for (let i = 0; i < events.length; i++) t.push({ id: first + i, event: events[i]!, json: texts[i]! });
    if (t.length > TAIL_EVENTS) t.splice(0, t.length - TAIL_EVENTS);
  };

  return {
    kind: "redis",
    append(id, events, json) {
      if (events.length === 0) return Promise.resolve();
      const texts = json ?? events.map(jsonOf);
      const prev = chains.get(id) ?? Promise.resolve();
      const next = prev.then(async () => {
        const c = await ready();
        const [length] = await c
          .multi()
          .rPush(key(id), [...texts])
          .expire(key(id), opts.ttlSeconds)
          .exec();
        if (typeof length === "number") remember(id, length, events, texts);
        else tails.delete(id);
      });
      const tail = next.catch(() => {});
      chains.set(id, tail);
      void tail.then(() => {
        if (chains.get(id) === tail) chains.delete(id);
      });
      return next.then(() => signals.emit(id));
    },
    async last(id, count) {
      if (count <= 0) return [];
      const c = await ready();
      const length = await c.lLen(key(id));
      return this.read(id, Math.max(0, length - count), count);
    },
    async read(id, after, limit = DEFAULT_READ_LIMIT): Promise<StoredJobEvent[]> {
      const t = tails.get(id);
      // Inside what this process appended: from memory (no rows to fetch and parse again), then
      // whatever Redis has past it (another pod's append, usually nothing).
      if (t && t.length > 0 && after + 1 >= t[0]!.id && after < t[t.length - 1]!.id) {
        const start = after + 1 - t[0]!.id;
        const mine = t.slice(start, start + limit);
        const end = mine[mine.length - 1]!.id;
        return mine.length >= limit ? mine : mine.concat(await this.read(id, end, limit - mine.length));
      }
      const c = await ready();
      const rows = await c.lRange(key(id), after, after + limit - 1);
      const out: StoredJobEvent[] = [];
      rows.forEach((row, i) => {
        try {
          out.push(parseStored(after + i + 1, row));
        } catch {
          // keeps its position
        }
      });
      return out;
    },
    onAppend: (id, l) => signals.on(id, l),
    sweep: async () => 0,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await Promise.all([...chains.values()]);
      if (client.isOpen) await client.close().catch(() => client.destroy());
    },
  };
}
