// A watch of the job list (GET /jobs?watch=true), the way a Kubernetes watch or BullMQ's
// QueueEvents is used: the jobs as they are now (the list's filters, limit and order), a `synced`
// marker, then each job again whenever its status changes, on any pod when the feed is shared.
// Subscribed before the list is read, so a change made meanwhile is never missed (it may come
// twice: once in the list, once as a change).
import type { JobChangeFeed } from "./changes";
import type { Job } from "./schema";
import type { JobQuery } from "./store";

export type JobWatchEvent = { type: "job"; job: Job } | { type: "synced"; count: number };

export interface WatchOptions {
  jobs: { list(q: JobQuery): Promise<Job[]>; get(id: string): Promise<Job> };
  changes: JobChangeFeed;
  query: JobQuery;
  signal: AbortSignal;
}

/** Whether a changed job belongs in this watch: the status and since filters (limit and order shape only the first list). */
const matches = (job: Job, q: JobQuery) =>
  (q.status === undefined || job.status === q.status) && (q.since === undefined || Date.parse(job.created_at) >= Date.parse(q.since));

export async function* watchJobs(opts: WatchOptions): AsyncGenerator<JobWatchEvent> {
  const { signal, query } = opts;
  const pending = new Set<string>();
  let wake: (() => void) | undefined;
  const poke = () => {
    wake?.();
    wake = undefined;
  };
  let ended = false;
  const off = opts.changes.subscribe(
    (id) => {
      pending.add(id);
      poke();
    },
    () => {
      ended = true;
      poke();
    },
  );
  signal.addEventListener("abort", poke, { once: true });
  try {
    const now = await opts.jobs.list(query);
    for (const job of now) yield { type: "job", job };
    yield { type: "synced", count: now.length };
    while (!signal.aborted && !ended) {
      if (pending.size === 0) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      const ids = [...pending];
      pending.clear();
      for (const id of ids) {
        const job = await opts.jobs.get(id).catch(() => null); // expired meanwhile: nothing to say
        if (job && matches(job, query) && !signal.aborted) yield { type: "job", job };
      }
    }
  } finally {
    off();
    signal.removeEventListener("abort", poke);
  }
}
