// The REST surface of jobs, profiles and admin over real HTTP, with the in-test executor.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startTestServer, type TestServer } from "../../../test/support/orchestrator-routes";
import { until } from "../../../test/support/until";
import type { Job } from "../jobs/schema";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ SERVICE_MAX_PARALLEL_JOBS: "1" });
});
afterAll(() => s.close());

const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string; details?: Array<{ path: string }> } }).error;
const submit = async (body: unknown) => s.call("/jobs", { method: "POST", json: body });

describe("POST /jobs", () => {
  it("answers 202 with the queued job and its Location", async () => {
    const res = await submit({ task: "Add a flag", repo_url: "https://github.com/acme/widgets.git", base_ref: "main" });
    expect(res.status).toBe(202);
    const job = (await res.json()) as Job;
    expect(res.headers.get("location")).toBe(`/jobs/${job.id}`);
    expect(job).toMatchObject({
      status: "queued",
      task: "Add a flag",
      profile: "code",
      repo_url: "https://github.com/acme/widgets.git",
      base_ref: "main",
      pod_name: "pod-a",
    });
    await until(() => s.h.executor.isRunning(job.id));
    s.h.executor.finish(job.id);
  });

  it("with wait: true answers 200 with the finished job", async () => {
    const answer = submit({ task: "quick one", wait: true });
    await until(() => s.h.executor.active === 1);
    s.h.executor.finish(s.h.executor.started.at(-1)!);
    const res = await answer;
    expect(res.status).toBe(200);
    expect(((await res.json()) as Job).status).toBe("succeeded");
  });

  const bad: Array<[string, unknown, string]> = [
    ["an empty task", { task: "" }, "task"],
    ["a blank task", { task: "   " }, "task"],
    ["no task", { repo_url: "https://github.com/a/b" }, "task"],
    ["a task that is not a string", { task: 42 }, "task"],
    ["an ftp repository URL", { task: "x", repo_url: "ftp://host/repo" }, "repo_url"],
    ["a repository URL that is not one", { task: "x", repo_url: "not a url" }, "repo_url"],
    ["a repository URL with a password", { task: "x", repo_url: "https://me:secret@github.com/a/b.git" }, "repo_url"],
    ["a repository URL that is an option", { task: "x", repo_url: "--upload-pack=evil" }, "repo_url"],
    ["a host that starts with - (an ssh option)", { task: "x", repo_url: "ssh://-oProxyCommand=x/r.git" }, "repo_url"],
    ["a relative repository path", { task: "x", repo_url: "some/dir" }, "repo_url"],
    ["a base_ref that is an option", { task: "x", base_ref: "--output=/etc/passwd" }, "base_ref"],
    ["a base_ref with ..", { task: "x", base_ref: "main..evil" }, "base_ref"],
    ["a session_id that is not a UUID", { task: "x", session_id: "abc" }, "session_id"],
    ["wait that is not a boolean", { task: "x", wait: "yes" }, "wait"],
  ];
  for (const [what, body, field] of bad) {
    it(`answers 400 invalid_request naming ${field} for ${what}`, async () => {
      const res = await submit(body);
      expect(res.status).toBe(400);
      const error = await errorOf(res);
      expect(error.code).toBe("invalid_request");
      expect(error.details?.map((d) => d.path)).toContain(field);
    });
  }

  it("answers 400 unknown_profile for a profile that does not exist", async () => {
    const res = await submit({ task: "x", profile: "nope" });
    expect(res.status).toBe(400);
    const error = await errorOf(res);
    expect(error.code).toBe("unknown_profile");
    expect(error.message).toContain("nope");
  });

  it("answers 400 invalid_json for a body that is not JSON", async () => {
    const res = await s.call("/jobs", { method: "POST", headers: { "content-type": "application/json" }, body: "{task" });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe("invalid_json");
  });

  it("answers 401 without the key", async () => {
    const res = await fetch(`${s.url}/jobs`, { method: "POST", body: JSON.stringify({ task: "x" }), headers: { "content-type": "application/json" } });
    expect(res.status).toBe(401);
  });
});

describe("GET /jobs", () => {
  it("lists newest first, 20 by default, with limit and status", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(((await (await submit({ task: `list ${i}` })).json()) as Job).id);
    const body = (await (await s.call("/jobs")).json()) as { jobs: Job[] };
    expect(body.jobs.slice(0, 3).map((j) => j.id)).toEqual([...ids].reverse());
    const two = (await (await s.call("/jobs?limit=2")).json()) as { jobs: Job[] };
    expect(two.jobs).toHaveLength(2);
    const queued = (await (await s.call("/jobs?status=queued&limit=1000")).json()) as { jobs: Job[] };
    expect(queued.jobs.every((j) => j.status === "queued")).toBe(true);
    for (const id of ids) await s.call(`/jobs/${id}`, { method: "DELETE" });
  });

  for (const query of ["limit=0", "limit=1001", "limit=abc", "limit=2.5", "status=done", "status="]) {
    it(`answers 400 for ${query}`, async () => {
      const res = await s.call(`/jobs?${query}`);
      expect(res.status).toBe(400);
      expect((await errorOf(res)).code).toBe("invalid_request");
    });
  }
});

