// The backlog: what this process could not hand on yet and tries again on every watch, so an
// acknowledged job is never dropped. Recorded jobs the queue did not take (Redis down); jobs
// taken from the queue whose start could not be recorded (a full disk), queued again; ends of
// jobs whose agent has exited but the store refused (a full disk), written again, and shown to
// readers here meanwhile.
import { log } from "../../common/logger";
import type { JobQueue } from "./queue";
import type { JobChange, RecordsChain } from "./records-chain";
import { isFinished, type Job } from "./schema";

const logger = log("jobs");

export interface Backlog {
  /** Queues a recorded job; when the queue is unreachable, remembers it (false) and tries again on every watch. */
  enqueue(id: string, again?: boolean): Promise<boolean>;
  /** Whether the job waits here for the queue to answer. */
  isUnqueued(id: string): boolean;
  /** The job no longer needs queuing (its cancel is recorded). */
  dropUnqueued(id: string): void;
  /** The job's start could not be recorded: it goes back to the queue on the next retry. */
  startNotRecorded(id: string, err: Error): void;
  /** The job's end (`change`) could not be recorded: kept as `job` and written on every retry until the store takes it. */
  endNotRecorded(id: string, change: JobChange, job: Job): void;
  /** The record as this process knows it: an end not written yet counts. */
  known(job: Job | null): Job | null;
  /** Queues again the jobs the queue did not take. */
  retryQueue(): Promise<void>;
  /** Writes the ends that could not be recorded, and queues again the jobs whose start could not be. */
  retryWrites(): Promise<void>;
  /** Ends still not recorded. */
  unrecordedCount(): number;
}

export function createBacklog(deps: {
  queue: JobQueue;
  mutate: RecordsChain["mutate"];
  isRunning: (id: string) => boolean;
  /** Told of an end once it is written. */
  notify: (job: Job) => void;
}): Backlog {
  const unqueued = new Set<string>();
  const unstarted = new Set<string>();
  const unrecorded = new Map<string, { change: JobChange; job: Job }>();

  async function enqueue(id: string, again = false): Promise<boolean> {
    try {
      await deps.queue.add(id, again);
      unqueued.delete(id);
      return true;
    } catch (err) {
      if (!unqueued.has(id)) logger.warn(`job ${id} is recorded but not queued yet (${(err as Error).message}); it is queued as soon as the queue answers`);
      unqueued.add(id);
      return false;
    }
  }

  return {
    enqueue,
    isUnqueued: (id) => unqueued.has(id),
    dropUnqueued: (id) => void unqueued.delete(id),
    startNotRecorded(id, err) {
      if (!unstarted.has(id)) logger.warn(`job ${id}: its start could not be recorded (${err.message}); it goes back to the queue`);
      unstarted.add(id);
    },
    endNotRecorded(id, change, job) {
      unrecorded.set(id, { change, job });
    },
    known: (job) => (job && !isFinished(job.status) ? (unrecorded.get(job.id)?.job ?? job) : job),
    async retryQueue() {
      for (const id of [...unqueued]) await enqueue(id);
    },
    async retryWrites() {
      for (const [id, { change }] of unrecorded) {
        try {
          const written = await deps.mutate(id, (j) => (isFinished(j.status) ? null : change(j)));
          unrecorded.delete(id);
          if (written) deps.notify(written);
        } catch {
          return; // the store still refuses: the next watch tries again
        }
      }
      for (const id of [...unstarted]) {
        if (deps.isRunning(id)) continue;
        unstarted.delete(id);
        await enqueue(id, true);
      }
    },
    unrecordedCount: () => unrecorded.size,
  };
}
