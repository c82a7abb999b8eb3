// No job is dropped for want of a disk (issue 37, part 3), against the real orchestrator with
// SERVICE_JOBS_DIR on a 4 MB tmpfs of the test's own and the fixture agent: while the disk is
// full a new job is refused with 507 storage_full and /admin/status names the full path; a job
// the worker cannot record as started goes back to the queue; a job whose agent exits is never
// left `running`; and once space is back every acknowledged job runs, once, with no restart.
import { afterAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Job } from "../src/orchestrator/jobs/schema";
import { finished, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { canMountTmpfs, mountTmpfs, type Tmpfs, under } from "./support/tmpfs";
import { until } from "./support/until";

describe.skipIf(!canMountTmpfs)("the job store's disk fills up", () => {
  let fs: Tmpfs | undefined;
  let orch: Orchestrator | undefined;
  afterAll(async () => {
    await orch?.stop("SIGKILL");
    await fs?.unmount();
  });

  it("refuses new jobs with 507 while full, then runs every acknowledged job exactly once when space is back, none left running", async () => {
    fs = mountTmpfs(4);
    const jobsDir = under(fs, "jobs");
    orch = await startOrchestrator({
      env: { SERVICE_JOBS_DIR: jobsDir, SERVICE_MAX_PARALLEL_JOBS: "2", FAKE_CLAUDE_DELAY_MS: "150" },
    });
    const o = orch;
    const acked: string[] = [];
    for (let i = 0; i < 12; i++) acked.push((await o.submit({ task: `Explain job f${i}` })).id);
    // Two agents run, ten jobs wait; the disk fills under them.
    await until(async () => (await Promise.all(acked.map((id) => o.job(id)))).some((j) => j.status === "running"), 10_000);
    fs.fill();
    try {
      const refused = await o.call("/jobs", { method: "POST", json: { task: "Explain job refused" } });
      expect(refused.status).toBe(507);
      const body = (await refused.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("storage_full");
      expect(body.error.message).toContain(jobsDir);
      expect(refused.headers.get("retry-after")).not.toBeNull();
      // A cancel cannot be recorded either: 507, and the job is not cancelled (it runs later).
      const cancel = await o.call(`/jobs/${acked.at(-1)}`, { method: "DELETE" });
      expect(cancel.status).toBe(507);
      expect(((await cancel.json()) as { error: { code: string } }).error.code).toBe("storage_full");
      const status = (await (await o.call("/admin/status")).json()) as { storage: Array<{ role: string; path: string; full: boolean }> };
      expect(status.storage).toContainEqual(expect.objectContaining({ role: "SERVICE_JOBS_DIR", path: jobsDir, full: true }));
      // The running agents exit while nothing can be written: what the service answers says they ended.
      await until(async () => {
        const log = o.agentLog().filter((e) => e.event === "start");
        return log.length >= 2;
      }, 10_000);
      await until(async () => (await Promise.all(acked.map((id) => o.job(id)))).every((j) => j.status !== "running"), {
        ms: 15_000,
        what: "no job to read running once its agent has exited",
      });
    } finally {
      fs.free();
    }
    // Space back, same process: every acknowledged job ends succeeded, each agent started once.
    const jobs = await until(
      async () => {
        const all = await Promise.all(acked.map((id) => o.job(id)));
        return all.every(finished) && all;
      },
      { ms: 60_000, what: "every acknowledged job to finish" },
    );
    expect(jobs.filter((j) => j.status !== "succeeded").map((j) => `${j.id}: ${j.status} ${j.error}`)).toEqual([]);
    const starts = new Map<string, number>();
    for (const e of o.agentLog()) {
      const task = e.event === "start" ? e.argv?.find((a) => a.startsWith("Explain job ")) : undefined;
      if (task) starts.set(task, (starts.get(task) ?? 0) + 1);
    }
    expect([...starts.values()].every((n) => n === 1)).toBe(true);
    expect(starts.size).toBe(acked.length);
    // And the records on disk say so (what a restart or another pod would read).
    await until(() => acked.every((id) => (JSON.parse(readFileSync(join(jobsDir, `${id}.json`), "utf8")) as Job).status === "succeeded"), {
      ms: 15_000,
      what: "every job file to say succeeded",
    });
    // Each job's event log tells its whole story too: the statuses and the totals written while
    // the disk was full are written once space is back, in order.
    for (const id of acked) {
      const sse = await (await o.call(`/jobs/${id}/events`)).text();
      const events = sse
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => JSON.parse(l.slice(6)) as { type: string; status?: string });
      const statuses = events.filter((e) => e.type === "status").map((e) => e.status);
      expect({ id, statuses: statuses.filter((s, i) => s !== statuses[i - 1]) }).toEqual({ id, statuses: ["queued", "running", "succeeded"] });
      expect({ id, usage: events.some((e) => e.type === "usage") }).toEqual({ id, usage: true });
    }
    // Space is back: a new job is taken again.
    expect((await o.call("/jobs", { method: "POST", json: { task: "Explain job after" } })).status).toBe(202);
  }, 120_000);

  it("starts on a full disk after a crash, and records the job the crash interrupted failed once space is back", async () => {
    await orch?.stop("SIGKILL");
    await fs?.unmount();
    fs = mountTmpfs(4);
    const jobsDir = under(fs, "jobs");
    const home = (await import("./support/main-process")).tempDir("full-orch-home");
    const env = { SERVICE_JOBS_DIR: jobsDir, FAKE_CLAUDE_HANG: "1" };
    orch = await startOrchestrator({ home, env });
    const job = await orch.submit({ task: "Explain job crash" });
    await orch.until(job.id, (j) => j.status === "running");
    await orch.stop("SIGKILL");
    // Its agent outlives it (its own process group).
    for (const e of orch.agentLog()) {
      try {
        if (e.pid) process.kill(e.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    fs.fill();
    try {
      orch = await startOrchestrator({ home, env });
      // Not left running: the pod says failed (interrupted) though it cannot write it yet.
      const seen = await orch.job(job.id);
      expect(seen.status).toBe("failed");
      expect(seen.error).toContain("restarted");
    } finally {
      fs.free();
    }
    await until(() => (JSON.parse(readFileSync(join(jobsDir, `${job.id}.json`), "utf8")) as Job).status === "failed", {
      ms: 15_000,
      what: "the job file to say failed",
    });
  }, 120_000);
});
