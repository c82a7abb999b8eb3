// Jobs as files: SERVICE_JOBS_DIR/{id}.json holding the job record itself (spec: "Stored as a
// JSON file named by job id"), written whole-or-nothing. Several processes (pods on a shared
// filesystem) may share the directory; a record has expired once updated_at + TTL has passed:
// reads hide it at once and sweep() deletes it.
import { mkdir, readdir, readFile, unlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { isTempFileName, writeFileAtomic } from "../../common/atomic-write";
import { log } from "../../common/logger";
import { safeJson } from "./kv-store";
import { isJobId, Job } from "./schema";
import type { JobStore } from "./store";

const logger = log("jobs");
const SUFFIX = ".json";

export interface FileJobStoreOptions {
  dir: string;
  ttlSeconds: number;
  now?: () => number;
}

export async function createFileJobStore(opts: FileJobStoreOptions): Promise<JobStore> {
  const dir = resolve(opts.dir);
  await mkdir(dir, { recursive: true });
  const now = opts.now ?? Date.now;
  const ttlMs = opts.ttlSeconds * 1000;
  const pathOf = (id: string) => join(dir, id + SUFFIX);
  const expired = (job: Job) => Date.parse(job.updated_at) + ttlMs <= now();

  const ids = async (): Promise<string[]> => {
    const names = await readdir(dir);
    return names
      .filter((n) => n.endsWith(SUFFIX) && !isTempFileName(n))
      .map((n) => n.slice(0, -SUFFIX.length))
      .filter(isJobId);
  };

  const readRaw = async (id: string): Promise<Job | null> => {
    let text: string;
    try {
      text = await readFile(pathOf(id), "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
    const parsed = Job.safeParse(safeJson(text));
    if (!parsed.success) {
      // Writes are atomic, so this file was damaged or written by something else: skip it, say where.
      logger.warn(`job file ${pathOf(id)} is not a job record; ignoring it (remove it to silence this)`);
      return null;
    }
    return parsed.data;
  };

  const remove = async (id: string) => {
    await unlink(pathOf(id)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "ENOENT") throw err;
    });
  };

  return {
    kind: "file",
    async get(id) {
      if (!isJobId(id)) return null;
      const job = await readRaw(id);
      return job === null || expired(job) ? null : job;
    },
    async put(job) {
      if (!isJobId(job.id)) throw new Error(`not a job id: ${JSON.stringify(job.id)}`);
      await writeFileAtomic(pathOf(job.id), JSON.stringify(job));
    },
    async remove(id) {
      if (isJobId(id)) await remove(id);
    },
    ids,
    async sweep() {
      let removed = 0;
      for (const id of await ids()) {
        const job = await readRaw(id);
        if (job === null || !expired(job)) continue;
        await remove(id);
        removed++;
      }
      return removed;
    },
    async close() {},
  };
}
