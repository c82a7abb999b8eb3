// Job events in Redis: one list per job ({prefix}:job-events:{id}), RPUSH in order, LRANGE from a
// position, expiring with the job (SERVICE_JOB_TTL, renewed on every append). Any pod reads it.
import { createClient } from "redis";
import { maskRedisUrl } from "../../../common/kv/redis-store";
import { log } from "../../../common/logger";
import { AppendSignals, DEFAULT_READ_LIMIT, type JobEventStore } from "./store";
import type { JobEvent, StoredJobEvent } from "./schema";

const logger = log("job-events");

export function createRedisJobEventStore(opts: { url: string; keyPrefix: string; ttlSeconds: number }): JobEventStore {
  // Commands fail at once while Redis is away (no offline queue): a job never waits on its log.
  const client = createClient({ url: opts.url, disableOfflineQueue: true, socket: { connectTimeout: 5_000, reconnectStrategy: (n) => Math.min(100 * 2 ** n, 3_000) } });
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

  return {
    kind: "redis",
    append(id, events) {
      if (events.length === 0) return Promise.resolve();
      const prev = chains.get(id) ?? Promise.resolve();
      const next = prev.then(async () => {
        const c = await ready();
        await c
          .multi()
          .rPush(key(id), events.map((e) => JSON.stringify(e)))
          .expire(key(id), opts.ttlSeconds)
          .exec();
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
      const c = await ready();
      const rows = await c.lRange(key(id), after, after + limit - 1);
      const out: StoredJobEvent[] = [];
      rows.forEach((row, i) => {
        try {
          out.push({ id: after + i + 1, event: JSON.parse(row) as JobEvent });
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
