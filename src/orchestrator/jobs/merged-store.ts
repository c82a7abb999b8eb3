// Redis with the job files beside it (issue 4, issue 17: "nothing lost when Redis fails").
// Every write goes to both: Redis is what every pod reads fast, the files (SERVICE_JOBS_DIR,
// on the shared volume in Kubernetes) are what survives Redis losing its data (a restart
// without persistence). A write succeeds when either store took it; only when both fail does it
// throw, and then POST /jobs answers 503 instead of acknowledging a job nobody could find.
// Reads ask both and keep, per job, the copy written last (updated_at), so a job written only
// to the files during an outage reads as its latest state once Redis is back.
import { withDeadline } from "../../common/deadline";
import { log } from "../../common/logger";
import { type JobStore, newer } from "./store";

const logger = log("jobs");
/** A primary that has not answered by then counts as down for that call. */
const PRIMARY_DEADLINE_MS = 3_000;

export function createMergedJobStore(primary: JobStore, fallback: JobStore): JobStore {
  let primaryDown = false;

  /** The primary's answer, or `otherwise` when it fails (logged once per outage). */
  const fromPrimary = async <T>(what: string, op: () => Promise<T>, otherwise: T): Promise<T> => {
    try {
      const value = await withDeadline(op(), PRIMARY_DEADLINE_MS, `${primary.kind} ${what}`);
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
      let fileError: Error | undefined;
      const [inPrimary, inFiles] = await Promise.all([
        fromPrimary("write", () => primary.put(job).then(() => true), false),
        fallback.put(job).then(
          () => true,
          (err: Error) => {
            logger.warn(`job file write failed (${err.message})`);
            fileError = err;
            return false;
          },
        ),
      ]);
      // The files' error is the cause: a full disk there is what to fix (507), whatever the primary did.
      if (!inPrimary && !inFiles) throw new Error(`neither ${primary.kind} nor the job files took job ${job.id}`, { cause: fileError });
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
