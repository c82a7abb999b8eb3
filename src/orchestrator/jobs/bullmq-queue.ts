// The shared queue when REDIS_URL is set (issue 17): BullMQ on Redis, through its node-redis
// adapter (the client the project already uses). Every orchestrator process is a worker of one
// queue, `{REDIS_KEY_PREFIX}:bull:jobs`, with concurrency SERVICE_MAX_PARALLEL_JOBS, so any pod
// takes the next job and none runs more than its limit. BullMQ job ids are the job ids, which
// makes adding idempotent.
//
// A worker holds a lock on each job it runs and renews it every half lock; a pod that dies stops
// renewing, and BullMQ's stalled-job check (every SERVICE_JOB_LOCK_SECONDS) reports the job
// within two checks of the lock expiring. maxStalledCount is 0: a stalled job is never run again
// by BullMQ itself (agents have side effects); the service decides (profile `retries`).
//
// Beside the queue: a heartbeat key per pod (`{prefix}:pods:{pod}`, renewed every third of the
// lock, expiring after one lock), and a pub/sub channel (`{prefix}:jobs:cancel`) on which a
// cancel reaches the pod that runs the job.
import { createNodeRedisClient, Queue, WaitingError, Worker } from "bullmq";
import { createClient } from "redis";
import { withDeadline } from "../../common/deadline";
import { maskRedisUrl } from "../../common/kv/redis-store";
import { log } from "../../common/logger";
import type { JobQueue, RunJob } from "./queue";

const logger = log("queue");
const QUEUE_NAME = "jobs";
/** A Redis command that has not answered by then counts as failed (Redis down). */
const COMMAND_TIMEOUT_MS = 3_000;

export interface BullQueueOptions {
  url: string;
  keyPrefix: string;
  podName: string;
  maxParallel: number;
  /** The worker's lock on a running job (SERVICE_JOB_LOCK_SECONDS × 1000); also the stalled-check interval. */
  lockMs: number;
  /** Finished BullMQ entries are kept this long (the job TTL), so re-adding a finished job is a no-op. */
  keepSeconds: number;
}

const WAITING_STATES = new Set(["waiting", "active", "delayed", "prioritized", "paused", "waiting-children"]);

