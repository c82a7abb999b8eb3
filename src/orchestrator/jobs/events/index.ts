// The job's event log as the job service uses it: status changes in, a recorder per run, the
// store for readers (GET /jobs/{id}/events, get_job, the console).
import { log } from "../../../common/logger";
import type { Job } from "../schema";
import { holdOnFullDisk } from "./held";
import { type JobProgress, RunRecorder } from "./recorder";
import type { JobEventStore } from "./store";

const logger = log("job-events");

/** Default bound on one job's log (JSON bytes); the cut is said in the log itself. */
const DEFAULT_MAX_LOG_BYTES = 8 * 1024 * 1024;

export interface JobEventLog {
  store: JobEventStore;
  /** Appends the job's status (after each change of it); never rejects. */
  status(job: Job): Promise<void>;
  recorder(jobId: string, onProgress: (p: JobProgress) => void): RunRecorder;
}

export function jobEventLog(raw: JobEventStore, opts: { maxBytes?: number; progressMs?: number } = {}): JobEventLog {
  const store = holdOnFullDisk(raw);
  return {
    store,
    async status(job) {
      const event = { type: "status" as const, at: job.updated_at, status: job.status, ...(job.error && { error: job.error }) };
      await store.append(job.id, [event]).catch((err: Error) => logger.warn(`job ${job.id}: status event not written yet: ${err.message}`));
    },
    recorder: (jobId, onProgress) =>
      new RunRecorder({ store, jobId, maxBytes: opts.maxBytes ?? DEFAULT_MAX_LOG_BYTES, onProgress, progressMs: opts.progressMs }),
  };
}

export { createFileJobEventStore } from "./file-store";
export { followJobEvents } from "./follow";
export type { JobProgress } from "./recorder";
export { flatten, jsonOf, type StoredJobEvent } from "./schema";
export type { JobEventStore } from "./store";
