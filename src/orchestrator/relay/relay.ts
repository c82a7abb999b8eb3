// The non-streaming event relay (spec: Events, "Non-streaming event relay"; issue 16 part 4):
// the events of a non-streaming turn are appended, as they happen, to a stream keyed by the
// turn's correlation id — a Redis Stream when REDIS_URL is set (redis-log.ts), else a JSONL file
// (file-log.ts) — so any process can follow the turn: GET /v1/relay/{correlation_id}. At most
// 2,000 entries are kept; the stream expires an hour after its done sentinel (and, should the
// turn never end, an hour after its job timeout).
//
// Cursors (SSE ids, Last-Event-ID): the Redis entry id (`<ms>-<n>`) on Redis, the entry's
// sequence number (1, 2, 3…, kept in every entry) on files; a sequence number is accepted on
// Redis too.

import { DomainError } from "../../common/domain-error";
import { log } from "../../common/logger";

const logger = log("relay");

export const RELAY_MAX_ENTRIES = 2000;
export const RELAY_DONE_TTL_SECONDS = 3600;

export interface RelayEntry {
  /** The cursor a reader resumes after. */
  id: string;
  /** 1, 2, 3… per correlation id. */
  seq: number;
  event: string;
  data: unknown;
}

/** Where the relay keeps its streams: Redis Streams or JSONL files. */
export interface RelayLog {
  readonly kind: "redis" | "file";
  /** Appends; the TTL (seconds) is set anew. */
  append(correlationId: string, entry: Omit<RelayEntry, "id">, ttlSeconds: number): Promise<void>;
  /** The kept entries after the cursor (undefined: all), and the oldest kept one; known false when there is no stream. */
  read(correlationId: string, after?: Cursor): Promise<{ known: boolean; entries: RelayEntry[]; oldest?: RelayEntry }>;
  /** A reader that waits for what comes after the cursor (XREAD BLOCK, or a poll on files). */
  follow(correlationId: string): Promise<{ next(after: Cursor | undefined, waitMs: number): Promise<RelayEntry[]>; close(): Promise<void> }>;
  /** Milliseconds the stream has left (-1 none set, -2 no stream). */
  ttlMs(correlationId: string): Promise<number>;
  close(): Promise<void>;
}

/** A resume point: an entry id (Redis) or a sequence number. */
export type Cursor = { kind: "id"; id: string } | { kind: "seq"; seq: number };

/** Last-Event-ID → cursor; undefined when it is not one. */
export function parseCursor(s: string | undefined): Cursor | undefined {
  if (s === undefined) return undefined;
  if (/^\d{1,9}$/.test(s)) return { kind: "seq", seq: Number(s) };
  if (/^\d{1,20}-\d{1,20}$/.test(s)) return { kind: "id", id: s };
  return undefined;
}

export const CURSOR_PATTERN = /^(\d{1,9}|\d{1,20}-\d{1,20})$/;

/** The relay's truncation notice: what a reader missed because the cap dropped it. */
export interface Truncation {
  max_entries: number;
  /** The oldest kept entry's sequence number. */
  first_seq: number;
  /** Entries dropped between the reader's cursor and the oldest kept one (when the cursor says). */
  missed?: number;
}

/** Whether the reader missed entries to the cap: its cursor is older than the oldest kept entry. */
export function truncation(oldest: RelayEntry | undefined, after: Cursor | undefined): Truncation | undefined {
  if (!oldest || oldest.seq <= 1) return undefined;
  if (after?.kind === "id") {
    // An entry id older than the oldest kept one: some were dropped, how many the id cannot say.
    return compareIds(after.id, oldest.id) < 0 ? { max_entries: RELAY_MAX_ENTRIES, first_seq: oldest.seq } : undefined;
  }
  const seen = after?.seq ?? 0;
  return oldest.seq > seen + 1 ? { max_entries: RELAY_MAX_ENTRIES, first_seq: oldest.seq, missed: oldest.seq - seen - 1 } : undefined;
}

function compareIds(a: string, b: string): number {
  const [am, an] = a.split("-").map(BigInt) as [bigint, bigint];
  const [bm, bn] = b.split("-").map(BigInt) as [bigint, bigint];
  return am !== bm ? (am < bm ? -1 : 1) : an === bn ? 0 : an < bn ? -1 : 1;
}

