// The job change feed through Redis pub/sub (changes.ts), loaded only when REDIS_URL is set.
import { createClient } from "redis";
import { maskRedisUrl } from "../../common/kv/redis-store";
import { type JobChangeFeed, Listeners, logger } from "./changes";

export function redisJobChangeFeed(opts: { url: string; keyPrefix: string }): JobChangeFeed {
  const channel = `${opts.keyPrefix}:job-changes`;
  const listeners = new Listeners();
  const socket = { connectTimeout: 5_000, reconnectStrategy: (n: number) => Math.min(100 * 2 ** n, 3_000) };
  const pub = createClient({ url: opts.url, disableOfflineQueue: true, socket });
  const sub = createClient({ url: opts.url, socket });
  let reported = false;
  const onError = (err: Error) => {
    if (reported) return;
    reported = true;
    logger.warn(`Redis for job changes (REDIS_URL=${maskRedisUrl(opts.url)}): ${err.message}; watchers hear only this pod's changes until it is back`);
  };
  pub.on("error", onError);
  sub.on("error", onError);
  pub.on("ready", () => (reported = false));
  let closed = false;
  const connect = (c: typeof pub, then?: () => Promise<unknown>) => {
    const attempt = (): void => {
      c.connect()
        .then(then)
        .catch(() => {
          if (!closed) setTimeout(attempt, 1_000).unref?.();
        });
    };
    attempt();
  };
  connect(pub);
  connect(sub, () => sub.subscribe(channel, (id) => listeners.emit(id)));
  return {
    async publish(id) {
      try {
        if (!pub.isReady) throw new Error("not connected");
        await pub.publish(channel, id);
      } catch {
        // Redis away: this pod's watchers still hear of it.
        listeners.emit(id);
      }
    },
    subscribe: (l, onEnd) => listeners.add(l, onEnd),
    endWatches: () => listeners.end(),
    async close() {
      closed = true;
      listeners.end();
      for (const c of [sub, pub]) if (c.isOpen) await c.close().catch(() => c.destroy());
    },
  };
}
