// KeyValueStore on Redis (node-redis v6). Every key lives under `${keyPrefix}:` so several
// deployments, or test runs, can share one Redis without seeing each other.
import { createClient } from "redis";
import { log } from "../logger.ts";
import { maskRedisUrl } from "./redis-url.ts";
import { type KeyValueStore, listMax, ttlMs } from "./store.ts";

export { maskRedisUrl };

export interface RedisStoreOptions {
  url: string;
  keyPrefix: string;
  /** Per connection attempt (default 5 s): a silently dropped SYN must not hang start-up. */
  connectTimeoutMs?: number;
}

const logger = log("redis");

// A couple of quick retries absorb a blip at start-up; beyond that, say so rather than hang.
const START_RETRIES = 2;
const MAX_RECONNECT_DELAY_MS = 3_000;

/** Connects, then resolves to the store; rejects naming REDIS_URL (masked) when Redis is not there. */
export async function createRedisStore(opts: RedisStoreOptions): Promise<KeyValueStore> {
  const where = `REDIS_URL=${maskRedisUrl(opts.url)}`;
  let everReady = false;
  let outageReported = false;

  const client = createClient({
    url: opts.url,
    // Fail commands while disconnected instead of queueing them: a request should get an error
    // it can report, not hang until Redis returns.
    disableOfflineQueue: true,
    socket: {
      connectTimeout: opts.connectTimeoutMs ?? 5_000,
      reconnectStrategy: (retries, cause) => {
        if (!everReady && retries >= START_RETRIES) return new Error(cause.message);
        return Math.min(100 * 2 ** retries, MAX_RECONNECT_DELAY_MS);
      },
    },
  });

  // Without a listener, an 'error' event would crash the process. Log an outage once, not per retry.
  client.on("error", (err: Error) => {
    if (!everReady) return; // connect() below reports start-up failures itself
    if (outageReported) return logger.debug(`Redis (${where}): ${err.message}`);
    outageReported = true;
    logger.warn(`Redis (${where}) connection lost: ${err.message}; reconnecting`);
  });
  client.on("ready", () => {
    if (outageReported) logger.info(`Redis (${where}) reconnected`);
    everReady = true;
    outageReported = false;
  });

  try {
    await client.connect();
  } catch (err) {
    client.destroy();
    const reason = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    throw new Error(`cannot connect to Redis at ${where}: ${reason}. Start Redis or unset REDIS_URL.`, { cause: err });
  }

  const full = (key: string) => `${opts.keyPrefix}:${key}`;
  const expiration = (ttlSeconds: number | undefined) => {
    const ms = ttlMs(ttlSeconds);
    if (ms === undefined) return undefined;
    return ms % 1000 === 0 ? ({ type: "EX", value: ms / 1000 } as const) : ({ type: "PX", value: ms } as const);
  };

  return {
    kind: "redis",
    get: (key) => client.get(full(key)),
    async set(key, value, o) {
      await client.set(full(key), value, { expiration: expiration(o?.ttlSeconds) });
    },
    async setIfAbsent(key, value, o) {
      const reply = await client.set(full(key), value, { expiration: expiration(o?.ttlSeconds), condition: "NX" });
      return reply === "OK";
    },
    async delete(key) {
      return (await client.del(full(key))) > 0;
    },
    async keys(prefix) {
      const start = full(prefix);
      const strip = full("").length;
      const found = new Set<string>(); // SCAN may return a key twice while Redis rehashes
      for await (const batch of client.scanIterator({ MATCH: `${escapeGlob(start)}*`, COUNT: 500 })) {
        for (const key of batch) found.add(key.slice(strip));
      }
      return [...found];
    },
    async listPush(key, value, o) {
      const max = listMax(o?.max);
      const ms = ttlMs(o?.ttlSeconds);
      const tx = client.multi().rPush(full(key), value);
      if (max !== undefined) tx.lTrim(full(key), -max, -1);
      if (ms !== undefined) tx.pExpire(full(key), ms);
      await tx.exec();
    },
    listRange: (key) => client.lRange(full(key), 0, -1),
    async ping() {
      if (!client.isReady) return false;
      const timeout = new Promise<false>((r) => setTimeout(r, 1_000, false).unref());
      return Promise.race([
        client.ping().then(
          (reply) => reply === "PONG",
          () => false,
        ),
        timeout,
      ]);
    },
    async close() {
      if (client.isOpen) await client.close();
    },
  };
}

/** SCAN's MATCH is a glob: a prefix containing `*?[]\` must match itself only. */
const escapeGlob = (s: string) => s.replace(/[*?[\]\\]/g, "\\$&");