export class EventRelay {
  constructor(
    readonly log: RelayLog,
    /** TTL while the turn runs (seconds): the job timeout plus the hour after done. */
    private readonly liveTtlSeconds: number,
  ) {}

  /** A writer for one turn: append in order, then done (the sentinel, and the one-hour expiry). */
  writer(correlationId: string) {
    let seq = 0;
    let chain = Promise.resolve();
    const push = (event: string, data: unknown, ttlSeconds: number) => {
      const entry = { seq: ++seq, event, data };
      // In order; one failed append (a Redis blip) does not sink the ones after it.
      const appended = chain.then(() => this.log.append(correlationId, entry, ttlSeconds));
      chain = appended.catch(() => {});
      return appended;
    };
    let warned = false;
    return {
      // The turn goes on without its relay: said once per turn, not per event.
      append: (event: string, data: unknown) =>
        void push(event, data, this.liveTtlSeconds).catch((err) => {
          if (!warned) logger.warn(`relay ${correlationId}: events not kept (${(err as Error).message}); the turn goes on`);
          warned = true;
        }),
      done: (data: unknown = {}) => push("done", data, RELAY_DONE_TTL_SECONDS),
    };
  }

  read(correlationId: string, after?: Cursor) {
    return this.log.read(correlationId, after);
  }

  follow(correlationId: string) {
    return this.log.follow(correlationId);
  }

  close() {
    return this.log.close();
  }

  /**
   * What a reader of one turn receives: the kept entries after `after`, then new ones as they
   * are appended, until the done sentinel or the stream expires; a `truncated` notice first when
   * the cap dropped entries the reader had not seen (and again should the writer outrun it).
   * An unknown turn is not_found, and an entry-id cursor on files invalid, before anything is
   * yielded, so the caller can refuse before it starts streaming. `close()` frees the follower
   * (a blocked XREAD holds a connection) at once, e.g. when the reader goes away.
   */
  async stream(correlationId: string, after: Cursor | undefined, waitMs = FOLLOW_WAIT_MS): Promise<RelayStream> {
    if (after?.kind === "id" && this.log.kind === "file") {
      throw new DomainError(
        "invalid",
        "invalid_request",
        `Last-Event-ID ${after.id} is a Redis stream entry id, but this service keeps the relay in files (no REDIS_URL): resume with the sequence number it sent as the event id`,
      );
    }
    const first = await this.read(correlationId, after);
    if (!first.known)
      throw new DomainError("not_found", "relay_not_found", `no turn with correlation id ${correlationId} (none ran, or it ended over an hour ago)`);
    const relay = this;
    let follower: Awaited<ReturnType<RelayLog["follow"]>> | undefined;
    let closed = false;
    async function* events(): AsyncGenerator<RelayItem> {
      const cut = truncation(first.oldest, after);
      if (cut) yield { event: "truncated", data: cut };
      let batch = first.entries;
      let seen: number | undefined;
      try {
        for (;;) {
          // A follower the writer outran by more than the cap: the gap is said, as at the start.
          const head = batch[0];
          if (seen !== undefined && head && head.seq > seen + 1) {
            yield { event: "truncated", data: { max_entries: RELAY_MAX_ENTRIES, first_seq: head.seq, missed: head.seq - seen - 1 } };
          }
          for (const e of batch) {
            yield { id: e.id, event: e.event, data: e.data };
            after = parseCursor(e.id);
            seen = e.seq;
            if (e.event === "done") return;
          }
          if (closed) return;
          follower ??= await relay.follow(correlationId);
          try {
            batch = await follower.next(after, waitMs);
          } catch (err) {
            if (closed) return; // the reader left and its follower was closed under the wait
            throw err;
          }
          if (batch.length === 0 && !(await relay.read(correlationId, after)).known) return; // expired meanwhile
        }
      } finally {
        await follower?.close();
      }
    }
    return {
      events: events(),
      close: async () => {
        closed = true;
        await follower?.close().catch(() => {});
      },
    };
  }
}

/** One wait of a follower; between two, it notices a reader gone or a stream expired. */
const FOLLOW_WAIT_MS = 5_000;

/** One event for a reader: an entry (with its cursor as `id`) or a `truncated` notice. */
export interface RelayItem {
  id?: string;
  event: string;
  data: unknown;
}

export interface RelayStream {
  events: AsyncIterable<RelayItem>;
  close(): Promise<void>;
}
