// The non-streaming event relay (issue 16 part 4) through real HTTP on loopback: a turn's
// events in a Redis Stream (two app instances on one Redis: the turn on one, the reader on the
// other) and in JSONL files without Redis — in order, resumed after Last-Event-ID, followed live,
// capped at 2,000 entries with the cut said in the stream, expiring an hour after done.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createParser } from "eventsource-parser";
import { createClient } from "redis";
import { AGENT, type AgentModeServer, type KvKind, makeHub, startAgentModeServer, tempHome } from "./support/agent-mode";
import { requireServer, TEST_REDIS_URL } from "./support/servers";
import { until } from "./support/until";

const redisUp = await requireServer("Redis");

type Ev = { id?: string; event?: string; data: string; at: number };

/** Reads the relay's SSE to its end, stamping each event's arrival. */
async function readRelay(s: AgentModeServer, id: string, lastEventId?: string): Promise<{ status: number; events: Ev[]; body?: any }> {
  const res = await s.call(`/v1/relay/${id}`, { headers: lastEventId ? { "last-event-id": lastEventId } : {} });
  if (res.status !== 200) return { status: res.status, events: [], body: await res.json() };
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  const events: Ev[] = [];
  const parser = createParser({ onEvent: (e) => events.push({ id: e.id, event: e.event, data: e.data, at: Date.now() }) });
  const decoder = new TextDecoder();
  for await (const part of res.body!) parser.feed(decoder.decode(part, { stream: true }));
  return { status: 200, events };
}

const chat = (s: AgentModeServer, correlationId: string) =>
  s.call("/v1/chat/completions", {
    json: { model: AGENT, messages: [{ role: "user", content: "What failed?" }] },
    headers: { "x-conversation-id": crypto.randomUUID(), "x-correlation-id": correlationId },
  });

/** Two pods (or one) on one store; the agent env is shared and read at every spawn. */
function pods(kv: KvKind, count: number) {
  const p = {
    servers: [] as AgentModeServer[],
    env: {} as Record<string, string | undefined>,
    prefix: `brain-stack-test:${crypto.randomUUID()}`,
    home: "",
    cleanup: async () => {},
  };
  beforeAll(async () => {
    const t = await tempHome("relay-");
    p.home = t.home;
    const hubUrl = await makeHub(join(t.home, "hub"));
    Object.assign(p.env, { PATH: process.env.PATH, FAKE_CLAUDE_SCENARIO: "thinking-tool-final" });
    for (let i = 0; i < count; i++) {
      // Each pod its own home (files, clones); the same Redis prefix.
      const home = join(t.home, `pod-${i}`);
      p.servers.push(await startAgentModeServer({ home, hubUrl, kv, redisPrefix: p.prefix, agentEnv: p.env }));
    }
    p.cleanup = async () => {
      for (const s of p.servers) await s.close();
      if (kv === "redis") {
        const r = createClient({ url: TEST_REDIS_URL });
        await r.connect();
        for await (const keys of r.scanIterator({ MATCH: `${p.prefix}:*` })) if (keys.length > 0) await r.del(keys);
        await r.close();
      }
      await t.cleanup();
    };
  }, 60_000);
  afterAll(() => p.cleanup());
  return p;
}

const redisClient = () => createClient({ url: TEST_REDIS_URL });

async function redis<T>(fn: (r: ReturnType<typeof redisClient>) => Promise<T>): Promise<T> {
  const r = redisClient();
  await r.connect();
  try {
    return await fn(r);
  } finally {
    await r.close();
  }
}

/** Writes n events and the done sentinel straight through pod `s`'s relay. */
async function writeMany(s: AgentModeServer, id: string, n: number): Promise<void> {
  const w = s.deps.relay!.writer(id);
  for (let i = 1; i <= n; i++) w.append("narration", { type: "narration", text: `line ${i}` });
  await w.done({ finish_reason: "stop" });
}

function expectCapped(events: Ev[], total: number, opts: { redis: boolean }) {
  // total entries written (events and done); the newest 2,000 kept, the cut said first.
  const firstSeq = total - 2000 + 1;
  expect(events[0]!.event).toBe("truncated");
  expect(events[0]!.id).toBeUndefined();
  expect(JSON.parse(events[0]!.data)).toEqual({ max_entries: 2000, first_seq: firstSeq, missed: firstSeq - 1 });
  const kept = events.slice(1);
  expect(kept).toHaveLength(2000);
  expect(JSON.parse(kept[0]!.data).text).toBe(`line ${firstSeq}`);
  expect(kept.at(-1)!.event).toBe("done");
  if (!opts.redis) expect(kept.map((e) => Number(e.id))).toEqual(kept.map((_, i) => firstSeq + i));
}

