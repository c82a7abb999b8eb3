// The reconciler (shared queue only): brings the records and the queue back in line. Queued jobs
// the queue lost (Redis back empty) are queued again; a running job whose pod is gone (BullMQ
// reports it stalled, or it is seen without a heartbeat twice, reconcileMs apart) is failed
// naming the pod, or queued again while its profile allows retries. One process settles each
// orphan: a claim in the key-value store.
import type { KeyValueStore } from "../../common/kv/store";
import { log } from "../../common/logger";
import type { ProfileCatalog, ProfileLike } from "../execution/executor";
import type { Backlog } from "./backlog";
import type { JobQueue } from "./queue";
import type { RecordsChain } from "./records-chain";
import type { Job } from "./schema";
import { type JobStore, scanJobs } from "./store";
import { finished, ownerLost } from "./transitions";

const logger = log("jobs");

export interface Reconciler {
  /** One pass over every live job; asked for during a pass, one more pass follows it. */
  reconcile(): Promise<void>;
  /** BullMQ reported the job stalled: its pod stopped renewing the lock. */
  onStalled(id: string): Promise<void>;
}

export function createReconciler<P extends ProfileLike>(deps: {
  store: JobStore;
  kv: KeyValueStore;
  pod: string;
  queue: JobQueue;
  profiles: ProfileCatalog<P>;
  mutate: RecordsChain["mutate"];
  backlog: Backlog;
  isRunning: (id: string) => boolean;
  /** Told of a job failed here. */
  notify: (job: Job) => void;
  /** True once the service stops: no pass starts or goes on. */
  stopped: () => boolean;
  reconcileMs: number;
  now: () => number;
  iso: () => string;
}): Reconciler {
  const { store, kv, pod, queue, mutate, backlog } = deps;
  const suspects = new Map<string, number>(); // running job id → when its pod was first seen gone
  let reconciling = false;
  let reconcileAgain = false;

  async function settleOrphan(job: Job, why: string): Promise<void> {
    if (deps.isRunning(job.id)) return;
    const retries = deps.profiles.select(job.task, job.profile)?.retries ?? 0;
    const tried = Number((await kv.get(`attempts:${job.id}`).catch(() => null)) ?? 0);
    const claimed = await kv.setIfAbsent(`orphan:${job.id}:${tried}`, pod, { ttlSeconds: 3600 }).catch(() => false);
    if (!claimed) return;
    const lost = (j: Job) => j.status === "running" && j.pod_name === job.pod_name;
    if (tried < retries) {
      const requeued = await mutate(job.id, (j) =>
        lost(j) ? { ...j, status: "queued", started_at: null, error: `${why}; queued again (retry ${tried + 1} of ${retries})` } : null,
      );
      if (requeued?.status !== "queued") return;
      await kv.set(`attempts:${job.id}`, String(tried + 1), { ttlSeconds: 7 * 86_400 }).catch(() => {});
      logger.warn(`job ${job.id}: ${why}; queued again (retry ${tried + 1} of ${retries})`);
      await backlog.enqueue(job.id, true);
      return;
    }
    const failed = await mutate(job.id, (j) => (lost(j) ? finished(j, "failed", { error: why }, deps.iso()) : null));
    if (failed?.status === "failed" && failed.error === why) {
      logger.warn(`job ${job.id}: ${why}`);
      deps.notify(failed);
    }
  }

  async function reconcile(): Promise<void> {
    if (deps.stopped()) return;
    if (reconciling) {
      reconcileAgain = true; // asked for mid-pass (the queue was reset): one more pass after this one
      return;
    }
    reconciling = true;
    try {
      const live = await scanJobs(store, (j) => j.status === "queued" || j.status === "running");
      const gone = new Set<string>();
      for (const job of live) {
        if (deps.stopped()) return;
        if (job.status === "queued") {
          if (!backlog.isUnqueued(job.id) && !(await queue.has(job.id))) await backlog.enqueue(job.id, true);
          continue;
        }
        if (deps.isRunning(job.id) || (await queue.podAlive(job.pod_name))) continue;
        gone.add(job.id);
        const since = suspects.get(job.id);
        if (since === undefined) suspects.set(job.id, deps.now());
        else if (deps.now() - since >= deps.reconcileMs) await settleOrphan(job, ownerLost(job.pod_name, "it sent no heartbeat"));
      }
      for (const id of suspects.keys()) if (!gone.has(id)) suspects.delete(id);
    } catch (err) {
      logger.debug(`reconciling jobs with the queue: ${(err as Error).message}`);
    } finally {
      reconciling = false;
      if (reconcileAgain) {
        reconcileAgain = false;
        void reconcile();
      }
    }
  }

  return {
    reconcile,
    async onStalled(id) {
      const job = await store.get(id).catch(() => null);
      if (job?.status !== "running" || deps.isRunning(id)) return;
      // A live pod that lost Redis for a moment keeps its job and records how it ends.
      if (await queue.podAlive(job.pod_name).catch(() => true)) return;
      await settleOrphan(job, ownerLost(job.pod_name, "its hold on the job expired"));
    },
  };
}
