// GET /signal over a real socket: events as signals are recorded, keep-alive comments,
// resume with Last-Event-ID without loss or duplicates (across a restart too), and many
// subscribers at once.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { routerClient, ROUTER_TEST_TOKEN as TOKEN } from "./support/router-client";
import { subscribe } from "./support/signal-stream";

describe("GET /signal", () => {
  let main: MainProcess;
  let vault = "";
  const api = routerClient(() => main.routerUrl!);
  let n = 0;
  /** Each post its own idempotency key, so the same text twice is two occurrences. */
  const signal = (content: string, severity = "high") =>
    api.call(
      "/marker",
      { type: "signal", content, attrs: { severity, source: "test" } },
      {
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", "x-idempotency-key": `sig-${++n}` },
      },
    );

  beforeAll(async () => {
    vault = join(tempDir("signal"), "vault");
    main = await startMain(
      ["--only", "router", "--vault", vault],
      { KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0", SIGNAL_HEARTBEAT_SECONDS: "1" },
      { expect: ["router"] },
    );
  });
  afterAll(async () => {
    await main.stop();
  });

  it("streams a signal that arrived through POST /ingest as well", async () => {
    const s = await subscribe(main.routerUrl!);
    try {
      const res = await api.ingest("---\nseverity: critical\n---\nThe payment queue is backing up.", ["incident"], { source: "pager" });
      expect(res.body.kind).toBe("signal");
      await s.waitFor(() => s.events.some((e) => e.data.content === "The payment queue is backing up."), "the ingested signal");
      const event = s.events.find((e) => e.data.content === "The payment queue is backing up.")!;
      expect(event.event).toBe("signal");
      expect(event.data).toMatchObject({ severity: "critical", source: "pager", path: res.body.paths[1] });
    } finally {
      s.close();
    }
  });

  it("answers 401 without the bearer and 400 to a Last-Event-ID that is not an id", async () => {
    expect((await fetch(`${main.routerUrl}/signal`)).status).toBe(401);
    const bad = await subscribe(main.routerUrl!, { lastEventId: "yesterday" });
    expect(bad.status).toBe(400);
  });

  it("streams each signal as it is recorded, with its id and payload", async () => {
    const s = await subscribe(main.routerUrl!);
    expect(s.status).toBe(200);
    await s.waitFor(() => s.comments.some((c) => c.startsWith("connected")), "the connected comment");
    const posted = await signal("Database replica lagging");
    await s.waitFor(() => s.events.length === 1, "one event");
    expect(s.events[0]).toMatchObject({
      event: "signal",
      data: { severity: "high", source: "test", title: "Database replica lagging", path: posted.body.path, marker_id: posted.body.id, repeat: false, count: 1 },
    });
    expect(s.events[0]!.id).toMatch(/^\d+$/);
    // An absorbed duplicate is an event too, marked repeat.
    await signal("Database replica lagging");
    await s.waitFor(() => s.events.length === 2, "the repeat");
    expect(s.events[1]!.data).toMatchObject({ repeat: true, count: 2 });
    s.close();
  });

  it("sends a keep-alive comment every SIGNAL_HEARTBEAT_SECONDS", async () => {
    const s = await subscribe(main.routerUrl!);
    await s.waitFor(() => s.comments.filter((c) => c === "keep-alive").length >= 2, "two keep-alives", 4_000);
    s.close();
  });

  it("resumes from Last-Event-ID without loss or duplicates", async () => {
    const first = await subscribe(main.routerUrl!);
    await first.waitFor(() => first.comments.length > 0, "connected");
    for (const n of [1, 2, 3]) await signal(`resume batch A ${n}`);
    await first.waitFor(() => first.events.length === 3, "three events");
    const lastSeen = first.events.at(-1)!.id!;
    first.close();
    // Missed while away:
    for (const n of [1, 2, 3]) await signal(`resume batch B ${n}`);
    const again = await subscribe(main.routerUrl!, { lastEventId: lastSeen });
    await again.waitFor(() => again.events.length === 3, "the three missed events");
    await signal("resume live C");
    await again.waitFor(() => again.events.length === 4, "the live event");
    expect(again.events.map((e) => e.data.title)).toEqual(["resume batch B 1", "resume batch B 2", "resume batch B 3", "resume live C"]);
    const ids = again.events.map((e) => Number(e.id));
    expect(ids).toEqual([Number(lastSeen) + 1, Number(lastSeen) + 2, Number(lastSeen) + 3, Number(lastSeen) + 4]);
    again.close();
  });

  it("resumes while signals keep coming: every event exactly once, in order", async () => {
    const titles = Array.from({ length: 60 }, (_, i) => `steady stream ${i}`);
    const first = await subscribe(main.routerUrl!);
    await first.waitFor(() => first.comments.length > 0, "connected");
    for (const t of titles.slice(0, 15)) await signal(t, "low");
    await first.waitFor(() => first.events.length >= 10, "ten events");
    first.close();
    const seen = first.events.slice();
    // The rest is posted while the subscriber reconnects: some land before its subscription, some after.
    const publisher = (async () => {
      for (const t of titles.slice(15)) await signal(t, "low");
    })();
    const again = await subscribe(main.routerUrl!, { lastEventId: seen.at(-1)!.id! });
    await publisher;
    await again.waitFor(() => seen.length + again.events.length >= titles.length, "the rest of the stream", 15_000);
    const all = [...seen, ...again.events];
    expect(all.map((e) => e.data.title)).toEqual(titles);
    const ids = all.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => ids[0]! + i));
    again.close();
  }, 30_000);

  it("resumes across a restart (ids and backlog survive)", async () => {
    const s = await subscribe(main.routerUrl!);
    await s.waitFor(() => s.comments.length > 0, "connected");
    await signal("before the restart");
    await s.waitFor(() => s.events.length === 1, "one event");
    const lastSeen = s.events[0]!.id!;
    s.close();
    await main.stop();
    main = await startMain(
      ["--only", "router", "--vault", vault],
      { KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0", SIGNAL_HEARTBEAT_SECONDS: "1", HOME: main.home },
      { expect: ["router"] },
    );
    await signal("after the restart");
    const back = await subscribe(main.routerUrl!, { query: `?last_event_id=${lastSeen}` });
    await back.waitFor(() => back.events.length === 1, "the event after the restart");
    expect(back.events[0]).toMatchObject({ id: String(Number(lastSeen) + 1), data: { title: "after the restart" } });
    back.close();
  }, 30_000);

  it("filters by min_severity", async () => {
    const s = await subscribe(main.routerUrl!, { query: "?min_severity=critical" });
    await s.waitFor(() => s.comments.length > 0, "connected");
    await signal("only a low one", "low");
    await signal("a critical one", "critical");
    await s.waitFor(() => s.events.length === 1, "the critical event");
    expect(s.events[0]!.data.title).toBe("a critical one");
    s.close();
  });

  it("delivers one event to many subscribers at once", async () => {
    const subs = await Promise.all(Array.from({ length: 100 }, () => subscribe(main.routerUrl!)));
    await Promise.all(subs.map((s) => s.waitFor(() => s.comments.length > 0, "connected")));
    await signal("fan-out to everyone", "critical");
    await Promise.all(subs.map((s) => s.waitFor(() => s.events.length === 1, "the fan-out event")));
    expect(new Set(subs.map((s) => s.events[0]!.id)).size).toBe(1);
    for (const s of subs) s.close();
  }, 30_000);
});
