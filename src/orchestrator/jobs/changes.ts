// Job status changes as a feed (GET /jobs?watch=true, the console's live job list). Every pod
// publishes the ids of the jobs whose status it changed; with REDIS_URL they go through one Redis
// pub/sub channel ({REDIS_KEY_PREFIX}:job-changes), so a watcher on any pod hears of a job run on
// another (the record itself is read from the shared store). Without Redis, this process only.
import { log } from "../../common/logger";

export const logger = log("job-changes");

export interface JobChangeFeed {
  /** Says a job's status changed; never rejects. */
  publish(jobId: string): Promise<void>;
  /** Told the id of each job whose status changed (on any pod, when shared); `onEnd` when the service stops. */
  subscribe(listener: (jobId: string) => void, onEnd?: () => void): () => void;
  /** Ends every watch (the service is stopping: streams must not hold the shutdown). */
  endWatches(): void;
  close(): Promise<void>;
}

export class Listeners {
  private readonly set = new Set<(id: string) => void>();
  private readonly ends = new Map<(id: string) => void, () => void>();
  add(l: (id: string) => void, onEnd?: () => void): () => void {
    this.set.add(l);
    if (onEnd) this.ends.set(l, onEnd);
    return () => {
      this.set.delete(l);
      this.ends.delete(l);
    };
  }
  end(): void {
    for (const e of [...this.ends.values()]) e();
  }
  emit(id: string): void {
    for (const l of [...this.set]) {
      try {
        l(id);
      } catch (err) {
        logger.warn(`a job watcher failed: ${(err as Error).message}`);
      }
    }
  }
}

export function localJobChangeFeed(): JobChangeFeed {
  const listeners = new Listeners();
  return {
    async publish(id) {
      listeners.emit(id);
    },
    subscribe: (l, onEnd) => listeners.add(l, onEnd),
    endWatches: () => listeners.end(),
    async close() {
      listeners.end();
    },
  };
}
