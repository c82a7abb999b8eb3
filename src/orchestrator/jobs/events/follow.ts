// A watcher's view of a job's log: everything after `after`, then what comes as it comes, until
// the job's final status has been read (or, when the log lacks it, the record says the job ended
// and nothing more arrives). Same-process appends wake it at once; another pod's are found by
// reading again every pollMs.
import { isFinished, type Job } from "../schema";
import type { StoredJobEvent } from "./schema";
import { DEFAULT_READ_LIMIT, type JobEventStore } from "./store";

export interface FollowOptions {
  store: JobEventStore;
  jobId: string;
  after: number;
  /** The job's record now (null when it is gone). */
  getJob: () => Promise<Job | null>;
  signal?: AbortSignal;
  pollMs?: number;
}

const isEnd = (e: StoredJobEvent) => e.event.type === "status" && isFinished(e.event.status);

/** Batches of events, oldest first; ends after the job's final status. */
export async function* followJobEvents(opts: FollowOptions): AsyncGenerator<StoredJobEvent[]> {
  const { store, jobId, signal } = opts;
  let after = opts.after;
  let wake: (() => void) | undefined;
  let woken = false;
  const poke = () => {
    woken = true;
    wake?.();
  };
  const off = store.onAppend(jobId, poke);
  signal?.addEventListener("abort", poke, { once: true });
  const pollMs = opts.pollMs ?? 500;
  // The record is asked only when nothing came for a poll interval (a log that lacks its final
  // status, or a job gone): not once per wake, which a fast agent makes thousands of.
  let checked = Date.now();
  try {
    while (!signal?.aborted) {
      woken = false;
      const batch = await store.read(jobId, after);
      if (batch.length > 0) {
        after = batch[batch.length - 1]!.id;
        const end = batch.findIndex(isEnd);
        yield end >= 0 ? batch.slice(0, end + 1) : batch;
        if (end >= 0) return;
        checked = Date.now();
        // A full read may have left more; an append meanwhile has too. Else wait for the next one.
        if (batch.length >= DEFAULT_READ_LIMIT || woken) continue;
      } else if (Date.now() - checked >= pollMs || !woken) {
        const job = await opts.getJob();
        checked = Date.now();
        if (job === null) return;
        if (isFinished(job.status)) {
          // The final status may be on its way: one more read, then stop.
          const last = await store.read(jobId, after);
          if (last.length > 0) yield last;
          return;
        }
      }
      if (woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    off();
    signal?.removeEventListener("abort", poke);
  }
}
