// Where queued jobs wait and which process runs them (issue 17). One interface, chosen once at
// start-up (runtime.ts): the embedded queue below when REDIS_URL is unset (one process, its
// queue in memory, the records in SERVICE_JOBS_DIR), BullMQ on Redis when it is set
// (bullmq-queue.ts: every process is a worker of one shared queue). The queue holds job ids
// only; the job record in the JobStore stays the source of truth for users.

/** Runs one job taken from the queue; resolves when it has ended (or did not need to run). */
export type RunJob = (id: string) => Promise<void>;

export interface JobQueue {
  readonly kind: "embedded" | "bullmq";
  /** True when several processes take jobs from this queue (a job may run on another pod). */
  readonly shared: boolean;
  /** Starts taking jobs: `run` is called for each, at most maxParallel at a time in this process, oldest first. */
  start(run: RunJob): void;
  /**
   * Queues the job; rejects when it could not be queued (Redis down): the caller retries.
   * Idempotent per id; `again` replaces a finished entry of the same id (a job queued anew).
   */
  add(id: string, again?: boolean): Promise<void>;
  /** Takes a waiting job off the queue (cancel); a no-op when it is not waiting. */
  remove(id: string): Promise<void>;
  /** Whether the job waits in the queue or runs from it. */
  has(id: string): Promise<boolean>;
  /** Stops (true) or resumes (false) taking jobs in this process; running jobs go on. */
  setPaused(paused: boolean): Promise<void>;
  /** Jobs waiting to start: in the whole shared queue, or in this process's. */
  depth(): Promise<number>;
  /** Jobs waiting in this process's own queue (0 for a shared one). */
  localDepth(): number;
  /** Tells every process to stop job `id` if it runs it (the embedded queue has no other process). */
  broadcastCancel(id: string): Promise<void>;
  /** Called with a job id another process asked to stop. */
  onCancel(listener: (id: string) => void): void;
  /** Called with the ids of jobs whose process stopped renewing its hold on them (BullMQ stalled jobs). */
  onStalled(listener: (id: string) => void): void;
  /**
   * Called when the queue may have lost its entries: its Redis came back after an outage, or
   * was found emptied (a restart without persistence). The service reconciles at once.
   */
  onReset(listener: () => void): void;
  /** Whether pod `name` has shown signs of life lately (its heartbeat); the embedded queue knows only itself. */
  podAlive(name: string): Promise<boolean>;
  close(): Promise<void>;
}

/** The in-process FIFO: today's behaviour without Redis. */
export function createEmbeddedQueue(opts: { podName: string; maxParallel: number }): JobQueue {
  const waiting: string[] = [];
  const active = new Set<string>();
  let run: RunJob | undefined;
  let paused = false;
  let closed = false;

  function pump(): void {
    if (run === undefined || paused || closed) return;
    while (active.size < opts.maxParallel && waiting.length > 0) {
      const id = waiting.shift()!;
      active.add(id);
      void run(id)
        .catch(() => {}) // the service logs its own failures
        .finally(() => {
          active.delete(id);
          pump();
        });
    }
  }

  return {
    kind: "embedded",
    shared: false,
    start(fn) {
      run = fn;
      pump();
    },
    async add(id) {
      if (!waiting.includes(id) && !active.has(id)) waiting.push(id);
      pump();
    },
    async remove(id) {
      const i = waiting.indexOf(id);
      if (i >= 0) waiting.splice(i, 1);
    },
    has: async (id) => waiting.includes(id) || active.has(id),
    async setPaused(p) {
      paused = p;
      pump();
    },
    depth: async () => waiting.length,
    localDepth: () => waiting.length,
    broadcastCancel: async () => {},
    onCancel: () => {},
    onStalled: () => {},
    onReset: () => {},
    podAlive: async (name) => name === opts.podName,
    async close() {
      closed = true;
    },
  };
}
