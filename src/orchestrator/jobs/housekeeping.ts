// Housekeeping timers: the watch (every watchMs: what other processes changed and what this one
// could not hand on yet), the sweep of expired job records and event logs (every sweepMs), and
// with a shared queue the reconciler's pass (every reconcileMs). A tick never overlaps the last
// one's watch, and none starts once stopped.
import { log } from "../../common/logger";
import type { JobEventLog } from "./events";
import type { JobStore } from "./store";

const logger = log("jobs");

export interface Housekeeping {
  /** Clears every timer (the service stops). */
  stop(): void;
}

export function startHousekeeping(deps: {
  store: JobStore;
  events?: JobEventLog;
  watchMs: number;
  watch: () => Promise<void>;
  sweepMs: number;
  /** Omitted: no reconciler pass (the embedded queue has no other process to reconcile with). */
  reconcile?: { everyMs: number; run: () => Promise<void> };
}): Housekeeping {
  const { store } = deps;
  let stopped = false;
  let watching = false;

  const reconcileTimer = deps.reconcile && setInterval(() => void deps.reconcile?.run(), deps.reconcile.everyMs);
  reconcileTimer?.unref?.();

  const watchTimer = setInterval(async () => {
    if (watching || stopped) return;
    watching = true;
    try {
      await deps.watch();
    } finally {
      watching = false;
    }
  }, deps.watchMs);
  watchTimer.unref?.();

  const sweepTimer = setInterval(() => {
    void store.sweep().then(
      (n) => n > 0 && logger.info(`removed ${n} expired job record(s)`),
      (err: Error) => logger.warn(`sweeping expired jobs failed: ${err.message}`),
    );
    void deps.events?.store.sweep(async (id) => (await store.get(id).catch(() => null)) !== null).catch(() => {});
  }, deps.sweepMs);
  sweepTimer.unref?.();

  return {
    stop() {
      stopped = true;
      clearInterval(watchTimer);
      clearInterval(sweepTimer);
      clearInterval(reconcileTimer);
    },
  };
}
