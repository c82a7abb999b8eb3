// The job stores: files, Redis, and Redis with the file fallback (Redis down, reads merged).
import { afterEach, describe, expect, it } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeWithRedis, type Harness, openRedisStore } from "../../../test/support/kv";
import { until } from "../../../test/support/until";
import { connectRedisLazily } from "../../common/kv/redis-connect";
import { isStorageFull } from "../../common/storage";
import { createFileJobStore } from "./file-store";
import { createKvJobStore } from "./kv-store";
import { createMergedJobStore } from "./merged-store";
import type { Job } from "./schema";
import { type JobStore, listJobs, scanJobs } from "./store";

const dirs: string[] = [];
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "job-store-"));
  dirs.push(d);
  return d;
}

function job(fields: Partial<Job> = {}): Job {
  const at = new Date().toISOString();
  return {
    id: Bun.randomUUIDv7(),
    status: "queued",
    profile: "code",
    task: "t",
    repo_url: null,
    base_ref: null,
    session_id: null,
    exit_code: null,
    pr_url: null,
    branch: null,
    error: null,
    output: null,
    pod_name: "p",
    created_at: at,
    started_at: null,
    finished_at: null,
    updated_at: at,
    usage: null,
    cost_usd: null,
    total_cost_usd: null,
    num_turns: null,
    duration_ms: null,
    max_budget_usd: null,
    recall: [],
    api_retry: null,
    ...fields,
  };
}

/** Behaviour every store shares. */
function contract(name: string, open: (ttlSeconds: number) => Promise<JobStore>) {
  describe(`${name}: the JobStore contract`, () => {
    it("reads back what it stored, replaces on put, and removes", async () => {
      const store = await open(3600);
      const j = job({ task: "hello" });
      await store.put(j);
      expect(await store.get(j.id)).toEqual(j);
      const changed = { ...j, status: "running" as const, updated_at: new Date(Date.now() + 1).toISOString() };
      await store.put(changed);
      expect(await store.get(j.id)).toEqual(changed);
      await store.remove(j.id);
      expect(await store.get(j.id)).toBeNull();
    });

    it("answers null for ids that are not job ids, without touching the disk or Redis", async () => {
      const store = await open(3600);
      for (const id of ["../../etc/passwd", "", "x".repeat(300), "0194a3b2-6c1e-7f00-8a3b-1c2d3e4f5a6b"]) {
        expect(await store.get(id)).toBeNull();
      }
    });

    it("lists newest first, honours limit and status, and scans", async () => {
      const store = await open(3600);
      const jobs: Job[] = [];
      for (let i = 0; i < 30; i++) {
        const j = job({ task: `job ${i}`, status: i % 3 === 0 ? "failed" : "succeeded" });
        jobs.push(j);
        await store.put(j);
      }
      const newest = [...jobs].reverse();
      expect((await listJobs(store, { limit: 20 })).map((j) => j.task)).toEqual(newest.slice(0, 20).map((j) => j.task));
      expect((await listJobs(store, { limit: 5, status: "failed" })).map((j) => j.task)).toEqual(
        newest
          .filter((j) => j.status === "failed")
          .slice(0, 5)
          .map((j) => j.task),
      );
      expect(await listJobs(store, { limit: 5, status: "running" })).toEqual([]);
      expect((await scanJobs(store, (j) => j.status === "failed")).length).toBe(10);
    });

    it("expires jobs SERVICE_JOB_TTL seconds after their last write", async () => {
      const store = await open(1);
      const j = job();
      await store.put(j);
      expect(await store.get(j.id)).not.toBeNull();
      await until(async () => (await store.get(j.id)) === null, 5_000);
      expect(await listJobs(store, { limit: 10 })).toEqual([]);
    });
  });
}

contract("file store", async (ttlSeconds) => createFileJobStore({ dir: join(await tempDir(), "jobs"), ttlSeconds }));

