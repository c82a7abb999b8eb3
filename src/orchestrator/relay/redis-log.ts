// The relay on Redis Streams: `relay:<correlation id>`, one XADD per event (fields seq, event,
// data) with an exact MAXLEN of 2,000 and the TTL in the same MULTI; a follower blocks in XREAD
// on a connection of its own, so a reader attached to any pod sees the turn live.
import type { RedisStreams, StreamEntry } from "../../common/kv/redis-streams";
import { type Cursor, RELAY_MAX_ENTRIES, type RelayEntry, type RelayLog } from "./relay";

const key = (correlationId: string) => `relay:${correlationId}`;

function toEntry(e: StreamEntry): RelayEntry | undefined {
  const seq = Number(e.fields.seq);
  if (!Number.isInteger(seq) || e.fields.event === undefined) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(e.fields.data ?? "null");
  } catch {
    return undefined;
  }
  return { id: e.id, seq, event: e.fields.event, data };
}

const afterSeq = (entries: RelayEntry[], after: Cursor | undefined) => (after?.kind === "seq" ? entries.filter((e) => e.seq > after.seq) : entries);

export function redisRelayLog(streams: RedisStreams): RelayLog {
  const range = async (correlationId: string, after: Cursor | undefined) =>
    afterSeq(
      (await streams.range(key(correlationId), after?.kind === "id" ? after.id : "0")).flatMap((e) => toEntry(e) ?? []),
      after,
    );
  return {
    kind: "redis",
    async append(correlationId, entry, ttlSeconds) {
      await streams.add(
        key(correlationId),
        { seq: String(entry.seq), event: entry.event, data: JSON.stringify(entry.data ?? null) },
        { max: RELAY_MAX_ENTRIES, ttlSeconds },
      );
    },
    async read(correlationId, after) {
      const entries = await range(correlationId, after);
      const oldest = (await streams.range(key(correlationId), "0", 1)).flatMap((e) => toEntry(e) ?? [])[0];
      return { known: oldest !== undefined, entries, oldest };
    },
    async follow(correlationId) {
      const follower = await streams.follower();
      return {
        async next(after, waitMs) {
          // A sequence-number cursor has no place in XREAD: turn it into the entry id it follows.
          let from = after?.kind === "id" ? after.id : "0";
          if (after?.kind === "seq") {
            const kept = await range(correlationId, undefined);
            const later = kept.filter((e) => e.seq > after.seq);
            if (later.length > 0) return later;
            from = kept.at(-1)?.id ?? "0";
          }
          return afterSeq(
            (await follower.read(key(correlationId), from, Math.max(1, waitMs))).flatMap((e) => toEntry(e) ?? []),
            after,
          );
        },
        close: () => follower.close(),
      };
    },
    ttlMs: (correlationId) => streams.pttl(key(correlationId)),
    close: () => streams.close(),
  };
}
