// service-cli's commands that need no running server, as the compiled binary: serve (HTTP, and
// MCP over stdio with the SDK's client), drain (through the service, and through its stores
// when it does not answer: drained → 0, timed out → 1), init-shared-fs and hooks sync.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { parse as parseYaml } from "yaml";
import { createFileStore } from "../src/common/kv/file-store";
import type { Job } from "../src/orchestrator/jobs/schema";
import { loadProfiles } from "../src/orchestrator/profiles/load";
import { BUNDLED_PROFILES } from "../src/orchestrator/profiles/profile";
import { makeRemote } from "./fixtures/git-remote";
import { compiledClis } from "./support/cli";
import { tempDir } from "./support/main-process";
import { FAKE_AGENT_ENV, FIXTURES, KEY, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { deadPort, envFor, jobRecord, svc, writeJob } from "./support/service-cli";
import { until } from "./support/until";

// Each test starts processes (servers, the compiled CLI): more room than bun's 5 s default.
setDefaultTimeout(30_000);

let bin = "";
const started: Orchestrator[] = [];
const start = async (opts: Parameters<typeof startOrchestrator>[0] = {}) => {
  const s = await startOrchestrator(opts);
  started.push(s);
  return s;
};

beforeAll(async () => {
  bin = join(await compiledClis(), "service-cli");
}, 120_000);

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

const serviceEnv = (home: string): Record<string, string> => ({
  HOME: home,
  PATH: `${process.env.PATH}`,
  SERVICE_API_KEYS: KEY,
  SERVICE_CLAUDE_BINARY: join(FIXTURES, "fake-claude"),
  SERVICE_AGENT_ENV: FAKE_AGENT_ENV,
  SERVICE_OTEL_ENABLED: "false",
  SERVICE_POD_NAME: "pod-serve",
});

describe("serve", () => {
  it("serves the orchestrator over HTTP with the flags' host and port, and stops on SIGTERM with exit 0", async () => {
    const home = tempDir("serve-home");
    const port = deadPort();
    const proc = Bun.spawn([bin, "serve", "--port", port, "--host", "127.0.0.1"], { cwd: home, env: serviceEnv(home), stdout: "pipe", stderr: "pipe" });
    let out = "";
    const pump = (async () => {
      for await (const chunk of proc.stdout) out += new TextDecoder().decode(chunk);
    })();
    await until(() => out.includes(`job orchestrator on http://127.0.0.1:${port}`), 15_000);
    const env = envFor({ url: `http://127.0.0.1:${port}` });
    const status = await svc(["status"], env);
    expect(status.stdout).toContain("Service:  job-orchestrator");
    const run = await svc(["run", "Explain the serve command", "-w", "--json"], env);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as Job).status).toBe("succeeded");
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    await pump;
  });

  it("refuses a non-loopback bind without API keys: one line, exit 1", async () => {
    const home = tempDir("serve-home");
    const { SERVICE_API_KEYS: _, ...env } = serviceEnv(home);
    const r = await svc(["serve", "--host", "0.0.0.0", "--port", deadPort()], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("refusing to serve without auth");
  });

  it("stops on a bad configuration value as the server does: the variable named, exit 1", async () => {
    const home = tempDir("serve-home");
    const r = await svc(["serve", "--port", deadPort()], { ...serviceEnv(home), SERVICE_MAX_PARALLEL_JOBS: "many" });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("SERVICE_MAX_PARALLEL_JOBS");
    expect(r.stdout).toBe("");
  });

  it("exits 2 for a bad --port or --transport", async () => {
    const env = serviceEnv(tempDir("serve-home"));
    expect((await svc(["serve", "--port", "http"], env)).code).toBe(2);
    expect((await svc(["serve", "--transport", "carrier-pigeon"], env)).code).toBe(2);
  });

  it("--transport stdio serves the MCP tools on stdin/stdout (log lines on stderr) and exits 0 when stdin closes", async () => {
    const home = tempDir("serve-home");
    const transport = new StdioClientTransport({
      command: bin,
      args: ["serve", "--transport", "stdio"],
      env: { ...serviceEnv(home), LOG_LEVEL: "3" },
      stderr: "pipe",
      cwd: home,
    });
    let stderr = "";
    transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["cancel_job", "get_job", "list_jobs", "list_profiles", "run_task"]);
    const run = (await client.callTool({ name: "run_task", arguments: { task: "Explain stdio", wait: true } })) as unknown as { structuredContent: Job };
    expect(run.structuredContent).toMatchObject({ task: "Explain stdio", status: "succeeded", pod_name: "pod-serve" });
    const listed = (await client.callTool({ name: "list_jobs", arguments: {} })) as unknown as { structuredContent: { jobs: Job[] } };
    expect(listed.structuredContent.jobs.map((j) => j.id)).toEqual([run.structuredContent.id]);
    // The service logged while it ran the job, and none of it reached stdout (the client would have choked).
    await until(() => stderr.includes("[jobs]") || stderr.includes("job "), 5_000);
    const pid = transport.pid!;
    await client.close();
    await until(() => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 10_000);
  });
});

