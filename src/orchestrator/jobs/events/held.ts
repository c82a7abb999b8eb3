// A job's event log on a full disk: what the log must not lose (status changes, errors, the cut
// notice and the latest running totals) is held in memory when an append is refused for want
// of space, and written ahead of the job's next append or by a retry once space is back, in
// order. Agent text, thinking and tool events of a refused append are dropped: they can be
// large, and the job's record keeps its result. A restart before the retry loses what is held.

import { log } from "../../../common/logger";
import { isStorageFull } from "../../../common/storage";
import { type JobEvent, jsonOf } from "./schema";
import type { JobEventStore } from "./store";

const logger = log("job-events");

/** How often appends refused for a full disk are tried again. */
const RETRY_MS = 1_000;

const KEPT = new Set<JobEvent["type"]>(["status", "error", "cut"]);

/** The events worth holding: every status, error and cut, and the last usage (a running total). */
function worthHolding(events: JobEvent[], json: string[]): { events: JobEvent[]; json: string[] } {
  const lastUsage = events.findLastIndex((e) => e.type === "usage");
  const out = { events: [] as JobEvent[], json: [] as string[] };
  events.forEach((e, i) => {
    if (KEPT.has(e.type) || i === lastUsage) {
      out.events.push(e);
      out.json.push(json[i]!);
    }
  });
  return out;
}

export function holdOnFullDisk(store: JobEventStore, retryMs = RETRY_MS): JobEventStore {
  const held = new Map<string, { events: JobEvent[]; json: string[] }>();
  /** One append at a time per job here, so what is held goes out before what follows it. */
  const chains = new Map<string, Promise<void>>();
  let timer: ReturnType<typeof setTimeout> | undefined;

  const retryLater = () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      for (const id of [...held.keys()]) void append(id, []).catch(() => {});
    }, retryMs);
    timer.unref?.();
  };

  function append(id: string, events: JobEvent[], json?: readonly string[]): Promise<void> {
    const texts = json ? [...json] : events.map(jsonOf);
    const run = async () => {
      const before = held.get(id);
      if (!before && events.length === 0) return;
      const all = before ? { events: [...before.events, ...events], json: [...before.json, ...texts] } : { events, json: texts };
      try {
        await store.append(id, all.events, all.json);
        if (before) logger.info(`job ${id}: ${before.events.length} held event(s) written`);
        held.delete(id);
      } catch (err) {
        if (!isStorageFull(err)) throw err;
        const keep = worthHolding(all.events, all.json);
        if (keep.events.length > 0) held.set(id, keep);
        else held.delete(id);
        retryLater();
        throw err;
      }
    };
    const next = (chains.get(id) ?? Promise.resolve()).then(run);
    const tail = next.catch(() => {});
    chains.set(id, tail);
    void tail.then(() => {
      if (chains.get(id) === tail) chains.delete(id);
    });
    return next;
  }

  return {
    kind: store.kind,
    append,
    read: (id, after, limit) => store.read(id, after, limit),
    last: (id, n) => store.last(id, n),
    onAppend: (id, listener) => store.onAppend(id, listener),
    sweep: (isLive) => store.sweep(isLive),
    async close() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      await store.close();
    },
  };
}
