// The job service with an in-test executor: the gate, FIFO, cancel, wait, recovery, drain, shutdown.
import { afterEach, describe, expect, it } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type ServiceHarness, serviceHarness, succeeded } from "../../../test/support/job-service";
import { until } from "../../../test/support/until";
import { type HttpError, httpErrorOf } from "../../common/http-error";
import { type Job, JobSubmission } from "./schema";
import { CANCELLED_BY_REQUEST, INTERRUPTED_BY_RESTART, INTERRUPTED_BY_STOP } from "./transitions";

const submission = (task: string, extra: Record<string, unknown> = {}) => JobSubmission.parse({ task, ...extra });

let h: ServiceHarness;
afterEach(async () => {
  await h?.cleanup();
});

async function rejection(p: Promise<unknown>): Promise<HttpError> {
  try {
    await p;
  } catch (err) {
    // As the HTTP edge answers it.
    const answer = httpErrorOf(err);
    if (answer) return answer;
    throw err;
  }
  throw new Error("expected a rejection");
}

function storedJob(id: string, fields: Partial<Job>): Job {
  const at = new Date().toISOString();
  return {
    id,
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
    pod_name: "pod-a",
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

describe("submit", () => {
  it("stores a queued job with every documented field and writes {id}.json", async () => {
    h = await serviceHarness();
    const job = await h.service.submit(submission("Fix the parser", { repo_url: "https://github.com/acme/w.git", base_ref: "main" }));
    expect(job).toMatchObject({
      status: "queued",
      profile: "code",
      task: "Fix the parser",
      repo_url: "https://github.com/acme/w.git",
      base_ref: "main",
      pod_name: "pod-a",
    });
    expect(Object.keys(job).sort()).toEqual(
      [
        "id",
        "status",
        "profile",
        "task",
        "repo_url",
        "base_ref",
        "session_id",
        "exit_code",
        "pr_url",
        "branch",
        "error",
        "output",
        "pod_name",
        "created_at",
        "started_at",
        "finished_at",
        "updated_at",
        "usage",
        "cost_usd",
        "total_cost_usd",
        "num_turns",
        "duration_ms",
        "max_budget_usd",
        "recall",
        "api_retry",
      ].sort(),
    );
    const file = join(h.dir, "jobs", `${job.id}.json`);
    expect(existsSync(file)).toBe(true);
    expect(JSON.parse(readFileSync(file, "utf8")).id).toBe(job.id);
  });

  it("resolves profile auto from the task", async () => {
    h = await serviceHarness();
    expect((await h.service.submit(submission("Review the PR"))).profile).toBe("review");
    expect((await h.service.submit(submission("Write code"))).profile).toBe("code");
  });

  it("refuses an unknown profile with 400 unknown_profile naming the known ones", async () => {
    h = await serviceHarness();
    const err = await rejection(h.service.submit(submission("x", { profile: "nope" })));
    expect(err.status).toBe(400);
    expect(err.code).toBe("unknown_profile");
    expect(err.message).toContain("code, review");
  });

  it("runs the job and records the executor's result", async () => {
    h = await serviceHarness();
    const job = await h.service.submit(submission("do it", { session_id: "6f1c1f0e-5b0a-4c1e-9d43-2f5f8e0b7a11" }));
    await until(() => h.executor.isRunning(job.id));
    expect(h.executor.requests.get(job.id)!.job).toEqual({
      id: job.id,
      task: "do it",
      repo_url: undefined,
      base_ref: undefined,
      session_id: "6f1c1f0e-5b0a-4c1e-9d43-2f5f8e0b7a11",
      created_at: job.created_at,
    });
    const running = await h.service.get(job.id);
    expect(running.status).toBe("running");
    expect(running.started_at).not.toBeNull();
    h.executor.finish(job.id, { ...succeeded("all good"), pr_url: "https://github.com/acme/w/pull/1", branch: "service/x" });
    const done = await h.service.wait(job.id);
    expect(done).toMatchObject({
      status: "succeeded",
      exit_code: 0,
      output: "all good",
      pr_url: "https://github.com/acme/w/pull/1",
      branch: "service/x",
      cost_usd: 0.01,
      error: null,
    });
    expect(done.usage).toEqual({ input_tokens: 10, output_tokens: 5 });
    expect(done.finished_at! >= done.started_at!).toBe(true);
  });

  it("records a failed run with its error, and an executor that throws as failed", async () => {
    h = await serviceHarness();
    const a = await h.service.submit(submission("a"));
    await until(() => h.executor.isRunning(a.id));
    h.executor.finish(a.id, { status: "failed", exit_code: 2, output: "", error: "timed out after 3600 s", timed_out: true });
    expect(await h.service.wait(a.id)).toMatchObject({ status: "failed", exit_code: 2, error: "timed out after 3600 s" });

    const throwing = await serviceHarness({
      execute: async () => {
        throw new Error("boom");
      },
    });
    try {
      const b = await throwing.service.submit(submission("b"));
      expect(await throwing.service.wait(b.id)).toMatchObject({ status: "failed", error: "the job runner failed: boom" });
    } finally {
      await throwing.cleanup();
    }
  });
});

describe("the gate", () => {
  it("never runs more than SERVICE_MAX_PARALLEL_JOBS at once under 50 submissions, and runs them all", async () => {
    h = await serviceHarness({ maxParallel: 3 });
    h.executor.auto = 20;
    const jobs = await Promise.all(Array.from({ length: 50 }, (_, i) => h.service.submit(submission(`job ${i}`))));
    const done = await Promise.all(jobs.map((j) => h.service.wait(j.id)));
    expect(done.every((j) => j.status === "succeeded")).toBe(true);
    expect(h.executor.peak).toBe(3);
    expect(h.executor.started).toHaveLength(50);
  });

  it("starts queued jobs first in, first out", async () => {
    h = await serviceHarness({ maxParallel: 1 });
    const jobs: Job[] = [];
    for (let i = 0; i < 5; i++) jobs.push(await h.service.submit(submission(`job ${i}`)));
    for (const job of jobs) {
      await until(() => h.executor.isRunning(job.id));
      expect(h.executor.active).toBe(1);
      h.executor.finish(job.id);
    }
    expect(h.executor.started).toEqual(jobs.map((j) => j.id));
    await until(() => h.service.stats().running === 0);
    expect(h.service.stats().queued).toBe(0);
  });
});

describe("cancel", () => {
  it("cancels a queued job: it never starts", async () => {
    h = await serviceHarness({ maxParallel: 1 });
    const first = await h.service.submit(submission("first"));
    const second = await h.service.submit(submission("second"));
    await until(() => h.executor.isRunning(first.id));
    const cancelled = await h.service.cancel(second.id);
    expect(cancelled).toMatchObject({ status: "cancelled", error: CANCELLED_BY_REQUEST });
    expect(cancelled.finished_at).not.toBeNull();
    h.executor.finish(first.id);
    await h.service.wait(first.id);
    expect(h.executor.started).toEqual([first.id]);
    expect((await h.service.get(second.id)).status).toBe("cancelled");
  });

  it("cancels a running job: the executor's signal aborts and the exit code is added when it stops", async () => {
    h = await serviceHarness();
    const job = await h.service.submit(submission("long"));
    await until(() => h.executor.isRunning(job.id));
    const cancelled = await h.service.cancel(job.id);
    expect(cancelled.status).toBe("cancelled");
    expect(h.executor.requests.get(job.id)!.signal.aborted).toBe(true);
    const final = await h.service.wait(job.id);
    expect(final).toMatchObject({ status: "cancelled", exit_code: 143, output: "partial", error: CANCELLED_BY_REQUEST });
    expect(h.service.stats().running).toBe(0);
  });

  it("answers 409 job_finished for a finished job and 404 job_not_found for an unknown one", async () => {
    h = await serviceHarness();
    const job = await h.service.submit(submission("quick"));
    await until(() => h.executor.isRunning(job.id));
    h.executor.finish(job.id);
    await h.service.wait(job.id);
    const finished = await rejection(h.service.cancel(job.id));
    expect([finished.status, finished.code]).toEqual([409, "job_finished"]);
    for (const id of ["0194a3b2-6c1e-7f00-8a3b-1c2d3e4f5a6b", "../../etc/passwd", "nope"]) {
      const missing = await rejection(h.service.cancel(id));
      expect([missing.status, missing.code]).toEqual([404, "job_not_found"]);
      expect((await rejection(h.service.get(id))).status).toBe(404);
    }
  });

  it("stops a job running in another process when that process sees the cancel in the store", async () => {
    h = await serviceHarness();
    const job = await h.service.submit(submission("elsewhere"));
    await until(() => h.executor.isRunning(job.id));
    const other = h.another();
    expect((await other.cancel(job.id)).status).toBe("cancelled");
    await until(() => !h.executor.isRunning(job.id));
    expect(h.executor.requests.get(job.id)!.signal.aborted).toBe(true);
    expect((await h.service.wait(job.id)).status).toBe("cancelled");
  });
});

describe("wait", () => {
  it("answers with the job as it is when the bound passes", async () => {
    h = await serviceHarness();
    const job = await h.service.submit(submission("slow"));
    await until(() => h.executor.isRunning(job.id));
    const t0 = performance.now();
    const seen = await h.service.wait(job.id, { timeoutMs: 100 });
    expect(seen.status).toBe("running");
    expect(performance.now() - t0).toBeLessThan(2_000);
  });

  it("stops waiting when the caller goes away", async () => {
    h = await serviceHarness();
    const job = await h.service.submit(submission("slow"));
    const ctl = new AbortController();
    const waiting = h.service.wait(job.id, { signal: ctl.signal });
    ctl.abort();
    expect(["queued", "running"]).toContain((await waiting).status);
  });
});

describe("restart recovery", () => {
  it("marks this pod's running jobs failed, queues its queued jobs again, and leaves other pods' jobs alone", async () => {
    h = await serviceHarness({ maxParallel: 1 });
    const ids = [Bun.randomUUIDv7(), Bun.randomUUIDv7(), Bun.randomUUIDv7(), Bun.randomUUIDv7(), Bun.randomUUIDv7()];
    const [crashed, queued1, queued2, otherRunning, otherQueued] = ids as [string, string, string, string, string];
    await h.store.put(storedJob(crashed, { status: "running", started_at: new Date().toISOString() }));
    await h.store.put(storedJob(queued1, {}));
    await h.store.put(storedJob(queued2, {}));
    await h.store.put(storedJob(otherRunning, { status: "running", pod_name: "pod-b" }));
    await h.store.put(storedJob(otherQueued, { pod_name: "pod-b" }));

    expect(await h.service.recover()).toEqual({ failed: 1, requeued: 2 });
    const failed = await h.service.get(crashed);
    expect(failed).toMatchObject({ status: "failed", error: INTERRUPTED_BY_RESTART });
    expect(failed.finished_at).not.toBeNull();

    await until(() => h.executor.isRunning(queued1));
    h.executor.finish(queued1);
    await until(() => h.executor.isRunning(queued2));
    h.executor.finish(queued2);
    expect((await h.service.wait(queued2)).status).toBe("succeeded");
    expect(h.executor.started).toEqual([queued1, queued2]);
    expect((await h.service.get(otherRunning)).status).toBe("running");
    expect((await h.service.get(otherQueued)).status).toBe("queued");
  });
});

describe("drain", () => {
  it("refuses new jobs with 503 and Retry-After, waits for the running one, then clears the flag", async () => {
    h = await serviceHarness();
    const job = await h.service.submit(submission("running"));
    await until(() => h.executor.isRunning(job.id));
    let result: unknown;
    const draining = h.service.drain(10).then((r) => (result = r));
    // The flag is in the key-value store, where another process (service-cli drain) looks.
    await until(async () => (await h.kv.get("draining:pod-a")) !== null);
    const refused = await rejection(h.service.submit(submission("late")));
    expect([refused.status, refused.code]).toEqual([503, "draining"]);
    expect(Number(refused.headers?.["Retry-After"])).toBeGreaterThan(0);
    // A check that nothing happens: the drain must not end while the job still runs.
    await Bun.sleep(50);
    expect(result).toBeUndefined();
    h.executor.finish(job.id);
    await draining;
    expect(result).toEqual({ drained: true, running: 0 });
    expect(await h.kv.get("draining:pod-a")).toBeNull();
    expect(await h.service.isDraining()).toBe(false);
    expect((await h.service.submit(submission("after"))).status).toBe("queued");
  });

  it("does not start queued jobs while draining, and starts them after", async () => {
    h = await serviceHarness({ maxParallel: 1 });
    const first = await h.service.submit(submission("first"));
    const second = await h.service.submit(submission("second"));
    await until(() => h.executor.isRunning(first.id));
    const draining = h.service.drain(10);
    await until(() => h.service.isDraining());
    h.executor.finish(first.id);
    expect(await draining).toEqual({ drained: true, running: 0 });
    expect(h.executor.started).toEqual([first.id]);
    await until(() => h.executor.isRunning(second.id));
  });

  it("answers drained: false with the count when the timeout passes first", async () => {
    h = await serviceHarness();
    const job = await h.service.submit(submission("stuck"));
    await until(() => h.executor.isRunning(job.id));
    expect(await h.service.drain(0.2)).toEqual({ drained: false, running: 1 });
    expect(await h.service.isDraining()).toBe(false);
  });

  it("honours a draining flag set by another process", async () => {
    h = await serviceHarness();
    await h.kv.set("draining:pod-a", "{}", { ttlSeconds: 60 });
    expect((await rejection(h.service.submit(submission("x")))).code).toBe("draining");
  });
});

describe("close", () => {
  it("stops running jobs and records them failed; queued jobs stay queued for the next start", async () => {
    h = await serviceHarness({ maxParallel: 1 });
    const running = await h.service.submit(submission("running"));
    const queued = await h.service.submit(submission("queued"));
    await until(() => h.executor.isRunning(running.id));
    await h.service.close();
    expect(await h.service.get(running.id)).toMatchObject({ status: "failed", error: INTERRUPTED_BY_STOP, exit_code: 143 });
    expect((await h.service.get(queued.id)).status).toBe("queued");
    expect((await rejection(h.service.submit(submission("late")))).code).toBe("shutting_down");

    const next = h.another({ podName: "pod-a" });
    expect(await next.recover()).toEqual({ failed: 0, requeued: 1 });
    await until(() => h.executor.isRunning(queued.id));
  });
});

describe("list", () => {
  it("lists newest first with limit and status", async () => {
    h = await serviceHarness({ maxParallel: 1 });
    const jobs: Job[] = [];
    for (let i = 0; i < 5; i++) jobs.push(await h.service.submit(submission(`job ${i}`)));
    await until(() => h.executor.isRunning(jobs[0]!.id));
    const all = await h.service.list({ limit: 20 });
    expect(all.map((j) => j.id)).toEqual(jobs.map((j) => j.id).reverse());
    expect((await h.service.list({ limit: 2 })).map((j) => j.id)).toEqual([jobs[4]!.id, jobs[3]!.id]);
    expect((await h.service.list({ limit: 20, status: "running" })).map((j) => j.id)).toEqual([jobs[0]!.id]);
    expect(await h.service.list({ limit: 20, status: "failed" })).toEqual([]);
  });
});
