// A Redis KeyValueStore that a Redis outage at start-up does not stop: the service starts on its
// file fallback and keeps trying to connect in the background (issue 4: "nothing is lost when
// Redis is down"). Until the first connection every operation fails fast, which the orchestrator's
// merged job store answers by using the files. Once connected, the Redis client reconnects by itself.

import { log } from "../logger";
import { createRedisStore, maskRedisUrl, type RedisStoreOptions } from "./redis-store";
import type { KeyValueStore } from "./store";

const logger = log("redis");

export interface LazyRedisOptions extends RedisStoreOptions {
  /** First retry after this long, doubling up to maxRetryMs (default 1 s → 30 s). */
  retryMs?: number;
  maxRetryMs?: number;
}

class RedisNotConnectedError extends Error {
  constructor(url: string) {
    super(`Redis at REDIS_URL=${maskRedisUrl(url)} is not connected`);
    this.name = "RedisNotConnectedError";
  }
}

/** Resolves once the first attempt has succeeded or failed; never rejects. */
export async function connectRedisLazily(opts: LazyRedisOptions): Promise<KeyValueStore> {
  let store: KeyValueStore | null = null;
  let closed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wait = opts.retryMs ?? 1_000;
  const maxWait = opts.maxRetryMs ?? 30_000;

  const attempt = async (first: boolean): Promise<void> => {
    try {
      const connected = await createRedisStore(opts);
      if (closed) return void (await connected.close());
      store = connected;
      if (!first) logger.info(`connected to Redis at REDIS_URL=${maskRedisUrl(opts.url)}`);
    } catch (err) {
      if (closed) return;
      if (first) {
        logger.warn(`${(err as Error).message} Starting on the file fallback; retrying in the background.`);
      } else {
        logger.debug(`Redis still unavailable: ${(err as Error).message}`);
      }
      timer = setTimeout(() => void attempt(false), wait);
      timer.unref?.();
      wait = Math.min(wait * 2, maxWait);
    }
  };
  await attempt(true);

  const live = (): KeyValueStore => {
    if (store === null) throw new RedisNotConnectedError(opts.url);
    return store;
  };
  return {
    kind: "redis",
    get: async (key) => live().get(key),
    set: async (key, value, o) => live().set(key, value, o),
    setIfAbsent: async (key, value, o) => live().setIfAbsent(key, value, o),
    delete: async (key) => live().delete(key),
    keys: async (prefix) => live().keys(prefix),
    listPush: async (key, value, o) => live().listPush(key, value, o),
    listRange: async (key) => live().listRange(key),
    ping: async () => (store === null ? false : store.ping()),
    async close() {
      closed = true;
      clearTimeout(timer);
      await store?.close();
    },
  };
}