describe("GET /jobs/{job_id} and DELETE /jobs/{job_id}", () => {
  it("gets a job by id", async () => {
    const job = (await (await submit({ task: "get me" })).json()) as Job;
    const res = await s.call(`/jobs/${job.id}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Job).id).toBe(job.id);
    await s.call(`/jobs/${job.id}`, { method: "DELETE" });
  });

  it("answers 404 job_not_found for an unknown id on GET and DELETE", async () => {
    for (const method of ["GET", "DELETE"]) {
      for (const id of ["0194a3b2-6c1e-7f00-8a3b-1c2d3e4f5a6b", "nope", "..%2F..%2Fetc%2Fpasswd"]) {
        const res = await s.call(`/jobs/${id}`, { method });
        expect(res.status).toBe(404);
        expect((await errorOf(res)).code).toBe("job_not_found");
      }
    }
  });

  it("cancels a running job and a queued job, then answers 409 job_finished", async () => {
    const running = (await (await submit({ task: "running" })).json()) as Job;
    const queued = (await (await submit({ task: "queued" })).json()) as Job;
    await until(() => s.h.executor.isRunning(running.id));
    const q = await s.call(`/jobs/${queued.id}`, { method: "DELETE" });
    expect(q.status).toBe(200);
    expect(((await q.json()) as Job).status).toBe("cancelled");
    const r = await s.call(`/jobs/${running.id}`, { method: "DELETE" });
    expect(r.status).toBe(200);
    expect((await r.json()) as Job).toMatchObject({ status: "cancelled", error: "cancelled by request" });
    expect(s.h.executor.requests.get(running.id)!.signal.aborted).toBe(true);
    const again = await s.call(`/jobs/${running.id}`, { method: "DELETE" });
    expect(again.status).toBe(409);
    expect((await errorOf(again)).code).toBe("job_finished");
    expect(s.h.executor.started).not.toContain(queued.id);
  });
});

describe("GET /profiles", () => {
  it("lists the profiles and the ones that failed to load", async () => {
    const res = await s.call("/profiles");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { profiles: Array<{ name: string; model: string }>; errors: unknown[] };
    expect(body.profiles.map((p) => p.name)).toEqual(["code", "review"]);
    expect(body.errors).toEqual([]);
  });
});

describe("POST /admin/sync", () => {
  it("reports every target, skipped when not configured", async () => {
    const res = await s.call("/admin/sync", { method: "POST" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { results: Array<{ target: string; status: string; detail: string }> };
    expect(body.results.map((r) => [r.target, r.status])).toEqual([
      ["agentihooks", "skipped"],
      ["bundle", "skipped"],
      ["agentihub", "skipped"],
    ]);
    expect(body.results[2]!.detail).toContain("SERVICE_HUB_URL");
  });

  it("syncs one target when asked", async () => {
    const body = (await (await s.call("/admin/sync?target=bundle", { method: "POST" })).json()) as { results: Array<{ target: string }> };
    expect(body.results.map((r) => r.target)).toEqual(["bundle"]);
  });

  it("answers 400 for an unknown target", async () => {
    const res = await s.call("/admin/sync?target=everything", { method: "POST" });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe("invalid_request");
  });
});

describe("POST /admin/drain", () => {
  it("waits for the running job, meanwhile POST /jobs answers 503 with Retry-After, then clears", async () => {
    const job = (await (await submit({ task: "drain me" })).json()) as Job;
    await until(() => s.h.executor.isRunning(job.id));
    let answered = false;
    const draining = s.call("/admin/drain?timeout=10", { method: "POST" }).then((r) => {
      answered = true;
      return r;
    });
    await until(async () => (await s.h.service.isDraining()) && (await s.h.kv.get("draining:pod-a")) !== null);
    const refused = await submit({ task: "too late" });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await errorOf(refused)).code).toBe("draining");
    expect(answered).toBe(false);
    s.h.executor.finish(job.id);
    const res = await draining;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ drained: true, running: 0 });
    expect((await submit({ task: "accepted again" })).status).toBe(202);
  });

  it("answers 400 for a bad timeout", async () => {
    for (const q of ["timeout=-1", "timeout=abc", "timeout=100000"]) {
      expect((await s.call(`/admin/drain?${q}`, { method: "POST" })).status).toBe(400);
    }
  });
});
