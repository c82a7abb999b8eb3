// Jobs in the key-value store (Redis when REDIS_URL is set): key `job:{id}` under
// REDIS_KEY_PREFIX, the record as JSON, expiring SERVICE_JOB_TTL seconds after its last write.
import type { KeyValueStore } from "../../common/kv/store";
import { log } from "../../common/logger";
import { isJobId, Job } from "./schema";
import type { JobStore } from "./store";

const logger = log("jobs");
const PREFIX = "job:";

export function createKvJobStore(kv: KeyValueStore, opts: { ttlSeconds: number }): JobStore {
  return {
    kind: kv.kind,
    async get(id) {
      if (!isJobId(id)) return null;
      const text = await kv.get(PREFIX + id);
      if (text === null) return null;
      const parsed = Job.safeParse(safeJson(text));
      if (!parsed.success) {
        logger.warn(`key-value entry ${PREFIX}${id} is not a job record; ignoring it`);
        return null;
      }
      return parsed.data;
    },
    async put(job) {
      await kv.set(PREFIX + job.id, JSON.stringify(job), { ttlSeconds: opts.ttlSeconds });
    },
    async remove(id) {
      await kv.delete(PREFIX + id);
    },
    async ids() {
      return (await kv.keys(PREFIX)).map((k) => k.slice(PREFIX.length)).filter(isJobId);
    },
    // The store expires keys itself (Redis TTL).
    sweep: async () => 0,
    close: async () => {},
  };
}

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
