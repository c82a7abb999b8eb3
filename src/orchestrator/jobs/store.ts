// Where job records live (spec: job-orchestrator, "the job result is stored in a key-value
// store, with a file fallback"). One small interface; file-store.ts, kv-store.ts and
// merged-store.ts implement it, and runtime.ts picks once from the config. Listing and
// scanning are built on it here, the same for every backend.
import type { Job, JobListQuery } from "./schema";

export interface JobStore {
  readonly kind: string;
  get(id: string): Promise<Job | null>;
  /** Replaces the record; the TTL (SERVICE_JOB_TTL) counts from this write. */
  put(job: Job): Promise<void>;
  remove(id: string): Promise<void>;
  /** Ids of the stored jobs, any order (may include some that expire before they are read). */
  ids(): Promise<string[]>;
  /** Removes expired records where the backend does not expire them itself; how many went. */
  sweep(): Promise<number>;
  close(): Promise<void>;
}

/** GET /jobs' query as the stores take it: order may be left out (newest first). */
export type JobQuery = Omit<JobListQuery, "order"> & Partial<Pick<JobListQuery, "order">>;

/** Of two copies of one job, the one written last wins. */
export function newer(a: Job | null, b: Job | null): Job | null {
  if (a === null) return b;
  if (b === null) return a;
  return b.updated_at > a.updated_at ? b : a;
}

/** Ids newest first: UUIDv7 ids sort by creation time as text. */
const newestFirst = (ids: Iterable<string>): string[] => [...new Set(ids)].sort().reverse();

/**
 * Newest first, at most `limit`, optionally one status only. Reads records in id order a batch
 * at a time until the query is satisfied, so 20 out of thousands costs a few dozen reads.
 */
export async function listJobs(store: JobStore, query: JobQuery): Promise<Job[]> {
  let ids = newestFirst(await store.ids());
  // UUIDv7 ids sort by creation time, so the order needs no reads.
  if (query.order === "asc") ids = ids.reverse();
  const since = query.since === undefined ? undefined : Date.parse(query.since);
  const out: Job[] = [];
  const batch = Math.max(query.limit, 16);
  for (let i = 0; i < ids.length && out.length < query.limit; i += batch) {
    const jobs = await Promise.all(ids.slice(i, i + batch).map((id) => store.get(id)));
    for (const job of jobs) {
      if (job === null || (query.status !== undefined && job.status !== query.status)) continue;
      if (since !== undefined && Date.parse(job.created_at) < since) continue;
      out.push(job);
      if (out.length === query.limit) break;
    }
  }
  return out;
}

/** Every live job matching `match` (recovery, drain); reads the whole store. */
export async function scanJobs(store: JobStore, match: (job: Job) => boolean): Promise<Job[]> {
  const jobs = await Promise.all((await store.ids()).map((id) => store.get(id)));
  return jobs.filter((j): j is Job => j !== null && match(j));
}