describe("serve over stdio: every tool, a cancel and bad input", () => {
  it("SERVICE_TRANSPORT=stdio alone selects stdio; get_job, cancel_job (SIGTERM to the agent), list_profiles, and refused input", async () => {
    const home = tempDir("serve-home");
    const record = join(home, "agent.jsonl");
    const agentLog = () =>
      existsSync(record)
        ? readFileSync(record, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { event: string; signal?: string; argv?: string[] })
        : [];
    const transport = new StdioClientTransport({
      command: bin,
      args: ["serve"],
      env: { ...serviceEnv(home), SERVICE_TRANSPORT: "stdio", FAKE_CLAUDE_HANG: "1", FAKE_CLAUDE_RECORD: record, LOG_LEVEL: "3" },
      stderr: "pipe",
      cwd: home,
    });
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(transport);
    type Result = { isError?: boolean; content: Array<{ text?: string }>; structuredContent?: unknown };
    const call = (name: string, args: Record<string, unknown> = {}) =>
      (client.callTool({ name, arguments: args }) as Promise<Result>).catch((err: Error) => ({ isError: true, content: [{ text: err.message }] }) as Result);
    try {
      const run = await call("run_task", { task: "Explain at length over stdio" });
      const job = run.structuredContent as Job;
      expect(job.status).toBe("queued");
      await until(() => agentLog().some((e) => e.event === "start" && e.argv?.includes("Explain at length over stdio")), 15_000);
      expect(((await call("get_job", { job_id: job.id })).structuredContent as Job).status).toBe("running");

      const cancel = await call("cancel_job", { job_id: job.id });
      expect((cancel.structuredContent as Job).status).toBe("cancelled");
      await until(() => agentLog().some((e) => e.event === "signal" && e.signal === "SIGTERM"), 10_000);
      const again = await call("cancel_job", { job_id: job.id });
      expect(again.isError).toBe(true);
      expect(again.content[0]!.text).toContain("job_finished");

      const profiles = (await call("list_profiles")).structuredContent as { profiles: Array<{ name: string }> };
      expect(profiles.profiles.map((p) => p.name).sort()).toEqual(["code", "review"]);

      for (const [args, field] of [
        [{ task: "" }, "task"],
        [{ task: "Explain it", repo_url: "relative/path" }, "repo_url"],
        [{ task: "Explain it", profile: "nope" }, "unknown_profile"],
      ] as const) {
        const bad = await call("run_task", args);
        expect(bad.isError).toBe(true);
        expect(bad.content[0]!.text).toContain(field);
      }
      const listed = (await call("list_jobs")).structuredContent as { jobs: Job[] };
      expect(listed.jobs.map((j) => j.id)).toEqual([job.id]);
    } finally {
      await client.close();
    }
  });
});

