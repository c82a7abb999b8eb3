// Pause and drain: whether this process's worker takes new jobs. It stops taking them while the
// service is stopping, while a drain runs here (POST /admin/drain), or while the pod's draining
// flag is set in the key-value store (`service-cli drain`, another process: re-read on every watch).

import type { KeyValueStore } from "../../common/kv/store";
import { log } from "../../common/logger";
import { type DrainResult, drainPod, isDraining, undrainPod } from "./drain";
import type { JobQueue } from "./queue";

const logger = log("jobs");

export interface PauseDrain {
  /** Drains the pod: no new jobs until none of its jobs runs, or the timeout. */
  drain(timeoutSeconds: number): Promise<DrainResult>;
  /** Ends a drain now, here and by the flag. */
  undrain(): Promise<{ was_draining: boolean }>;
  isDraining(): Promise<boolean>;
  /** Re-reads the flag another process may have set or cleared. */
  refresh(): Promise<void>;
  /** The service stops: no new jobs from now on. */
  stop(): void;
  /** A job here has ended: drains waiting for the pod to empty look again. */
  jobEnded(): void;
}

export function createPauseDrain(deps: { kv: KeyValueStore; pod: string; queue: JobQueue; countRunning: () => number }): PauseDrain {
  const { kv, pod, queue } = deps;
  const drainsHere = new Set<symbol>(); // drains under way in this process
  const slotFreed = new Set<() => void>();
  let drainingFlag = false; // the flag in the store (set by service-cli drain)
  let stopping = false;
  let paused = false;

  function updatePause(): void {
    const want = stopping || drainsHere.size > 0 || drainingFlag;
    if (want === paused) return;
    paused = want;
    void queue.setPaused(want).catch((err: Error) => logger.warn(`could not ${want ? "pause" : "resume"} the job queue: ${err.message}`));
  }

  return {
    async drain(timeoutSeconds) {
      const me = Symbol("drain");
      drainsHere.add(me);
      updatePause();
      try {
        return await drainPod({
          kv,
          pod,
          timeoutSeconds,
          countRunning: deps.countRunning,
          changed: () =>
            new Promise<void>((resolve) =>
              slotFreed.add(function wake() {
                slotFreed.delete(wake);
                resolve();
              }),
            ),
        });
      } finally {
        drainsHere.delete(me);
        // Another drain (here or elsewhere) may still hold the flag.
        drainingFlag = await isDraining(kv, pod).catch(() => false);
        updatePause();
      }
    },

    async undrain() {
      const here = drainsHere.size > 0;
      drainsHere.clear();
      const flagged = await undrainPod(kv, pod);
      drainingFlag = false;
      updatePause();
      return { was_draining: here || flagged };
    },

    async isDraining() {
      if (drainsHere.size > 0) return true;
      drainingFlag = await isDraining(kv, pod).catch(() => drainingFlag);
      updatePause();
      return drainingFlag;
    },

    async refresh() {
      drainingFlag = await isDraining(kv, pod).catch(() => drainingFlag);
      updatePause();
    },

    stop() {
      stopping = true;
      updatePause();
    },

    jobEnded() {
      for (const wake of [...slotFreed]) wake();
    },
  };
}
