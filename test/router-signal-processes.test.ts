// Signals across router processes (issue 17, part 6): two routers on one vault, as compose runs
// the API and the MCP listener. A signal recorded through either reaches the /signal subscribers
// of both, ids are unique across the processes, and Last-Event-ID resumes exactly — with the
// journal file (no Redis) and with a Redis Stream (REDIS_URL).
import { afterAll, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { createClient } from "redis";
import { describeWithRedis, REDIS_URL } from "./support/kv";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { ROUTER_TEST_TOKEN as TOKEN } from "./support/router-client";
import { subscribe } from "./support/signal-stream";

const mains: MainProcess[] = [];
afterAll(async () => {
  await Promise.all(mains.map((m) => m.stop()));
});

async function twoRouters(env: Record<string, string> = {}): Promise<[MainProcess, MainProcess]> {
  const vault = join(tempDir("signal-procs"), "vault");
  const start = () =>
    startMain(
      ["--only", "router", "--vault", vault],
      { KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0", ...env },
      { expect: ["router"], timeoutMs: 60_000 },
    );
  const a = await start(); // the first lays out the vault
  const b = await start();
  mains.push(a, b);
  return [a, b];
}

let n = 0;
const raise = (base: string, content: string) =>
  fetch(`${base}/marker`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", "x-idempotency-key": `procs-${++n}-${crypto.randomUUID()}` },
    body: JSON.stringify({ type: "signal", content, attrs: { severity: "high", source: "test" } }),
  }).then((r) => expect(r.status).toBeLessThan(300));

async function crossProcess(a: MainProcess, b: MainProcess): Promise<void> {
  const subA = await subscribe(a.routerUrl!);
  const subB = await subscribe(b.routerUrl!);
  // Ten signals, raised through both processes at once so their appends collide.
  await Promise.all(Array.from({ length: 10 }, (_, i) => raise((i % 2 === 0 ? a : b).routerUrl!, `signal number ${i}`)));
  await subA.waitFor(() => subA.events.length >= 10, "ten events on A", 15_000);
  await subB.waitFor(() => subB.events.length >= 10, "ten events on B", 15_000);
  const idsA = subA.events.map((e) => Number(e.id));
  const idsB = subB.events.map((e) => Number(e.id));
  expect(new Set(idsA).size).toBe(10);
  expect(idsA).toEqual([...idsA].sort((x, y) => x - y));
  expect(idsB).toEqual(idsA); // same events, same ids, same order in both processes
  expect(subB.events.map((e) => e.data.content).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `signal number ${i}`).sort());
  subA.close();
  subB.close();

  // Resume on the other process from the fourth event: exactly the six after it.
  const resumed = await subscribe(b.routerUrl!, { lastEventId: String(idsA[3]) });
  await resumed.waitFor(() => resumed.events.length >= 6, "the six after the fourth", 15_000);
  expect(resumed.events.map((e) => Number(e.id))).toEqual(idsA.slice(4));
  await raise(a.routerUrl!, "one more");
  await resumed.waitFor(() => resumed.events.length >= 7, "the next live event", 15_000);
  expect(resumed.events.at(-1)!.data.content).toBe("one more");
  expect(Number(resumed.events.at(-1)!.id)).toBeGreaterThan(idsA[9]!);
  resumed.close();
}

describe("two router processes on one vault, no Redis (the signal journal)", () => {
  it("a signal through either reaches subscribers of both; ids unique; resume exact", async () => {
    const [a, b] = await twoRouters();
    await crossProcess(a, b);
  }, 120_000);
});

describeWithRedis("two router processes on one vault with REDIS_URL (a Redis Stream)", () => {
  const prefix = `brain-stack-test:${crypto.randomUUID()}`;
  afterAll(async () => {
    const redis = createClient({ url: REDIS_URL });
    await redis.connect();
    for await (const keys of redis.scanIterator({ MATCH: `${prefix}:*` })) if (keys.length) await redis.del(keys);
    await redis.close();
  });
  it("a signal through either reaches subscribers of both; ids unique; resume exact", async () => {
    const [a, b] = await twoRouters({ REDIS_URL, REDIS_KEY_PREFIX: prefix });
    await crossProcess(a, b);
    const redis = createClient({ url: REDIS_URL });
    await redis.connect();
    expect(await redis.xLen(`${prefix}:signals`)).toBe(11);
    await redis.close();
  }, 120_000);
});