describe("drain", () => {
  it("through the service: waits while a job runs, refuses new jobs meanwhile, exits 0 once it has finished", async () => {
    // Each line of the agent's reply takes 150 ms: a job that runs for a second or so.
    const o = await start({ env: { FAKE_CLAUDE_DELAY_MS: "150" } });
    const job = await o.submit({ task: "Explain slowly" });
    await o.until(job.id, (j) => j.status === "running");
    let done = false;
    const draining = svc(["drain", "--timeout", "60"], envFor(o)).then((r) => {
      done = true;
      return r;
    });
    await until(async () => (await o.call("/jobs", { method: "POST", json: { task: "probe" } })).status === 503);
    expect(done).toBe(false);
    const r = await draining;
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).toContain("drained");
    expect((await o.job(job.id)).status).toBe("succeeded");
  });

  it("through the service: a stuck job makes it time out with exit 1", async () => {
    const o = await start({ env: { FAKE_CLAUDE_HANG: "1" } });
    const job = await o.submit({ task: "Explain forever" });
    await o.until(job.id, (j) => j.status === "running");
    const r = await svc(["drain", "--timeout", "1", "--json"], envFor(o));
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({ drained: false, running: 1, via: "server" });
    await o.call(`/jobs/${job.id}`, { method: "DELETE" });
  });

  it("through the stores (--via store): the service sees the flag and takes no new jobs while it lasts", async () => {
    // One job at a time: the probes below that get in before the flag is seen stay queued.
    const o = await start({ env: { FAKE_CLAUDE_HANG: "1", SERVICE_MAX_PARALLEL_JOBS: "1" } });
    const job = await o.submit({ task: "Explain forever" });
    await o.until(job.id, (j) => j.status === "running");
    // The CLI in the service's own environment (same HOME, pod name): what a preStop hook runs.
    const env = { ...envFor(o), HOME: o.home, SERVICE_POD_NAME: "pod-test" };
    let done = false;
    const draining = svc(["drain", "--via", "store", "--timeout", "8", "--json"], env).then((r) => {
      done = true;
      return r;
    });
    await until(async () => (await o.call("/jobs", { method: "POST", json: { task: "probe" } })).status === 503, 20_000);
    expect(done).toBe(false);
    const r = await draining;
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({ drained: false, running: 1, via: "store", pod: "pod-test" });
    // The flag is cleared at the end.
    await until(async () => (await o.call("/jobs", { method: "POST", json: { task: "Explain afterwards" } })).status === 202, 20_000);
    await o.call(`/jobs/${job.id}`, { method: "DELETE" });
  });

  it("with no service answering: drains through the stores, exit 0 once this pod's running job is stored finished", async () => {
    const home = tempDir("drain-home");
    const jobsDir = join(home, ".service", "jobs");
    const running = writeJob(jobsDir, jobRecord({ status: "running", pod_name: "pod-a", finished_at: null, exit_code: null }));
    writeJob(jobsDir, jobRecord({ status: "running", pod_name: "pod-b", finished_at: null }));
    const env = { HOME: home, SERVICE_PORT: deadPort(), SERVICE_POD_NAME: "pod-a" };
    let done = false;
    const draining = svc(["drain", "--timeout", "30"], env).then((r) => {
      done = true;
      return r;
    });
    // The drain has begun once its flag is in the pod's file store (it counts the running jobs next).
    const kv = await createFileStore({ dir: join(home, ".service", "kv") });
    await until(async () => (await kv.get("draining:pod-a")) !== null, { ms: 20_000, what: "the drain to set its flag" });
    // A check that nothing happens: past one poll round (drain.ts polls every 500 ms), a drain
    // that ignored the running job would have ended.
    await Bun.sleep(700);
    expect(done).toBe(false);
    writeJob(jobsDir, { ...running, status: "succeeded", finished_at: new Date().toISOString(), updated_at: new Date().toISOString() });
    const r = await draining;
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).toContain("the service does not answer: draining through its stores");
    expect(r.stdout + r.stderr).toContain("drained: no job of pod pod-a is running");
  });

  it("with no service answering and a job that stays running: exit 1 after --timeout", async () => {
    const home = tempDir("drain-home");
    writeJob(join(home, ".service", "jobs"), jobRecord({ status: "running", pod_name: "pod-a", finished_at: null }));
    const t0 = Date.now();
    const r = await svc(["drain", "--timeout", "1"], { HOME: home, SERVICE_PORT: deadPort(), SERVICE_POD_NAME: "pod-a" });
    expect(r.code).toBe(1);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(r.stderr).toContain("drain timed out after 1 s with 1 job(s) still running");
  });

  it("exits 2 for a bad --timeout", async () => {
    expect((await svc(["drain", "--timeout", "soon"], { HOME: tempDir("drain-home") })).code).toBe(2);
  });
});

