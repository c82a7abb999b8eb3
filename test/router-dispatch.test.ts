// POST /dispatch: the bundle is assembled and kept (vault or object store) and submitted to
// the job orchestrator; an unreachable orchestrator loses nothing.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ObjectStore, startObjectStore } from "./fixtures/object-store";
import { AGENT, makeHub } from "./support/agent-mode";
import { type MainProcess, REPO, startMain, tempDir } from "./support/main-process";
import { KEY, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { routerClient, ROUTER_TEST_TOKEN as TOKEN } from "./support/router-client";
import { until } from "./support/until";

describe("POST /dispatch to the real job orchestrator", () => {
  let orch: Orchestrator;
  let main: MainProcess;
  let vault: string;
  const api = routerClient(() => main.routerUrl!);
  beforeAll(async () => {
    orch = await startOrchestrator();
    vault = join(tempDir("dispatch-real"), "v");
    main = await startMain(
      ["--only", "router", "--vault", vault],
      { KB_ROUTER_TOKEN: TOKEN, ORCHESTRATOR_URL: orch.url, SERVICE_API_KEY: KEY },
      { expect: ["router"] },
    );
    await api.ingest("# Flaky deploy test\nThe deploy test races the health check; retry with backoff.", ["deploy"]);
  });
  afterAll(async () => {
    await main.stop();
    await orch.stop();
  });

  it("submits the bundle as a job that the orchestrator runs, and keeps the bundle", async () => {
    const res = await api.call("/dispatch", { task: "Review the flaky deploy test", query: "deploy test", profile: "review" });
    expect(res.status).toBe(202);
    const { status, bundle, sources, job_id } = res.body as { status: string; bundle: string; sources: string[]; job_id: string };
    expect(status).toBe("queued");
    expect(bundle).toMatch(/^bundles\/.+\.md$/);
    expect(sources).toHaveLength(1);
    expect(sources[0]).toStartWith("ingest/");
    const job = await orch.until(job_id, (j) => j.status === "succeeded" || j.status === "failed");
    expect(job.status).toBe("succeeded");
    expect(job.profile).toBe("review");
    expect(job.task).toContain("# Task\n\nReview the flaky deploy test");
    expect(job.task).toContain("Flaky deploy test (ingest/");
    // The orchestrator trims the task it stores; the bundle file ends with a newline.
    expect(readFileSync(join(vault, bundle), "utf8").trimEnd()).toBe(job.task.trimEnd());
  });

  it("bundles the notes its sources link to with include_linked, and not without", async () => {
    mkdirSync(join(vault, "raw"), { recursive: true });
    writeFileSync(join(vault, "raw", "healthcheck-race.md"), "# Healthcheck race\nThe probe fires before warmup; see [[backoff-policy]].\n");
    writeFileSync(join(vault, "raw", "backoff-policy.md"), "# Backoff policy\nRetry three times, doubling from 200 ms.\n");
    expect((await api.call("/tick", { wait: true })).body.status).toBe("succeeded");
    const res = await api.call("/dispatch", { task: "Fix the probe", query: "probe warmup", include_linked: true });
    expect(res.status).toBe(202);
    expect(res.body.sources).toEqual(["raw/healthcheck-race.md"]);
    expect(res.body.linked).toEqual(["raw/backoff-policy.md"]);
    const bundle = readFileSync(join(vault, res.body.bundle), "utf8");
    expect(bundle).toContain("## Linked notes\n\n### Backoff policy (raw/backoff-policy.md), linked from [1]\n\n# Backoff policy\nRetry three times");
    const plain = await api.call("/dispatch", { task: "Fix the probe", query: "probe warmup" });
    expect(plain.body.linked).toBeUndefined();
    expect(readFileSync(join(vault, plain.body.bundle), "utf8")).not.toContain("## Linked notes");
  });

  it("answers 400 with the orchestrator's code and message when it refuses the job's input, keeping the bundle", async () => {
    const res = await api.call("/dispatch", { task: "Fix it", profile: "no-such-profile" });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("unknown_profile");
    expect(res.body.error.message).toContain("no-such-profile");
    expect(res.body.error.details.orchestrator_status).toBe(400);
    expect(existsSync(join(vault, res.body.error.details.bundle))).toBe(true);
  });

  it("answers 502 orchestrator_auth_failed naming SERVICE_API_KEY when the orchestrator refuses the router's key", async () => {
    const other = await startMain(
      ["--only", "router", "--vault", join(tempDir("dispatch-key"), "v")],
      { KB_ROUTER_TOKEN: TOKEN, ORCHESTRATOR_URL: orch.url, SERVICE_API_KEY: "wrong" },
      { expect: ["router"] },
    );
    try {
      const res = await routerClient(() => other.routerUrl!).call("/dispatch", { task: "anything" });
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe("orchestrator_auth_failed");
      expect(res.body.error.message).toContain("SERVICE_API_KEY");
      expect(res.body.error.message).not.toContain("wrong");
      expect(res.body.error.details.orchestrator_status).toBe(401);
    } finally {
      await other.stop();
    }
  });
});

describe("POST /dispatch to an agent-mode orchestrator", () => {
  let orch: Orchestrator;
  let main: MainProcess;
  beforeAll(async () => {
    const home = tempDir("dispatch-agent-mode");
    orch = await startOrchestrator({ env: { SERVICE_HUB_URL: await makeHub(join(home, "hub")), HUB_AGENT: AGENT, SERVICE_CLONE_ROOT: join(home, "clones") } });
    main = await startMain(
      ["--only", "router", "--vault", join(home, "vault")],
      { KB_ROUTER_TOKEN: TOKEN, ORCHESTRATOR_URL: orch.url, SERVICE_API_KEY: KEY },
      { expect: ["router"] },
    );
  });
  afterAll(async () => {
    await main?.stop();
    await orch?.stop();
  });

  it("passes on the orchestrator's 409 (agent_mode) as a 409 with its code and message", async () => {
    const res = await routerClient(() => main.routerUrl!).call("/dispatch", { task: "Fix it", repo_url: "https://github.com/acme/app" });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("agent_mode");
    expect(res.body.error.message).toContain("repo_url");
    expect(res.body.error.details).toMatchObject({ orchestrator_status: 409, orchestrator_code: "agent_mode" });
    expect(res.body.error.details.bundle).toMatch(/^bundles\/.+\.md$/);
  });
});

describe("POST /dispatch in the one-process stack", () => {
  let main: MainProcess;
  let vault: string;
  beforeAll(async () => {
    vault = join(tempDir("dispatch-stack"), "v");
    // Not the default 8200: the router's default ORCHESTRATOR_URL must follow the orchestrator wherever it listens.
    main = await startMain(["--vault", vault], {
      KB_ROUTER_TOKEN: TOKEN,
      SERVICE_API_KEYS: `${KEY},second-key`,
      SERVICE_CLAUDE_BINARY: join(REPO, "test", "fixtures", "fake-claude"),
      SERVICE_OTEL_ENABLED: "false",
    });
  });
  afterAll(() => main?.stop());

  it("submits to its own orchestrator on the port it got, with its first key, and the job runs", async () => {
    expect(new URL(main.orchestratorUrl!).port).not.toBe("8200");
    const res = await routerClient(() => main.routerUrl!).call("/dispatch", { task: "Say hello" });
    expect(res.status).toBe(202);
    const jobUrl = `${main.orchestratorUrl}/jobs/${res.body.job_id}`;
    const job = await until(
      async () => {
        const j = (await (await fetch(jobUrl, { headers: { authorization: `Bearer ${KEY}` } })).json()) as { status: string; task: string };
        return j.status === "succeeded" || j.status === "failed" ? j : undefined;
      },
      { ms: 20_000, what: "the dispatched job to finish" },
    );
    expect(job.status).toBe("succeeded");
    expect(job.task).toContain("# Task\n\nSay hello");
  });
});

describe("POST /dispatch to an orchestrator that does not answer", () => {
  let main: MainProcess;
  let silent: ReturnType<typeof Bun.serve>;
  const held: Array<() => void> = [];
  beforeAll(async () => {
    // Accepts the connection and never answers.
    silent = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, fetch: () => new Promise<Response>((r) => held.push(() => r(new Response("late")))) });
    main = await startMain(
      ["--only", "router", "--vault", join(tempDir("dispatch-slow"), "v")],
      { KB_ROUTER_TOKEN: TOKEN, ORCHESTRATOR_URL: `http://127.0.0.1:${silent.port}`, DISPATCH_TIMEOUT_MS: "500" },
      { expect: ["router"] },
    );
  });
  afterAll(async () => {
    await main?.stop();
    for (const r of held) r();
    await silent?.stop(true);
  });

  it("answers 504 orchestrator_timeout after DISPATCH_TIMEOUT_MS, keeping the bundle", async () => {
    const started = performance.now();
    const res = await routerClient(() => main.routerUrl!).call("/dispatch", { task: "anything" });
    expect(res.status).toBe(504);
    expect(res.body.error.code).toBe("orchestrator_timeout");
    expect(res.body.error.details.bundle).toMatch(/^bundles\/.+\.md$/);
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

describe("POST /dispatch with the orchestrator down", () => {
  let main: MainProcess;
  let vault: string;
  const api = routerClient(() => main.routerUrl!);
  beforeAll(async () => {
    vault = join(tempDir("dispatch"), "v");
    main = await startMain(["--only", "router", "--vault", vault], { KB_ROUTER_TOKEN: TOKEN, ORCHESTRATOR_URL: "http://127.0.0.1:1" }, { expect: ["router"] });
    await api.ingest("# Flaky deploy test\nThe deploy test races the health check; retry with backoff.", ["deploy"]);
  });
  afterAll(() => main.stop());

  it("answers 502 and keeps the bundle in the vault", async () => {
    const res = await api.call("/dispatch", { task: "Fix the flaky deploy test", query: "deploy test" });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe("orchestrator_unreachable");
    const kept = res.body.error.details.bundle as string;
    expect(kept).toMatch(/^bundles\/\d{8}T\d{6}Z-[0-9a-f]{8}\.md$/);
    const bundle = readFileSync(join(vault, kept), "utf8");
    expect(bundle).toStartWith("# Task\n\nFix the flaky deploy test\n");
    expect(bundle).toContain("## Sources");
    expect(bundle).toMatch(/- \[1\] Flaky deploy test \(ingest\/.+\.md\)/);
  });

  it("answers 400 to an empty task without writing a bundle", async () => {
    const res = await api.call("/dispatch", { task: " " });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].path).toBe("task");
  });
});

describe("POST /dispatch with an object store", () => {
  let main: MainProcess;
  let store: ObjectStore;
  let vault: string;
  const api = routerClient(() => main.routerUrl!);
  beforeAll(async () => {
    store = startObjectStore();
    vault = join(tempDir("dispatch-s3"), "v");
    main = await startMain(
      ["--only", "router", "--vault", vault],
      {
        KB_ROUTER_TOKEN: TOKEN,
        ORCHESTRATOR_URL: "http://127.0.0.1:1",
        S3_BUCKET: "bundles-bucket",
        S3_ENDPOINT: store.url,
        S3_ACCESS_KEY_ID: "AKIAFIXTURE",
        S3_SECRET_ACCESS_KEY: "fixture-secret",
      },
      { expect: ["router"] },
    );
  });
  afterAll(async () => {
    await main.stop();
    store.stop();
  });

  it("puts the bundle in the bucket (signed) and not in the vault", async () => {
    const res = await api.call("/dispatch", { task: "Summarise the runbooks" });
    expect(res.status).toBe(502);
    const where = res.body.error.details.bundle as string;
    expect(where).toMatch(/^s3:\/\/bundles-bucket\/bundles\/.+\.md$/);
    const key = `bundles-bucket/${where.replace("s3://bundles-bucket/", "")}`;
    const obj = store.objects.get(key);
    expect(obj?.body).toStartWith("# Task\n\nSummarise the runbooks");
    expect(obj?.authorization).toContain("AKIAFIXTURE");
    expect(existsSync(join(vault, "bundles", `${res.body.error.details.bundle_id}.md`))).toBe(false);
  });

  it("answers 502 naming the object store when it refuses", async () => {
    store.failWith(403);
    try {
      const res = await api.call("/dispatch", { task: "x" });
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe("object_store_error");
    } finally {
      store.failWith(0);
    }
  });
});
