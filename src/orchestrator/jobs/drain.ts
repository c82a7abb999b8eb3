// Drain (spec: job-orchestrator, States and transitions, "Drain (pre-shutdown)"): mark the pod
// draining, wait until no job with this pod's name is running, clear the flag. The flag lives
// in the key-value store as `draining:{pod}`, so `service-cli drain` (another process) and the
// service see the same one; while it is set, POST /jobs answers 503 and queued jobs wait.
// The flag names the drain that set it: a second drain meanwhile (say `timeout=0`) waits and
// answers, but only the drain that set the flag clears it when it ends (or an explicit undrain,
// DELETE /admin/drain).
import { withDeadline } from "../../common/deadline";
import type { KeyValueStore } from "../../common/kv/store";
import { log } from "../../common/logger";
import { type JobStore, scanJobs } from "./store";

const logger = log("drain");

export const DRAIN_DEFAULT_SECONDS = 300;
/** Seconds a client is told to wait before submitting again to a draining pod. */
export const DRAIN_RETRY_AFTER_SECONDS = 30;

const flagKey = (pod: string) => `draining:${pod}`;

export async function isDraining(kv: KeyValueStore, pod: string): Promise<boolean> {
  return (await withDeadline(kv.get(flagKey(pod)), 3_000, "reading the draining flag")) !== null;
}

const ownerOf = (value: string | null): string | undefined => {
  try {
    return value === null ? undefined : (JSON.parse(value) as { owner?: string }).owner;
  } catch {
    return undefined;
  }
};

/** Ends the pod's drain now, whoever set it (DELETE /admin/drain). */
export async function undrainPod(kv: KeyValueStore, pod: string): Promise<boolean> {
  const was = await isDraining(kv, pod);
  await kv.delete(flagKey(pod));
  if (was) logger.info(`pod ${pod}: drain ended by an explicit undrain`);
  return was;
}

export interface DrainResult {
  /** True when no job of this pod was running at the end. */
  drained: boolean;
  /** Jobs of this pod still running when the drain ended. */
  running: number;
}

export interface DrainOptions {
  kv: KeyValueStore;
  pod: string;
  timeoutSeconds: number;
  /** Jobs of this pod running now. */
  countRunning: () => Promise<number> | number;
  /** Resolves when the count may have changed (or after pollMs, whichever is first). */
  changed?: () => Promise<void>;
  pollMs?: number;
}

export async function drainPod(opts: DrainOptions): Promise<DrainResult> {
  const pollMs = opts.pollMs ?? 500;
  // The flag outlives a drainer that dies mid-drain by a minute at most.
  const ttlSeconds = opts.timeoutSeconds + 60;
  const owner = crypto.randomUUID();
  const key = flagKey(opts.pod);
  // A drain already under way keeps the flag: this one waits with it and leaves it set.
  const mine = (await opts.kv.get(key).catch(() => null)) === null;
  if (mine) {
    await opts.kv
      .set(key, JSON.stringify({ since: new Date().toISOString(), owner }), { ttlSeconds })
      .catch((err: Error) => logger.warn(`could not store the draining flag (${err.message}); draining this process only`));
  }
  const deadline = Date.now() + opts.timeoutSeconds * 1000;
  let running = await opts.countRunning();
  logger.info(`draining pod ${opts.pod}: ${running} running job(s), waiting up to ${opts.timeoutSeconds} s`);
  try {
    while (running > 0 && Date.now() < deadline) {
      const left = deadline - Date.now();
      await Promise.race([opts.changed?.() ?? new Promise<void>(() => {}), Bun.sleep(Math.min(pollMs, left))]);
      running = await opts.countRunning();
    }
  } finally {
    if (mine) {
      await opts.kv
        .get(key)
        .then((v) => (ownerOf(v) === owner ? opts.kv.delete(key) : undefined))
        .catch((err: Error) => logger.warn(`could not clear the draining flag: ${err.message}`));
    }
  }
  if (running > 0) logger.warn(`drain of pod ${opts.pod} timed out with ${running} job(s) still running`);
  else logger.info(`pod ${opts.pod} drained`);
  return { drained: running === 0, running };
}

/** For a process without the job service (service-cli drain): this pod's running jobs per the store. */
export const countRunningInStore = (store: JobStore, pod: string) => async () =>
  (await scanJobs(store, (j) => j.pod_name === pod && j.status === "running")).length;
