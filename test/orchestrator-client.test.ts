// ServiceClient (src/orchestrator/client.ts) against the real orchestrator process with the
// fixture agent: every method, and its typed errors (ApiError with the status and the error
// body's code, ConnectionError when nothing answers).
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { ApiError, ConnectionError, type Job, ServiceClient } from "../src/orchestrator/client";
import { makeRemote, type Remote } from "./fixtures/git-remote";
import { KEY, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { deadPort } from "./support/service-cli";
import { until } from "./support/until";

let o: Orchestrator;
let hanging: Orchestrator;
let remote: Remote;
let client: ServiceClient;
beforeAll(async () => {
  remote = makeRemote();
  [o, hanging] = await Promise.all([startOrchestrator(), startOrchestrator({ env: { FAKE_CLAUDE_HANG: "1", SERVICE_MAX_PARALLEL_JOBS: "1" } })]);
  client = new ServiceClient({ baseUrl: o.url, token: KEY });
});
afterAll(async () => {
  await Promise.all([o.stop(), hanging.stop()]);
});

const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => err,
  );

describe("ServiceClient", () => {
  it("health() needs no key and names the service", async () => {
    expect(await new ServiceClient({ baseUrl: o.url }).health()).toMatchObject({ status: "ok", service: "job-orchestrator" });
  });

  it("submitJob() answers the queued job at once; with wait, the finished one; getJob() and listJobs() show it", async () => {
    const queued = await client.submitJob({ task: "Explain the client", repo_url: remote.url });
    expect(queued).toMatchObject({ status: "queued", task: "Explain the client", repo_url: remote.url, profile: "review" });
    const done = await client.submitJob({ task: "Explain it and wait", wait: true });
    expect(done).toMatchObject({ status: "succeeded", exit_code: 0 });
    await until(async () => (await client.getJob(queued.id)).status === "succeeded", 15_000);
    const listed = await client.listJobs({ limit: 1, status: "succeeded" });
    expect(listed.jobs).toHaveLength(1);
    const all = await client.listJobs({ limit: 1000 });
    expect(all.jobs.map((j: Job) => j.id)).toEqual(expect.arrayContaining([queued.id, done.id]));
  });

  it("cancelJob() cancels a running job, then throws ApiError 409 job_finished", async () => {
    const h = new ServiceClient({ baseUrl: hanging.url, token: KEY });
    const job = await h.submitJob({ task: "Explain until cancelled" });
    await until(async () => (await h.getJob(job.id)).status === "running");
    expect((await h.cancelJob(job.id)).status).toBe("cancelled");
    expect(await errorOf(h.cancelJob(job.id))).toMatchObject({ status: 409, code: "job_finished" });
  });

  it("profiles(), sync() and drain() answer with their bodies", async () => {
    const { profiles } = await client.profiles();
    expect(profiles.map((p) => p.name).sort()).toEqual(["code", "review"]);
    const sync = await client.sync();
    expect(sync.results.map((r) => [r.target, r.status])).toEqual([
      ["agentihooks", "skipped"],
      ["bundle", "skipped"],
      ["agentihub", "skipped"],
    ]);
    expect(await client.drain(5)).toEqual({ drained: true, running: 0 });
  });

  it("throws ApiError with the status and code for bad input, an unknown job and a bad key", async () => {
    expect(await errorOf(client.submitJob({ task: "" }))).toMatchObject({ status: 400, code: "invalid_request" });
    expect(await errorOf(client.submitJob({ task: "x", repo_url: "ftp://example.com/r.git" }))).toMatchObject({ status: 400, code: "invalid_request" });
    expect(await errorOf(client.submitJob({ task: "x", profile: "nope" }))).toMatchObject({ status: 400, code: "unknown_profile" });
    expect(await errorOf(client.getJob("0194a3b2-6c1e-7f00-8a3b-1c2d3e4f5a6b"))).toMatchObject({ status: 404, code: "job_not_found" });
    const err = await errorOf(new ServiceClient({ baseUrl: o.url, token: "wrong" }).listJobs());
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("the agent-mode methods say agent mode is off on a standard-mode service", async () => {
    expect(await errorOf(client.completion({ message: "hello" }))).toMatchObject({ status: 503, code: "agent_mode_off" });
    expect(await errorOf(client.chatCompletion({ model: "x", messages: [{ role: "user", content: "hi" }] }))).toMatchObject({
      status: 503,
      code: "agent_mode_off",
    });
    expect((await client.models()).data).toEqual([]);
  });

  it("throws ConnectionError when nothing answers", async () => {
    const err = await errorOf(new ServiceClient({ baseUrl: `http://127.0.0.1:${deadPort()}`, token: KEY }).health());
    expect(err).toBeInstanceOf(ConnectionError);
  });
});
