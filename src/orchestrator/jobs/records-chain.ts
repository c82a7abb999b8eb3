// The per-job records chain: every write to a job record goes through here, one at a time per
// job, so a cancel and a finish never lose each other's fields. A write that changes the status
// reaches the job's event log inside the chain (a reader who sees the record finished finds its
// final status in the log) and is announced on the change feed.
import type { JobChangeFeed } from "./changes";
import type { JobEventLog } from "./events";
import type { Job } from "./schema";
import type { JobStore } from "./store";
import { laterThan } from "./transitions";

/** What a write does to the current record: the new record, or null (or the same one) to leave it. */
export type JobChange = (job: Job) => Job | null;

export interface RecordsChain {
  /** Applies `change` to the stored record after every earlier write to it; null when there is no such job. */
  mutate(id: string, change: JobChange): Promise<Job | null>;
  /** Resolves once every write begun so far has ended (written or refused). */
  settled(): Promise<void>;
}

export function createRecordsChain(deps: { store: JobStore; events?: JobEventLog; changes?: JobChangeFeed; iso: () => string }): RecordsChain {
  const { store } = deps;
  const chains = new Map<string, Promise<unknown>>();
  return {
    mutate(id, change) {
      const prev = chains.get(id) ?? Promise.resolve();
      const next = prev.then(async () => {
        const current = await store.get(id);
        if (current === null) return null;
        const changed = change(current);
        if (changed === null || changed === current) return current;
        const written = { ...changed, updated_at: laterThan(current.updated_at, deps.iso()) };
        await store.put(written);
        if (written.status !== current.status) {
          await deps.events?.status(written);
          void deps.changes?.publish(written.id);
        }
        return written;
      });
      const tail = next.catch(() => {});
      chains.set(id, tail);
      void tail.then(() => {
        if (chains.get(id) === tail) chains.delete(id);
      });
      return next;
    },
    async settled() {
      await Promise.all([...chains.values()]);
    },
  };
}
