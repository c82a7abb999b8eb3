// POST /dispatch: the bundle is assembled and kept (vault or object store) and submitted to
// the job orchestrator; an unreachable orchestrator loses nothing.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ObjectStore, startObjectStore } from "./fixtures/object-store";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { KEY, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { routerClient, ROUTER_TEST_TOKEN as TOKEN } from "./support/router-client";

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

  it("answers 400 job_rejected when the orchestrator refuses the job's input, keeping the bundle", async () => {
    const res = await api.call("/dispatch", { task: "Fix it", profile: "no-such-profile" });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("job_rejected");
    expect(res.body.error.message).toContain("no-such-profile");
    expect(existsSync(join(vault, res.body.error.details.bundle))).toBe(true);
  });

  it("answers 502 when the orchestrator refuses the router's key", async () => {
    const other = await startMain(
      ["--only", "router", "--vault", join(tempDir("dispatch-key"), "v")],
      { KB_ROUTER_TOKEN: TOKEN, ORCHESTRATOR_URL: orch.url, SERVICE_API_KEY: "wrong" },
      { expect: ["router"] },
    );
    try {
      const res = await routerClient(() => other.routerUrl!).call("/dispatch", { task: "anything" });
      expect(res.status).toBe(502);
      expect(res.body.error.message).toContain("answered 401");
    } finally {
      await other.stop();
    }
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
