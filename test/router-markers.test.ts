// POST /marker through the real process: routing of each kind into the vault, idempotency by
// header or body (concurrent duplicates included), and the refusals.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { routerClient, ROUTER_TEST_TOKEN as TOKEN } from "./support/router-client";

type Json = Record<string, any>;

describe("POST /marker", () => {
  let main: MainProcess;
  let vault = "";
  const api = routerClient(() => main.routerUrl!);
  const marker = (body: Json, headers: Record<string, string> = {}) =>
    api.call("/marker", body, { headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...headers } });

  beforeAll(async () => {
    vault = join(tempDir("markers"), "vault");
    mkdirSync(join(vault, "projects", "brain"), { recursive: true });
    main = await startMain(["--only", "router", "--vault", vault], { KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0" }, { expect: ["router"] });
  });
  afterAll(async () => {
    await main.stop();
  });

  it("answers 401 when the bearer is missing or wrong", async () => {
    const body = JSON.stringify({ type: "lesson", content: "x", attrs: {} });
    const none = await fetch(`${main.routerUrl}/marker`, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(none.status).toBe(401);
    const wrong = await fetch(`${main.routerUrl}/marker`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer nope" },
      body,
    });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as Json).error.code).toBe("unauthorized");
  });

  it("answers 400 to an unknown type", async () => {
    const res = await marker({ type: "@gossip", content: "x", attrs: {} });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].path).toBe("type");
  });

  it("answers 413 to content over 4096 characters and writes nothing", async () => {
    const res = await marker({ type: "lesson", content: "é".repeat(4097), attrs: {} });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("content_too_large");
    expect(readdirSync(join(vault, "left", "reference")).filter((n) => n.startsWith("lessons-"))).toEqual([]);
  });

  it("answers 400 to an attrs.ts that is not a time", async () => {
    expect((await marker({ type: "lesson", content: "y", attrs: { ts: "yesterday-ish" } })).status).toBe(400);
  });

  it("appends a lesson to the day's lesson log, with or without the @", async () => {
    const res = await marker({
      type: "@lesson",
      content: "Pin base image digests; tags move under you.",
      attrs: { source: "claude", session_id: "sess-1", ts: "2026-03-04T05:06:07Z" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      type: "lesson",
      path: "left/reference/lessons-2026-03-04.md",
      written: true,
      ts: "2026-03-04T05:06:07.000Z",
      source: "claude",
      session_id: "sess-1",
      origin: "api",
      key_source: "body",
    });
    expect(res.body.id).toMatch(/^mk_[0-9a-f]{16}$/);
    const log = readFileSync(join(vault, res.body.path), "utf8");
    expect(log).toContain("id: lessons-2026-03-04");
    expect(log).toContain("type: lesson-log");
    expect(log).toContain("## 2026-03-04T05:06:07.000Z — claude — sess-1\n\nPin base image digests; tags move under you.");
    // Another key, same lesson, same day: dropped from the log, recorded as not written.
    const again = await marker({
      type: "lesson",
      content: "Pin base image digests; tags move under you.",
      attrs: { source: "other", ts: "2026-03-04T09:00:00Z" },
    });
    expect(again.status).toBe(201);
    expect(again.body.written).toBe(false);
    expect(readFileSync(join(vault, res.body.path), "utf8").match(/Pin base image digests/g)).toHaveLength(1);
  });

  it("routes a milestone to its project's BLOCKS.md, else to the daily note", async () => {
    const scoped = await marker({ type: "milestone", content: "Search ships", attrs: { scope: "brain", ts: "2026-03-04T10:00:00Z" } });
    expect(scoped.body.path).toBe("projects/brain/BLOCKS.md");
    expect(readFileSync(join(vault, "projects/brain/BLOCKS.md"), "utf8")).toContain("— milestone — Search ships (api)");
    const loose = await marker({ type: "milestone", content: "Coffee machine fixed", attrs: { scope: "no-such-project", ts: "2026-03-04T10:00:00Z" } });
    expect(loose.body.path).toBe("daily/2026-03-04.md");
  });

  it("writes a signal file, and an open duplicate absorbs the next one", async () => {
    const first = await marker({ type: "signal", content: "Deploy pipeline is red", attrs: { severity: "high", source: "ci", ts: "2026-03-04T11:12:13Z" } });
    expect(first.body.path).toBe("amygdala/20260304T111213Z-high-deploy-pipeline-is-red.md");
    const text = readFileSync(join(vault, first.body.path), "utf8");
    expect(text).toContain("type: signal");
    expect(text).toContain("status: open");
    expect(text).toContain("count: 1");
    const dup = await marker({ type: "signal", content: "Deploy pipeline is red", attrs: { severity: "high", source: "ci", ts: "2026-03-04T11:20:00Z" } });
    expect(dup.body).toMatchObject({ path: first.body.path, written: false });
    expect(readFileSync(join(vault, first.body.path), "utf8")).toContain("count: 2");
  });

  it("writes a decision as the next ADR, status proposed", async () => {
    const res = await marker({ type: "decision", content: "Use Postgres for the index in production.", attrs: { title: "Postgres in production" } });
    expect(res.body.path).toMatch(/^left\/decisions\/ADR-\d{4}-postgres-in-production\.md$/);
    expect(readFileSync(join(vault, res.body.path), "utf8")).toContain("status: proposed");
  });

  it("answers 200 with the stored record when the X-Idempotency-Key comes again", async () => {
    const first = await marker({ type: "lesson", content: "Idempotency by header", attrs: {} }, { "x-idempotency-key": "hook-42" });
    const second = await marker({ type: "lesson", content: "a different body, same key", attrs: {} }, { "x-idempotency-key": "hook-42" });
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(first.body.key_source).toBe("header");
  });

  it("recognises the same body without a key, whitespace aside", async () => {
    const body = { type: "milestone", content: "Body-hash idempotency", attrs: { ts: "2026-03-05T00:00:00Z" } };
    const first = await marker(body);
    const second = await api.call("/marker", JSON.stringify(body, null, 4));
    expect([first.status, second.status]).toEqual([201, 200]);
    expect(second.body.id).toBe(first.body.id);
    expect(readFileSync(join(vault, "daily/2026-03-05.md"), "utf8").match(/Body-hash idempotency/g)).toHaveLength(1);
  });

  it("records concurrent duplicate posts exactly once", async () => {
    const body = { type: "lesson", content: "Twenty agents, one lesson.", attrs: { source: "swarm", ts: "2026-03-06T00:00:00Z" } };
    const byBody = await Promise.all(Array.from({ length: 20 }, () => marker(body)));
    expect(byBody.map((r) => r.status).sort()).toEqual([...Array(19).fill(200), 201]);
    expect(new Set(byBody.map((r) => r.body.id)).size).toBe(1);
    const keyed = { type: "signal", content: "Keyed storm", attrs: { severity: "critical", source: "pager" } };
    const byKey = await Promise.all(
      Array.from({ length: 20 }, (_, i) => marker({ ...keyed, attrs: { ...keyed.attrs, n: i } }, { "x-idempotency-key": "storm-1" })),
    );
    expect(byKey.filter((r) => r.status === 201)).toHaveLength(1);
    const log = readFileSync(join(vault, "left/reference/lessons-2026-03-06.md"), "utf8");
    expect(log.match(/Twenty agents, one lesson\./g)).toHaveLength(1);
    expect(readdirSync(join(vault, "amygdala")).filter((n) => n.includes("keyed-storm"))).toHaveLength(1);
    const journal = readdirSync(join(vault, "brain-feed/markers")).flatMap((n) =>
      readFileSync(join(vault, "brain-feed/markers", n), "utf8")
        .trim()
        .split("\n"),
    );
    expect(journal.filter((l) => l.includes("Twenty agents"))).toHaveLength(1);
    expect(journal.filter((l) => l.includes("Keyed storm"))).toHaveLength(1);
  });

  it("records a duplicate once when two router processes share the vault", async () => {
    const other = await startMain(["--only", "router", "--vault", vault], { KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0" }, { expect: ["router"] });
    try {
      const post = (url: string, body: Json) =>
        fetch(`${url}/marker`, {
          method: "POST",
          headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const body = { type: "signal", content: "Two processes, one signal.", attrs: { severity: "high", source: "dual", ts: "2026-03-08T00:00:00Z" } };
      const res = await Promise.all(Array.from({ length: 20 }, (_, i) => post(i % 2 ? main.routerUrl! : other.routerUrl!, body)));
      expect(res.map((r) => r.status).sort()).toEqual([...Array(19).fill(200), 201]);
      const files = readdirSync(join(vault, "amygdala")).filter((n) => n.includes("two-processes-one-signal"));
      expect(files).toHaveLength(1);
      expect(readFileSync(join(vault, "amygdala", files[0]!), "utf8")).toContain("count: 1");
      const journal = readdirSync(join(vault, "brain-feed/markers")).flatMap((n) =>
        readFileSync(join(vault, "brain-feed/markers", n), "utf8")
          .trim()
          .split("\n"),
      );
      expect(journal.filter((l) => l.includes("Two processes, one signal."))).toHaveLength(1);
    } finally {
      await other.stop();
    }
  }, 30_000);

  it("loses nothing when many different markers hit one lesson log and the signal folder at once", async () => {
    const lessons = Array.from({ length: 40 }, (_, i) => marker({ type: "lesson", content: `Parallel lesson ${i}`, attrs: { ts: "2026-03-07T08:00:00Z" } }));
    const signals = Array.from({ length: 20 }, (_, i) =>
      marker({ type: "signal", content: `Parallel signal ${i}`, attrs: { severity: "low", ts: "2026-03-07T08:00:00Z" } }),
    );
    const results = await Promise.all([...lessons, ...signals]);
    expect(results.filter((r) => r.status !== 201).map((r) => r.text)).toEqual([]);
    const log = readFileSync(join(vault, "left/reference/lessons-2026-03-07.md"), "utf8");
    for (let i = 0; i < 40; i++) expect(log).toContain(`Parallel lesson ${i}\n`);
    expect(readdirSync(join(vault, "amygdala")).filter((n) => n.includes("parallel-signal"))).toHaveLength(20);
  });

  it("keeps extra attrs in the record as given", async () => {
    const res = await marker({ type: "lesson", content: "Extra attrs survive", attrs: { tool: "bash", exit_code: 2 } });
    expect(res.body.attrs).toEqual({ tool: "bash", exit_code: 2 });
  });
});
