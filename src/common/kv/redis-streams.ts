// Redis Streams beside the key-value store (same REDIS_URL and key prefix): XADD with an exact
// MAXLEN cap and a TTL in one MULTI, XRANGE after an entry id, and XREAD BLOCK for a follower.
// A blocking XREAD holds its connection, so every follower gets a connection of its own
// (client.duplicate()), closed when it stops following; writes and ranges share one.
import { createClient } from "redis";
import { log } from "../logger.ts";
import { maskRedisUrl } from "./redis-store.ts";
import { listMax, ttlMs } from "./store.ts";

export interface StreamEntry {
  /** The entry id Redis gave it: `<ms>-<n>`. */
  id: string;
  fields: Record<string, string>;
}

export interface StreamFollower {
  /** Entries after `afterId` ("0": from the start), waiting up to blockMs for one; [] on timeout. */
  read(key: string, afterId: string, blockMs: number): Promise<StreamEntry[]>;
  close(): Promise<void>;
}

export interface RedisStreams {
  /** XADD key MAXLEN = max * fields, then PEXPIRE when ttlSeconds is given; the new entry's id. */
  add(key: string, fields: Record<string, string>, opts?: { max?: number; ttlSeconds?: number }): Promise<string>;
  /** Entries after `afterId` (exclusive; "0" or none: all), oldest first; at most `count`. */
  range(key: string, afterId?: string, count?: number): Promise<StreamEntry[]>;
  /** Milliseconds the key has left: -1 without expiry, -2 when there is no such key (PTTL). */
  pttl(key: string): Promise<number>;
  follower(): Promise<StreamFollower>;
  close(): Promise<void>;
}

const logger = log("redis");

/** Connects; rejects naming REDIS_URL (masked) when Redis is not there. */
export async function createRedisStreams(opts: { url: string; keyPrefix: string; connectTimeoutMs?: number }): Promise<RedisStreams> {
  const where = `REDIS_URL=${maskRedisUrl(opts.url)}`;
  let ready = false;
  const client = createClient({
    url: opts.url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: opts.connectTimeoutMs ?? 5_000,
      reconnectStrategy: (retries, cause) => (!ready && retries >= 2 ? new Error(cause.message) : Math.min(100 * 2 ** retries, 3_000)),
    },
  });
  client.on("error", (err: Error) => ready && logger.debug(`Redis streams (${where}): ${err.message}`));
  client.on("ready", () => (ready = true));
  try {
    await client.connect();
  } catch (err) {
    client.destroy();
    throw new Error(`cannot connect to Redis at ${where}: ${(err as Error).message}`, { cause: err });
  }
  const full = (key: string) => `${opts.keyPrefix}:${key}`;
  const entries = (raw: Array<{ id: string; message: Record<string, string> }> | null | undefined): StreamEntry[] =>
    (raw ?? []).map((e) => ({ id: e.id, fields: { ...e.message } }));
  /** Open follower connections, each able to be torn down at close. */
  const followers = new Set<{ isOpen: boolean; destroy(): void }>();

  return {
    async add(key, fields, o) {
      const max = listMax(o?.max);
      const ms = ttlMs(o?.ttlSeconds);
      const tx = client
        .multi()
        .xAdd(full(key), "*", fields, max === undefined ? undefined : { TRIM: { strategy: "MAXLEN", strategyModifier: "=", threshold: max } });
      if (ms !== undefined) tx.pExpire(full(key), ms);
      const [id] = (await tx.exec()) as unknown as [string];
      return String(id);
    },
    async range(key, afterId = "0", count) {
      return entries(await client.xRange(full(key), afterId === "0" ? "-" : `(${afterId}`, "+", count === undefined ? undefined : { COUNT: count }));
    },
    pttl: (key) => client.pTTL(full(key)),
    async follower() {
      // Named, so CLIENT LIST shows what holds the connection.
      const own = client.duplicate({ name: `${opts.keyPrefix.replace(/\s/g, "_")}:stream-follower` });
      own.on("error", (err: Error) => logger.debug(`Redis stream follower (${where}): ${err.message}`));
      await own.connect();
      followers.add(own);
      return {
        async read(key, afterId, blockMs) {
          const reply = (await own.xRead({ key: full(key), id: afterId }, { BLOCK: blockMs, COUNT: 500 })) as unknown as Array<{
            messages: Array<{ id: string; message: Record<string, string> }>;
          }> | null;
          return entries(reply?.[0]?.messages);
        },
        async close() {
          followers.delete(own);
          // destroy, not close: a blocked XREAD would otherwise hold the close until it times out.
          if (own.isOpen) own.destroy();
        },
      };
    },
    async close() {
      for (const f of followers) if (f.isOpen) f.destroy();
      followers.clear();
      if (client.isOpen) await client.close();
    },
  };
}