describe("file store", () => {
  it("keeps each job as SERVICE_JOBS_DIR/{id}.json holding the record, and sweeps expired files", async () => {
    const dir = join(await tempDir(), "jobs");
    let now = Date.now();
    const store = await createFileJobStore({ dir, ttlSeconds: 60, now: () => now });
    const old = job({ updated_at: new Date(now - 120_000).toISOString() });
    const fresh = job();
    await store.put(old);
    await store.put(fresh);
    expect(readdirSync(dir).sort()).toEqual([`${old.id}.json`, `${fresh.id}.json`].sort());
    expect(await store.get(old.id)).toBeNull();
    expect(await store.sweep()).toBe(1);
    expect(readdirSync(dir)).toEqual([`${fresh.id}.json`]);
    now += 61_000;
    expect(await store.sweep()).toBe(1);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("skips a damaged file instead of failing every list", async () => {
    const dir = join(await tempDir(), "jobs");
    const store = await createFileJobStore({ dir, ttlSeconds: 60 });
    const good = job();
    await store.put(good);
    writeFileSync(join(dir, `${Bun.randomUUIDv7()}.json`), "{not json");
    writeFileSync(join(dir, "notes.txt"), "hello");
    expect((await listJobs(store, { limit: 10 })).map((j) => j.id)).toEqual([good.id]);
  });
});

let redis: Harness | undefined;
const openRedisJobs = async (ttlSeconds: number) => {
  redis = await openRedisStore();
  const h = redis;
  cleanups.push(() => h.cleanup());
  return createKvJobStore(h.store, { ttlSeconds });
};

describeWithRedis("Redis job store", () => {
  contract("Redis store", openRedisJobs);

  it("keeps each job under job:{id}", async () => {
    const store = await openRedisJobs(3600);
    const j = job();
    await store.put(j);
    expect(await redis!.store.keys("job:")).toEqual([`job:${j.id}`]);
  });

  contract("Redis + files (Redis up)", async (ttlSeconds) =>
    createMergedJobStore(await openRedisJobs(ttlSeconds), await createFileJobStore({ dir: join(await tempDir(), "jobs"), ttlSeconds })),
  );

  it("writes every record to the files too, so Redis losing its data loses no job", async () => {
    const dir = join(await tempDir(), "jobs");
    const redis = await openRedisJobs(3600);
    const store = createMergedJobStore(redis, await createFileJobStore({ dir, ttlSeconds: 3600 }));
    const j = job();
    await store.put(j);
    expect(readdirSync(dir)).toEqual([`${j.id}.json`]);
    await redis.remove(j.id); // Redis restarted without persistence
    expect(await store.get(j.id)).toEqual(j);
  });

  it("refuses a write that neither store took", async () => {
    const dir = join(await tempDir(), "jobs");
    const redis = flaky(await openRedisJobs(3600));
    redis.state.down = true;
    const files = await createFileJobStore({ dir, ttlSeconds: 3600 });
    const store = createMergedJobStore(redis.store, { ...files, put: async () => Promise.reject(new Error("disk full")) });
    await expect(store.put(job())).rejects.toThrow(/neither redis nor the job files/);
  });

  it("with Redis down and the job files on a full disk, the refusal is the disk's (POST /jobs: 507 storage_full, not 503)", async () => {
    const redis = flaky(await openRedisJobs(3600));
    redis.state.down = true;
    const files = await createFileJobStore({ dir: join(await tempDir(), "jobs"), ttlSeconds: 3600 });
    const full = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    const store = createMergedJobStore(redis.store, { ...files, put: async () => Promise.reject(full) });
    const err = await store.put(job()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isStorageFull(err)).toBe(true);
    // A file failure that is not the disk's stays a store outage.
    const broken = createMergedJobStore(redis.store, { ...files, put: async () => Promise.reject(new Error("EIO")) });
    expect(isStorageFull(await broken.put(job()).catch((e: unknown) => e))).toBe(false);
  });
});

/** A store that fails every call while `down` is true, like Redis during an outage. */
function flaky(inner: JobStore) {
  const state = { down: false };
  const guard =
    <A extends unknown[], R>(fn: (...a: A) => Promise<R>) =>
    async (...a: A) => {
      if (state.down) throw new Error("connection refused");
      return fn(...a);
    };
  const store: JobStore = {
    kind: "redis",
    get: guard(inner.get),
    put: guard(inner.put),
    remove: guard(inner.remove),
    ids: guard(inner.ids),
    sweep: inner.sweep,
    close: inner.close,
  };
  return { store, state };
}

describe("Redis + files when Redis is down", () => {
  async function open() {
    const root = await tempDir();
    const primary = await createFileJobStore({ dir: join(root, "primary"), ttlSeconds: 3600 });
    const filesDir = join(root, "jobs");
    const files = await createFileJobStore({ dir: filesDir, ttlSeconds: 3600 });
    const { store: failing, state } = flaky(primary);
    return { store: createMergedJobStore(failing, files), state, filesDir, primary };
  }

  it("lands writes in the files, and reads them (and those written before the outage) while Redis is down", async () => {
    const { store, state, filesDir } = await open();
    const before = job({ task: "before" });
    await store.put(before);
    state.down = true;
    const during = job({ task: "during" });
    await store.put(during);
    expect(existsSync(join(filesDir, `${during.id}.json`))).toBe(true);
    expect(await store.get(during.id)).toEqual(during);
    expect((await listJobs(store, { limit: 10 })).map((j) => j.task)).toEqual(["during", "before"]);
  });

  it("merges both once Redis is back: every job listed once, the latest copy wins", async () => {
    const { store, state, primary } = await open();
    const a = job({ task: "a" });
    await store.put(a);
    state.down = true;
    const runningInFiles = { ...a, status: "running" as const, updated_at: new Date(Date.now() + 10).toISOString() };
    await store.put(runningInFiles);
    const b = job({ task: "b" });
    await store.put(b);
    state.down = false;
    // Redis still holds the older copy of a; the file copy is newer and wins.
    expect((await primary.get(a.id))!.status).toBe("queued");
    expect((await store.get(a.id))!.status).toBe("running");
    expect((await listJobs(store, { limit: 10 })).map((j) => [j.task, j.status])).toEqual([
      ["b", "queued"],
      ["a", "running"],
    ]);
    // A later write reaches Redis again and wins over the file copy.
    const done = { ...runningInFiles, status: "succeeded" as const, updated_at: new Date(Date.now() + 20).toISOString() };
    await store.put(done);
    expect((await store.get(a.id))!.status).toBe("succeeded");
    expect((await listJobs(store, { limit: 10, status: "running" })).length).toBe(0);
  });
});

describe("Redis that is not there at start-up", () => {
  it("starts anyway: job writes land in the files and are readable", async () => {
    const dead = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = dead.port;
    dead.stop(true); // nothing listens there now
    const kv = await connectRedisLazily({ url: `redis://127.0.0.1:${port}`, keyPrefix: "t", connectTimeoutMs: 500, retryMs: 60_000 });
    cleanups.push(() => kv.close());
    const dir = join(await tempDir(), "jobs");
    const store = createMergedJobStore(createKvJobStore(kv, { ttlSeconds: 60 }), await createFileJobStore({ dir, ttlSeconds: 60 }));
    const j = job();
    await store.put(j);
    expect(readdirSync(dir)).toEqual([`${j.id}.json`]);
    expect(await store.get(j.id)).toEqual(j);
    expect(await kv.ping()).toBe(false);
  });
});
