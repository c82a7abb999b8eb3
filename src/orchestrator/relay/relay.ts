// The non-streaming event relay (spec: Events, "Non-streaming event relay"; issue 16 part 4):
// the events of a non-streaming turn are appended, as they happen, to a capped list keyed by the
// turn's correlation UUID — in Redis when REDIS_URL is set, else in files (the key-value store's
// two engines) — so another process can follow the turn: GET /v1/relay/{correlation_id}. At most
// 2,000 entries are kept; the list expires an hour after its done sentinel (and, should the
// turn never end, an hour after its last event past the job timeout).
import { DomainError } from "../../common/domain-error";
import type { KeyValueStore } from "../../common/kv/store";

export const RELAY_MAX_ENTRIES = 2000;
export const RELAY_DONE_TTL_SECONDS = 3600;
/** How often a follower looks for new entries. */
const POLL_MS = 100;

export interface RelayEntry {
  /** 1, 2, 3… per correlation id: the SSE event id a reader resumes from. */
  seq: number;
  event: string;
  data: unknown;
}

const key = (correlationId: string) => `relay:${correlationId}`;

export class EventRelay {
  constructor(
    private readonly kv: KeyValueStore,
    /** TTL while the turn runs (seconds): the job timeout plus the hour after done. */
    private readonly liveTtlSeconds: number,
  ) {}

  /** A writer for one turn: append in order, then done (the sentinel, and the one-hour expiry). */
  writer(correlationId: string) {
    let seq = 0;
    let chain = Promise.resolve();
    const push = (event: string, data: unknown, ttlSeconds: number) => {
      const entry: RelayEntry = { seq: ++seq, event, data };
      chain = chain.then(() => this.kv.listPush(key(correlationId), JSON.stringify(entry), { max: RELAY_MAX_ENTRIES, ttlSeconds }));
      return chain;
    };
    return {
      append: (event: string, data: unknown) => void push(event, data, this.liveTtlSeconds).catch(() => {}),
      done: (data: unknown = {}) => push("done", data, RELAY_DONE_TTL_SECONDS),
    };
  }

  /** The kept entries after `afterSeq`, oldest first, and whether the done sentinel is among the kept ones. */
  async read(correlationId: string, afterSeq = 0): Promise<{ known: boolean; entries: RelayEntry[]; done: boolean }> {
    const raw = await this.kv.listRange(key(correlationId));
    const all = raw.flatMap((r) => {
      try {
        return [JSON.parse(r) as RelayEntry];
      } catch {
        return [];
      }
    });
    return { known: all.length > 0, entries: all.filter((e) => e.seq > afterSeq), done: all.some((e) => e.event === "done") };
  }

  /**
   * Follows a turn: the kept entries after `afterSeq`, then new ones as they come, until its
   * done sentinel, until it expires, or until `stopped()`. A turn nobody kept is not_found,
   * before anything is yielded (so the caller can refuse before it starts streaming).
   */
  async follow(correlationId: string, afterSeq: number, stopped: () => boolean): Promise<AsyncIterable<RelayEntry>> {
    const first = await this.read(correlationId, afterSeq);
    if (!first.known) throw new DomainError("not_found", "relay_not_found", `no turn with correlation id ${correlationId} (none ran, or it ended over an hour ago)`);
    const relay = this;
    return (async function* () {
      let batch = first;
      let after = afterSeq;
      for (;;) {
        for (const e of batch.entries) {
          yield e;
          after = e.seq;
        }
        if (batch.done || stopped()) return;
        await Bun.sleep(POLL_MS);
        batch = await relay.read(correlationId, after);
        if (!batch.known) return; // expired meanwhile
      }
    })();
  }
}
