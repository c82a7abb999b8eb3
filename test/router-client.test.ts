// RouterClient against the live server: every method, and its typed errors.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { ApiError, ConnectionError, RouterClient, type SignalEvent, type SignalRecorded } from "../src/router/client";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { until } from "./support/until";

describe("RouterClient", () => {
  let main: MainProcess;
  let client: RouterClient;
  beforeAll(async () => {
    main = await startMain(
      ["--only", "router", "--vault", join(tempDir("client"), "v")],
      { KB_ROUTER_TOKEN: "client-token", ORCHESTRATOR_URL: "http://127.0.0.1:1", PORT_BRAIN_MCP: "0" },
      { expect: ["router"] },
    );
    client = new RouterClient({ baseUrl: main.routerUrl!, token: "client-token" });
  });
  afterAll(() => main.stop());

  it("health() returns the service's health", async () => {
    expect(await client.health()).toMatchObject({ status: "ok", service: "knowledge-router" });
  });

  it("ingest(), search() and brief() round-trip with types", async () => {
    const ing = await client.ingest({ content: "# Runbook\nRestart the worker with systemctl.", tags: ["ops"] });
    expect(ing.kind).toBe("note");
    const found = await client.search({ query: "worker", limit: 5 });
    expect(found.hits[0]?.path).toBe(ing.paths[0]!);
    expect(found.hits[0]).toMatchObject({ score: 1, coverage: 1 });
    const strict = await client.search({ query: "worker reboot", match: "all" });
    expect(strict.hits).toEqual([]);
    expect((await client.search({ query: "worker reboot" })).hits[0]?.coverage).toBe(0.5);
    const brief = await client.brief("worker");
    expect(brief.synthesis).toBe("extractive");
    expect(brief.citations[0]?.path).toBe(ing.paths[0]!);
  });

  it("throws ApiError with the status and the error body's code", async () => {
    const bad = new RouterClient({ baseUrl: main.routerUrl!, token: "wrong" });
    const err = await bad.search("x").catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 401, code: "unauthorized" });
    const invalid = await client.search({ query: "x", limit: 0 }).catch((e) => e);
    expect(invalid).toMatchObject({ status: 400, code: "invalid_request" });
  });

  it("dispatch() surfaces the orchestrator being down as ApiError 502", async () => {
    const err = await client.dispatch({ task: "anything" }).catch((e) => e);
    expect(err).toMatchObject({ status: 502, code: "orchestrator_unreachable" });
    expect((err as ApiError).details).toMatchObject({ bundle_id: expect.any(String) });
  });

  it("note(), noteIfChanged(), notes(), recent() and context() read what ingest wrote", async () => {
    const ing = await client.ingest({ content: "# Pager rota\nWho holds the pager this week.", tags: ["oncall"] });
    const path = ing.paths[0]!;
    const note = await client.note(path);
    expect(note).toMatchObject({ path, title: "Pager rota", tags: ["oncall"], indexed: true });
    expect(await client.noteIfChanged(path, note.hash)).toBeNull();
    expect((await client.notes({ paths: [path] })).notes[0]?.hash).toBe(note.hash);
    expect((await client.recent({ tag: "oncall", since: new Date(Date.now() - 60_000) })).notes.map((n) => n.path)).toEqual([path]);
    expect((await client.context(path)).notes[0]).toMatchObject({ path, distance: 0, via: null });
    expect(await client.note("raw/absent.md").catch((e) => e)).toMatchObject({ status: 404, code: "note_not_found" });
  });

  it("marker(), tick(), getTick(), feed(), healthDeep() and healthPipeline() round-trip with types", async () => {
    const first = await client.marker(
      { type: "lesson", content: "Typed clients catch drift.", attrs: { source: "client-test" } },
      { idempotencyKey: "client-k1" },
    );
    expect(first.created).toBe(true);
    expect(first.record.path).toStartWith("left/reference/lessons-");
    const again = await client.marker(
      { type: "lesson", content: "Typed clients catch drift.", attrs: { source: "client-test" } },
      { idempotencyKey: "client-k1" },
    );
    expect(again).toMatchObject({ created: false, record: { id: first.record.id } });
    const done = await client.tick({ wait: true, no_ai: true });
    expect(done.status).toBe("succeeded");
    expect((await client.getTick(done.tick_id)).tick_id).toBe(done.tick_id);
    expect(await client.feed()).toHaveProperty("hot_arcs");
    expect((await client.healthDeep()).probes.map((p) => p.name)).toContain("vault");
    expect((await client.healthPipeline()).stages).toHaveLength(7);
    const bad = await client.marker({ type: "rumour" as never, content: "x" }).catch((e) => e);
    expect(bad).toMatchObject({ status: 400 });
  });

  it("signals() yields recorded signals in order, resumes after lastEventId, filters by severity, and ends with the loop", async () => {
    for (const [content, severity] of [
      ["Disk almost full on db-1", "high"],
      ["Cache hit rate dipped", "low"],
      ["Payments are failing", "critical"],
    ] as const) {
      await client.marker({ type: "signal", content, attrs: { severity, source: "client-test" } }, { idempotencyKey: `client-sig-${content}` });
    }
    // From the start of the kept backlog (id 0), so no event can be missed before the stream opens.
    const seen: SignalEvent[] = [];
    for await (const e of client.signals({ lastEventId: 0 })) {
      seen.push(e);
      if (seen.length === 3) break;
    }
    expect(seen.map((e) => [e.event, (e.data as { title?: string }).title])).toEqual([
      ["signal", "Disk almost full on db-1"],
      ["signal", "Cache hit rate dipped"],
      ["signal", "Payments are failing"],
    ]);
    const first = seen[0]!;
    if (first.event !== "signal") throw new Error("expected a signal");
    expect(first.data).toMatchObject({ severity: "high", source: "client-test", count: 1, repeat: false });
    // Resuming after the first event skips it; min_severity=high drops the low one.
    const resumed: SignalEvent[] = [];
    for await (const e of client.signals({ lastEventId: first.id, minSeverity: "high" })) {
      resumed.push(e);
      break;
    }
    expect(resumed[0]).toMatchObject({ event: "signal", id: seen[2]!.id, data: { title: "Payments are failing" } });
  });

  it("signals() throws ApiError when the subscription is refused, and stops quietly when aborted", async () => {
    const bad = new RouterClient({ baseUrl: main.routerUrl!, token: "wrong" });
    const refused = await bad
      .signals()
      .next()
      .catch((e) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 401, code: "unauthorized" });
    const badId = await client
      .signals({ lastEventId: "yesterday" })
      .next()
      .catch((e) => e);
    expect(badId).toMatchObject({ status: 400, code: "invalid_request" });
    // Nothing new is recorded after this subscription opens: aborting must end the loop.
    const ctrl = new AbortController();
    const stream = client.signals({ lastEventId: Number.MAX_SAFE_INTEGER, signal: ctrl.signal });
    const pending = stream.next();
    ctrl.abort();
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it("signalsSince() starts from now without an id, then returns what was raised since, each once", async () => {
    const { events: none, lastEventId: start } = await client.signalsSince();
    expect(none).toEqual([]);
    for (const content of ["Queue backlog growing", "Queue drained"]) {
      await client.marker({ type: "signal", content, attrs: { severity: "high", source: "client-since" } }, { idempotencyKey: `client-since-${content}` });
    }
    // A signal reaches the stream just after its marker is answered: poll from the cursor, as the
    // prompt hook does, until both have come; none may come twice.
    const seen: SignalRecorded[] = [];
    let cursor = start;
    await until(async () => {
      const since = await client.signalsSince(cursor);
      seen.push(...since.events);
      cursor = since.lastEventId;
      return seen.length >= 2;
    });
    expect(seen.map((e) => e.data.title)).toEqual(["Queue backlog growing", "Queue drained"]);
    expect(cursor).toBe(Number(seen[1]!.id));
    expect(await client.signalsSince(cursor)).toEqual({ events: [], lastEventId: cursor });
    const refused = await new RouterClient({ baseUrl: main.routerUrl!, token: "wrong" }).signalsSince(start).catch((e) => e);
    expect(refused).toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("feed({ maxChars }) asks for the budget; a budget below the route's minimum is ApiError 400", async () => {
    const feed = await client.feed({ maxChars: 300 });
    expect(feed.max_chars).toBe(300);
    expect(feed.inject_blocks.join("").length).toBeLessThanOrEqual(300);
    expect(await client.feed({ maxChars: 10 }).catch((e) => e)).toMatchObject({ status: 400 });
  });

  it("ends every call when the client's signal aborts, however long the per-request timeout", async () => {
    const hanging = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise<Response>(() => {}) });
    try {
      const t0 = performance.now();
      const err = await new RouterClient({ baseUrl: `http://127.0.0.1:${hanging.port}`, timeoutMs: 60_000, signal: AbortSignal.timeout(200) })
        .health()
        .catch((e) => e);
      expect(err).toBeInstanceOf(ConnectionError);
      expect(performance.now() - t0).toBeLessThan(5_000);
    } finally {
      hanging.stop(true);
    }
  });

  it("throws ConnectionError when nothing answers", async () => {
    const err = await new RouterClient({ baseUrl: "http://127.0.0.1:1", token: "t" }).health().catch((e) => e);
    expect(err).toBeInstanceOf(ConnectionError);
  });
});
