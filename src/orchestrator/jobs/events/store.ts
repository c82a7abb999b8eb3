// Where a job's events are kept (issue 18, part 1): a JSONL file beside the job file, or a Redis
// list with the job's TTL when REDIS_URL is set, so a watcher on any pod reads the same log.
// Ids are positions, so resuming after id n is "read from position n" on both.
import type { JobEvent, StoredJobEvent } from "./schema";

export interface JobEventStore {
  readonly kind: "file" | "redis";
  /**
   * Appends in order; one writer per job (the pod that runs it), plus status events. `json[i]`,
   * when given, is events[i]'s JSON (jsonOf) made already by the caller.
   */
  append(jobId: string, events: JobEvent[], json?: readonly string[]): Promise<void>;
  /** Events with id > after, oldest first, at most `limit`. */
  read(jobId: string, after: number, limit?: number): Promise<StoredJobEvent[]>;
  /** The last `n` events (fewer when the log is shorter). */
  last(jobId: string, n: number): Promise<StoredJobEvent[]>;
  /** Told (at once) when this process appended to the job's log; other processes' appends are found by reading again. */
  onAppend(jobId: string, listener: () => void): () => void;
  /** Deletes logs whose job is gone (the file store; Redis expires them with the job). */
  sweep(isLive: (jobId: string) => Promise<boolean>): Promise<number>;
  close(): Promise<void>;
}

/** In-process listeners per job, shared by both stores. */
export class AppendSignals {
  private readonly listeners = new Map<string, Set<() => void>>();
  on(jobId: string, listener: () => void): () => void {
    let set = this.listeners.get(jobId);
    if (!set) {
      set = new Set();
      this.listeners.set(jobId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(jobId) === set) this.listeners.delete(jobId);
    };
  }
  emit(jobId: string): void {
    for (const l of [...(this.listeners.get(jobId) ?? [])]) l();
  }
}

export const DEFAULT_READ_LIMIT = 1000;
