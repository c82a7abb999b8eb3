// Drain (issue 14, part 7), against the real process: a second drain while one waits does not
// end the first's draining; only the drain that set it, or DELETE /admin/drain, clears it.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { Job } from "../src/orchestrator/jobs/schema";
import { type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { until } from "./support/until";

describe("overlapping drains", () => {
  let o: Orchestrator;
  beforeAll(async () => {
    o = await startOrchestrator({ env: { FAKE_CLAUDE_HANG: "1", SERVICE_MAX_PARALLEL_JOBS: "1" } });
  });
  afterAll(() => o.stop("SIGKILL"));

  const agentRunning = async (job: Job, task: string) => {
    await o.until(job.id, (j) => j.status === "running");
    await until(() => o.agentLog().some((e) => e.event === "start" && e.argv?.includes(task)));
  };
  const stopJob = async (job: Job) => {
    await o.call(`/jobs/${job.id}`, { method: "DELETE" });
    return o.until(job.id, (j) => j.exit_code !== null);
  };
  const submitStatus = async () => (await o.call("/jobs", { method: "POST", json: { task: "probe" } })).status;

  it("a second drain (timeout=0) answers at once and leaves the first's draining in place", async () => {
    const job = await o.submit({ task: "Explain slowly" });
    await agentRunning(job, "Explain slowly");
    let firstAnswered = false;
    const first = o.call("/admin/drain?timeout=60", { method: "POST" }).then((r) => {
      firstAnswered = true;
      return r;
    });
    await until(async () => (await submitStatus()) === 503);

    const second = await o.call("/admin/drain?timeout=0", { method: "POST" });
    expect(await second.json()).toEqual({ drained: false, running: 1 });
    // Still draining: new jobs are refused; the first drain still waits.
    expect(await submitStatus()).toBe(503);
    expect(firstAnswered).toBe(false);

    await stopJob(job);
    expect(await (await first).json()).toEqual({ drained: true, running: 0 });
    // The drain that set the flag ended: jobs are taken again.
    const after = await o.submit({ task: "Explain afterwards" });
    await agentRunning(after, "Explain afterwards");
    await stopJob(after);
  });

  it("DELETE /admin/drain ends a drain at once: queued jobs start and new ones are taken", async () => {
    const job = await o.submit({ task: "Explain at length" });
    await agentRunning(job, "Explain at length");
    const draining = o.call("/admin/drain?timeout=60", { method: "POST" });
    await until(async () => (await submitStatus()) === 503);

    const res = await o.call("/admin/drain", { method: "DELETE" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ was_draining: true });
    const next = await o.submit({ task: "Explain next" });
    expect(next.status).toBe("queued");
    await stopJob(job);
    // The slot freed: the queued job starts although the first drain has not answered yet.
    await agentRunning(next, "Explain next");
    await stopJob(next);
    expect(await (await draining).json()).toEqual({ drained: true, running: 0 });
  });
});
