// The signal log on Redis (REDIS_URL set): a Redis Stream `{REDIS_KEY_PREFIX}:signals`, trimmed
// to about twice the kept events. A script takes the next id from `{prefix}:signals:seq` and
// adds the entry as `<id>-1` in one step, so ids are unique and in order across processes; each
// process follows the stream with a blocking XREAD on its own connection.
import { createClient } from "redis";
import { log } from "../../common/logger";
import type { SignalEvent, SignalLog } from "./log";

const logger = log("signals");

// ARGV[3]: the last id this process saw, so a Redis that restarted empty does not hand out ids
// the subscribers already have.
const APPEND = `
local seen = tonumber(ARGV[3])
if tonumber(redis.call('GET', KEYS[1]) or '0') < seen then redis.call('SET', KEYS[1], seen) end
local id = redis.call('INCR', KEYS[1])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], id .. '-1', 'e', ARGV[1])
return id`;

type Entry = { id: string; message: Record<string, string> };

function toEvent(entry: Entry): SignalEvent | null {
  try {
    const body = JSON.parse(entry.message.e ?? "") as { event: string; data: Record<string, unknown> };
    return { id: Number(entry.id.split("-")[0]), event: body.event, data: body.data };
  } catch {
    return null;
  }
}

/** Connects (rejects when Redis is not there) and resolves to the log. */
export async function redisLog(opts: { url: string; keyPrefix: string; keep: number }): Promise<SignalLog> {
  const client = createClient({
    url: opts.url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 5_000, reconnectStrategy: (n) => Math.min(100 * 2 ** n, 2_000) },
  });
  client.on("error", (err: Error) => logger.debug(`signal stream: ${err.message}`));
  await client.connect();
  const stream = `${opts.keyPrefix}:signals`;
  const seq = `${opts.keyPrefix}:signals:seq`;
  let reader: typeof client | undefined;
  let closed = false;
  let loop: Promise<void> | undefined;
  let seen = 0;

  return {
    kind: "redis",
    async open(count) {
      const entries = (await client.xRevRange(stream, "+", "-", { COUNT: count })) as Entry[];
      const events = entries
        .map(toEvent)
        .filter((e): e is SignalEvent => e !== null)
        .reverse();
      seen = Math.max(seen, events.at(-1)?.id ?? 0);
      return events;
    },
    async append(event, data) {
      const id = Number(await client.eval(APPEND, { keys: [seq, stream], arguments: [JSON.stringify({ event, data }), String(opts.keep * 2), String(seen)] }));
      seen = Math.max(seen, id);
      return { id, event, data };
    },
    follow(afterId, onEvents) {
      reader = client.duplicate({ disableOfflineQueue: false });
      reader.on("error", () => {});
      const r = reader;
      loop = (async () => {
        let last = `${afterId}-1`;
        await r.connect().catch(() => {});
        while (!closed) {
          try {
            const got = (await r.xRead({ key: stream, id: last }, { BLOCK: 2_000, COUNT: 500 })) as Array<{ messages: Entry[] }> | null;
            const entries = got?.flatMap((s) => s.messages) ?? [];
            if (entries.length === 0) continue;
            last = entries.at(-1)!.id;
            const events = entries.map(toEvent).filter((e): e is SignalEvent => e !== null);
            if (events.length === 0) continue;
            seen = Math.max(seen, events.at(-1)!.id);
            onEvents(events);
          } catch (err) {
            if (closed) return;
            logger.debug(`reading the signal stream: ${(err as Error).message}`);
            await Bun.sleep(500);
          }
        }
      })();
    },
    kick() {},
    async close() {
      closed = true;
      reader?.destroy();
      await loop;
      client.destroy();
    },
  };
}