describe.skipIf(!redisUp)("the relay on a Redis Stream, two pods on one Redis", () => {
  const p = pods("redis", 2);
  const a = () => p.servers[0]!;
  const b = () => p.servers[1]!;

  it("keeps a turn's events, in order, in a Redis Stream the other pod reads", async () => {
    const id = `relay-${crypto.randomUUID()}`;
    const reply = await chat(a(), id);
    expect(reply.status).toBe(200);
    const answer = ((await reply.json()) as any).choices[0].message.content;
    const { events } = await readRelay(b(), id);
    // The thinking-tool-final scenario's events, as the turn mapped them.
    expect(events.map((e) => e.event)).toEqual(["thinking", "thinking", "narration", "tool_call", "tool_result", "final", "usage", "done"]);
    expect(events.at(-1)!.event).toBe("done");
    expect(JSON.parse(events.find((e) => e.event === "final")!.data).text).toBe(answer);
    for (const e of events) expect(e.id).toMatch(/^\d+-\d+$/);
    // Entry ids rise: each one's (ms, n) is after the one before.
    const ids = events.map((e) => e.id!.split("-").map(Number) as [number, number]);
    for (let i = 1; i < ids.length; i++) expect(ids[i]![0] > ids[i - 1]![0] || (ids[i]![0] === ids[i - 1]![0] && ids[i]![1] > ids[i - 1]![1])).toBe(true);
    // What Redis holds: a stream under the deployment's prefix, one entry per event.
    const k = `${p.prefix}:relay:${id}`;
    expect(await redis((r) => r.type(k))).toBe("stream");
    expect(await redis((r) => r.xLen(k))).toBe(events.length);
  });

  it("resumes mid-way after Last-Event-ID: a stream entry id or a sequence number", async () => {
    const id = `relay-${crypto.randomUUID()}`;
    expect((await chat(a(), id)).status).toBe(200);
    const all = (await readRelay(b(), id)).events;
    expect(all.length).toBeGreaterThan(3);
    const byId = (await readRelay(b(), id, all[1]!.id)).events;
    expect(byId.map((e) => e.id)).toEqual(all.slice(2).map((e) => e.id));
    const bySeq = (await readRelay(a(), id, "3")).events;
    expect(bySeq.map((e) => e.id)).toEqual(all.slice(3).map((e) => e.id));
  });

  it("lets a reader on the other pod attached before the turn ends see the rest live", async () => {
    p.env.FAKE_CLAUDE_DELAY_MS = "120";
    try {
      const id = `relay-${crypto.randomUUID()}`;
      const turn = chat(a(), id).then(async (r) => ({ status: r.status, endedAt: Date.now(), body: await r.text() }));
      let reading: Promise<{ status: number; events: Ev[] }> | undefined;
      await until(async () => {
        const r = await b().call(`/v1/relay/${id}`);
        if (r.status !== 200) return false;
        await r.body?.cancel();
        reading = readRelay(b(), id);
        return true;
      }, 10_000);
      const [ended, { events }] = await Promise.all([turn, reading!]);
      expect(ended.status).toBe(200);
      expect(events.at(-1)!.event).toBe("done");
      // Some events reached the reader while the turn was still running, not all at its end.
      expect(events.filter((e) => e.at < ended.endedAt - 100).length).toBeGreaterThan(0);
      expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    } finally {
      delete p.env.FAKE_CLAUDE_DELAY_MS;
    }
  }, 30_000);

  it("frees a reader's follower connection when the reader goes away mid-turn", async () => {
    const id = `relay-${crypto.randomUUID()}`;
    const followers = () =>
      redis(
        async (r) =>
          String(await r.sendCommand(["CLIENT", "LIST"]))
            .split("\n")
            .filter((l) => l.includes(`name=${p.prefix}:stream-follower`)).length,
      );
    const w = a().deps.relay!.writer(id);
    w.append("narration", { text: "working" });
    const ac = new AbortController();
    const res = await b().call(`/v1/relay/${id}`, { signal: ac.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read(); // the first event: the reader is attached and now waits for more
    await until(async () => (await followers()) === 1, 5_000);
    ac.abort();
    // Well within the follower's 5 s wait: it is closed when the reader leaves, not when the wait ends.
    await until(async () => (await followers()) === 0, 3_000);
    await w.done();
  });

  it("keeps at most 2,000 entries, and tells a reader who missed some", async () => {
    const id = `relay-${crypto.randomUUID()}`;
    await writeMany(a(), id, 2299);
    expect(await redis((r) => r.xLen(`${p.prefix}:relay:${id}`))).toBe(2000);
    expectCapped((await readRelay(b(), id)).events, 2300, { redis: true });
    // A reader whose cursor is still kept misses nothing and is told nothing.
    const later = (await readRelay(b(), id, "1000")).events;
    expect(later[0]!.event).toBe("narration");
    expect(JSON.parse(later[0]!.data).text).toBe("line 1001");
    const behind = (await readRelay(b(), id, "250")).events;
    expect(JSON.parse(behind[0]!.data)).toEqual({ max_entries: 2000, first_seq: 301, missed: 50 });
  }, 60_000);

  it("expires the stream an hour after done (while running: the job timeout and the hour)", async () => {
    const id = `relay-${crypto.randomUUID()}`;
    const k = `${p.prefix}:relay:${id}`;
    const w = a().deps.relay!.writer(id);
    w.append("narration", { text: "working" });
    await until(async () => (await redis((r) => r.xLen(k))) === 1);
    // SERVICE_CLAUDE_TIMEOUT (3600 s by default) + 3600 s.
    expect(await redis((r) => r.pTTL(k))).toBeGreaterThan(7_100_000);
    await w.done();
    const ttl = await redis((r) => r.pTTL(k));
    expect(ttl).toBeGreaterThan(3_590_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
  });

  it("answers 404 for a correlation id it never saw and 400 for a Last-Event-ID that is no cursor", async () => {
    const unknown = await readRelay(b(), `relay-${crypto.randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("relay_not_found");
    const id = `relay-${crypto.randomUUID()}`;
    await writeMany(a(), id, 1);
    const bad = await b().call(`/v1/relay/${id}`, { headers: { "last-event-id": "yesterday" } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.message).toContain("last-event-id");
  });
});

describe("the relay on files (no REDIS_URL)", () => {
  const p = pods("file", 1);
  const s = () => p.servers[0]!;
  const relayDir = () => join(p.home, "pod-0", ".service", "relay");

  it("keeps a turn's events in order, numbered 1, 2, 3…, and resumes after a sequence number", async () => {
    const id = `relay-${crypto.randomUUID()}`;
    expect((await chat(s(), id)).status).toBe(200);
    const all = (await readRelay(s(), id)).events;
    expect(all.at(-1)!.event).toBe("done");
    expect(all.map((e) => e.id)).toEqual(all.map((_, i) => String(i + 1)));
    expect((await readRelay(s(), id, "2")).events.map((e) => e.id)).toEqual(all.slice(2).map((e) => e.id));
    // A Redis entry id means nothing here: said, not followed forever.
    const foreign = await readRelay(s(), id, "1732500000000-0");
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.message).toContain("sequence number");
    // One JSONL line per entry.
    const file = readdirSync(relayDir()).find(
      (n) =>
        n.endsWith(".jsonl") &&
        readFileSync(join(relayDir(), n), "utf8").includes('"done"') &&
        readFileSync(join(relayDir(), n), "utf8").split("\n").filter(Boolean).length === all.length,
    );
    expect(file).toBeDefined();
  });

  it("lets a reader attached before the turn ends see the rest live", async () => {
    p.env.FAKE_CLAUDE_DELAY_MS = "120";
    try {
      const id = `relay-${crypto.randomUUID()}`;
      const turn = chat(s(), id).then((r) => ({ status: r.status, endedAt: Date.now() }));
      let reading: Promise<{ status: number; events: Ev[] }> | undefined;
      await until(async () => {
        const r = await s().call(`/v1/relay/${id}`);
        if (r.status !== 200) return false;
        await r.body?.cancel();
        reading = readRelay(s(), id);
        return true;
      }, 10_000);
      const [ended, { events }] = await Promise.all([turn, reading!]);
      expect(events.at(-1)!.event).toBe("done");
      expect(events.filter((e) => e.at < ended.endedAt - 100).length).toBeGreaterThan(0);
      expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i + 1)));
    } finally {
      delete p.env.FAKE_CLAUDE_DELAY_MS;
    }
  }, 30_000);

  it("keeps at most 2,000 entries, and tells a reader who missed some", async () => {
    const id = `relay-${crypto.randomUUID()}`;
    await writeMany(s(), id, 2299);
    expectCapped((await readRelay(s(), id)).events, 2300, { redis: false });
    const behind = (await readRelay(s(), id, "250")).events;
    expect(JSON.parse(behind[0]!.data)).toEqual({ max_entries: 2000, first_seq: 301, missed: 50 });
  }, 60_000);

  it("expires the stream an hour after done, and answers 404 once it has", async () => {
    const id = `relay-${crypto.randomUUID()}`;
    const log = s().deps.relay!.log;
    const w = s().deps.relay!.writer(id);
    w.append("narration", { text: "working" });
    await until(async () => (await log.ttlMs(id)) > 0);
    expect(await log.ttlMs(id)).toBeGreaterThan(7_100_000);
    await w.done();
    const ttl = await log.ttlMs(id);
    expect(ttl).toBeGreaterThan(3_590_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
    // A stream whose hour is up (a short TTL here) is gone for readers.
    const short = `relay-${crypto.randomUUID()}`;
    await log.append(short, { seq: 1, event: "done", data: {} }, 0.2);
    expect((await readRelay(s(), short)).status).toBe(200);
    await until(async () => (await s().call(`/v1/relay/${short}`)).status === 404, 5_000);
  });
});