describe("init-shared-fs", () => {
  it("creates profiles/, repos/, jobs/, job-state/ and copies the bundled profiles, which the service then reads", async () => {
    const root = join(tempDir("shared"), "fs");
    const r = await svc(["init-shared-fs", "--shared-root", root], { HOME: tempDir("home") });
    expect(r.code).toBe(0);
    for (const d of ["profiles", "repos", "jobs", "job-state"]) expect(existsSync(join(root, d))).toBe(true);
    const code = parseYaml(readFileSync(join(root, "profiles", "code", "profile.yml"), "utf8"));
    expect(code).toMatchObject({ name: "code", model: "sonnet", max_turns: 80, auto_pr: true });
    const set = await loadProfiles({ stateDir: tempDir("state"), hooksPath: "", hooksUrl: "", cloneRoot: "", sharedFsRoot: root });
    expect(set.errors).toEqual([]);
    for (const bundled of BUNDLED_PROFILES) {
      const { source: _s, ...fields } = bundled;
      const { source, dir: _d, ...read } = set.get(bundled.name)!;
      expect(source).toBe("shared");
      expect(read).toEqual(fields);
    }
  });

  it("defaults to SERVICE_SHARED_FS_ROOT, keeps what exists, and says so", async () => {
    const root = tempDir("shared");
    const env = { HOME: tempDir("home"), SERVICE_SHARED_FS_ROOT: root };
    await svc(["init-shared-fs"], env);
    const edited = join(root, "profiles", "review", "profile.yml");
    await Bun.write(edited, "name: review\nmodel: opus\nmax_turns: 5\n");
    const r = await svc(["init-shared-fs", "--json"], env);
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as { root: string; created: string[]; kept: string[] };
    expect(result.created).toEqual([]);
    expect(result.kept).toContain(edited);
    expect(readFileSync(edited, "utf8")).toContain("model: opus");
  });

  it("exits 2 without a root", async () => {
    const r = await svc(["init-shared-fs"], { HOME: tempDir("home") });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("SERVICE_SHARED_FS_ROOT");
  });
});

describe("hooks sync", () => {
  it("clones the hooks package from --url into the clone root, then fetches it on the next run", async () => {
    const remote = makeRemote();
    const home = tempDir("home");
    const env = { HOME: home, PATH: `${process.env.PATH}` };
    const first = await svc(["hooks", "sync", "--target", "agentihooks", "--url", remote.url, "--json"], env);
    expect(first.code).toBe(0);
    const { results } = JSON.parse(first.stdout) as { results: Array<{ target: string; status: string; detail: string }> };
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ target: "agentihooks", status: "synced" });
    expect(existsSync(join(home, ".service", "origin", ".git"))).toBe(true);
    remote.commit({ "NEW.md": "new\n" });
    const second = await svc(["hooks", "sync", "--target", "agentihooks", "--url", remote.url], env);
    expect(second.code).toBe(0);
    expect(second.stdout + second.stderr).toContain("updated");
  });

  it("syncs every target by default: unconfigured ones are skipped", async () => {
    const r = await svc(["hooks", "sync", "--json"], { HOME: tempDir("home"), PATH: `${process.env.PATH}` });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { results: Array<{ status: string }> }).results.map((x) => x.status)).toEqual(["skipped", "skipped", "skipped"]);
  });

  it("exits 1 when a target fails", async () => {
    const r = await svc(["hooks", "sync", "--url", `file://${tempDir("nothing")}/missing.git`], { HOME: tempDir("home"), PATH: `${process.env.PATH}` });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("agentihooks");
  });

  it("exits 2 for an unknown --target, or --url with a target other than the hooks package", async () => {
    const env = { HOME: tempDir("home") };
    expect((await svc(["hooks", "sync", "--target", "everything"], env)).code).toBe(2);
    expect((await svc(["hooks", "sync", "--target", "bundle", "--url", "https://example.com/x.git"], env)).code).toBe(2);
  });
});
