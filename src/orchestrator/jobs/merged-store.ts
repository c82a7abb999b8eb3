// Redis with the file fallback under it (issue 4: "With Redis configured but down, writes land
// in the file store and are not lost; reads merge both"). A write goes to the primary; when
// that fails it goes to the files instead. Reads ask both and keep, per job, the copy written
// last (updated_at), so a job written to files during an outage and to Redis after it reads
// as its latest state.
import { log } from "../../common/logger";
import { newer, type JobStore } from "./store";

const logger = log("jobs");

export function createMergedJobStore(primary: JobStore, fallback: JobStore): JobStore {
  let primaryDown = false;
  // Jobs this process wrote to the files: once the primary takes a later write, the stale
  // copy goes (the merge would hide it anyway; this keeps the directory small).
  const inFallback = new Set<string>();

  /** The primary's answer, or `otherwise` when it fails (logged once per outage). */
  const fromPrimary = async <T>(what: string, op: () => Promise<T>, otherwise: T): Promise<T> => {
    try {
      const value = await op();
      if (primaryDown) logger.info(`${primary.kind} job store is back`);
      primaryDown = false;
      return value;
    } catch (err) {
      if (!primaryDown) {
        logger.warn(`${primary.kind} job store unavailable (${what}: ${(err as Error).message}); using the job files until it returns`);
      }
      primaryDown = true;
      return otherwise;
    }
  };

  return {
    kind: `${primary.kind}+${fallback.kind}`,
    async get(id) {
      const [p, f] = await Promise.all([fromPrimary("get", () => primary.get(id), null), fallback.get(id)]);
      return newer(p, f);
    },
    async put(job) {
      const ok = await fromPrimary("write", () => primary.put(job).then(() => true), false);
      if (!ok) {
        await fallback.put(job);
        inFallback.add(job.id);
      } else if (inFallback.delete(job.id)) {
        await fallback.remove(job.id).catch(() => {});
      }
    },
    async remove(id) {
      await Promise.all([fromPrimary("remove", () => primary.remove(id), undefined), fallback.remove(id)]);
    },
    async ids() {
      const [p, f] = await Promise.all([fromPrimary("scan", () => primary.ids(), [] as string[]), fallback.ids()]);
      return [...new Set([...p, ...f])];
    },
    sweep: () => fallback.sweep(),
    async close() {
      await Promise.all([primary.close(), fallback.close()]);
    },
  };
}