export function createBullQueue(opts: BullQueueOptions): JobQueue {
  const where = `REDIS_URL=${maskRedisUrl(opts.url)}`;
  // BullMQ's own commands wait for a reconnect (its worker loop would spin on commands that fail
  // at once); this module's calls fail fast while disconnected (timed() below), so a submit
  // learns at once that Redis is down and the job waits in the store instead.
  const raw = createClient({
    url: opts.url,
    socket: { connectTimeout: 5_000, reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 2_000) },
  });
  let outage = false;
  const resetListeners: Array<() => void> = [];
  const reset = (why: string) => {
    logger.info(`${why}: queued jobs are checked against their records now`);
    for (const l of resetListeners) l();
  };
  raw.on("error", (err: Error) => {
    if (!outage) logger.warn(`queue connection to Redis (${where}) lost: ${err.message}; reconnecting`);
    outage = true;
  });
  raw.on("ready", () => {
    if (!outage) return;
    outage = false;
    // It may have come back without its data (no persistence): this pod's heartbeat first, then
    // every queued job whose entry is gone is queued again from its record.
    void beat(true);
  });
  const connection = createNodeRedisClient(raw);
  const prefix = `${opts.keyPrefix}:bull`;
  const heartbeatKey = (pod: string) => `${opts.keyPrefix}:pods:${pod}`;
  /** Set once by the first pod and never removed: found missing, Redis lost its data without this pod seeing it go. */
  const presentKey = `${opts.keyPrefix}:queue:present`;
  let beats = 0;
  const cancelChannel = `${opts.keyPrefix}:jobs:cancel`;

  const queue = new Queue(QUEUE_NAME, { connection, prefix });
  queue.on("error", (err: Error) => logger.debug(`queue: ${err.message}`));
  let worker: Worker | undefined;
  let paused = false;
  let closed = false;
  const cancelListeners: Array<(id: string) => void> = [];
  const stalledListeners: Array<(id: string) => void> = [];

  const timed = <T>(what: string, p: () => Promise<T>): Promise<T> =>
    raw.isReady ? withDeadline(p(), COMMAND_TIMEOUT_MS, `Redis (${where}) ${what}`) : Promise.reject(new Error(`Redis (${where}) is not connected (${what})`));

  // --- heartbeat: "this pod is alive", for deciding whether a running job has lost its owner
  // `back`: the connection has just come back from an outage (reset whatever Redis holds).
  const beat = (back = false) =>
    timed("the heartbeat", async () => {
      await raw.set(heartbeatKey(opts.podName), new Date().toISOString(), { expiration: { type: "PX", value: opts.lockMs } });
      const created = (await raw.set(presentKey, new Date().toISOString(), { condition: "NX" })) !== null;
      const first = beats++ === 0;
      if (back) reset(`queue connection to Redis (${where}) is back`);
      else if (created && !first) reset(`Redis (${where}) lost its data`);
    }).catch((err: Error) => logger.debug(`heartbeat: ${err.message}`));
  const heartbeat = setInterval(() => void beat(), Math.max(50, Math.floor(opts.lockMs / 3)));
  heartbeat.unref?.();

  // --- cancels from other processes
  const subscriber = raw.duplicate();
  subscriber.on("error", () => {}); // reported by the main connection
  const subscribed = subscriber
    .connect()
    .then(() =>
      subscriber.subscribe(cancelChannel, (id: string) => {
        for (const l of cancelListeners) l(id);
      }),
    )
    .catch((err: Error) =>
      logger.warn(`cannot listen for cancels from other pods (${err.message}); they are still seen within seconds through the job records`),
    );
  void beat();

  return {
    kind: "bullmq",
    shared: true,
    start(run: RunJob) {
      worker = new Worker(
        QUEUE_NAME,
        async (job, token) => {
          // A fetch in flight when the worker was paused (drain) hands its job back to the others.
          if (paused && token !== undefined) {
            await job.moveToWait(token);
            throw new WaitingError();
          }
          await run(job.id!);
        },
        {
          connection,
          prefix,
          concurrency: opts.maxParallel,
          lockDuration: opts.lockMs,
          stalledInterval: opts.lockMs,
          maxStalledCount: 0,
          removeOnComplete: { age: opts.keepSeconds },
          removeOnFail: { age: opts.keepSeconds },
          name: opts.podName,
        },
      );
      worker.on("error", (err: Error) => logger.debug(`worker: ${err.message}`));
      worker.on("stalled", (id: string) => {
        for (const l of stalledListeners) l(id);
      });
      if (paused) void worker.pause(true);
    },
    async add(id, again) {
      if (again) {
        const old = await timed("a job lookup", () => queue.getJob(id));
        const state = old ? await timed("a job state", () => old.getState()) : "unknown";
        if (old && (state === "completed" || state === "failed")) await timed("removing a job", () => old.remove());
      }
      await timed("adding a job", () =>
        queue.add("job", { id }, { jobId: id, removeOnComplete: { age: opts.keepSeconds }, removeOnFail: { age: opts.keepSeconds } }),
      );
    },
    async remove(id) {
      const job = await timed("a job lookup", () => queue.getJob(id)).catch(() => undefined);
      if (job && (await job.getState().catch(() => "unknown")) !== "active") await job.remove().catch(() => {});
    },
    async has(id) {
      const job = await timed("a job lookup", () => queue.getJob(id));
      if (!job) return false;
      return WAITING_STATES.has(await timed("a job state", () => job.getState()));
    },
    async setPaused(p) {
      if (p === paused) return;
      paused = p;
      if (!worker) return;
      if (p) await worker.pause(true);
      else await worker.resume();
    },
    async depth() {
      const counts = await timed("job counts", () => queue.getJobCounts("waiting", "prioritized", "delayed"));
      return Object.values(counts).reduce((a, b) => a + b, 0);
    },
    localDepth: () => 0,
    async broadcastCancel(id) {
      await timed("a cancel", () => raw.publish(cancelChannel, id));
    },
    onCancel: (l) => void cancelListeners.push(l),
    onStalled: (l) => void stalledListeners.push(l),
    onReset: (l) => void resetListeners.push(l),
    async podAlive(name) {
      if (name === opts.podName) return true;
      return (await timed("a heartbeat", () => raw.exists(heartbeatKey(name)))) === 1;
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      // Each step bounded: with Redis down, BullMQ's close would wait for it.
      const settle = (p: Promise<unknown>) => timed("closing", () => p).catch(() => {});
      await settle(subscribed);
      await settle(worker?.close(true) ?? Promise.resolve());
      await settle(queue.close());
      await settle(raw.del(heartbeatKey(opts.podName)));
      subscriber.destroy();
      raw.destroy();
    },
  };
}
