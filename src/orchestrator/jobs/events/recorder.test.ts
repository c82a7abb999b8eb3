import { describe, expect, it } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "redis";
import { describeWithRedis, REDIS_URL } from "../../../../test/support/kv";
import { until } from "../../../../test/support/until";
import { parseAgentLine } from "../../agent/stream-json";
import { createFileJobEventStore } from "./file-store";
import { RunRecorder } from "./recorder";
import { createRedisJobEventStore } from "./redis-store";

const FIXTURE = join(import.meta.dir, "../../../../test/fixtures/claude-stream-json/thinking-tool-final.jsonl");
const frames = () =>
  readFileSync(FIXTURE, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.includes('"stream_event"'))
    .map((l) => parseAgentLine(l)!);

describe("the job's event log", () => {
  it("is bounded: past its size, one cut event, and only status, usage and errors after it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "events-"));
    const store = createFileJobEventStore({ dir, ttlSeconds: 60 });
    const id = Bun.randomUUIDv7();
    const r = new RunRecorder({ store, jobId: id, maxBytes: 400, onProgress: () => {} });
    for (const ev of frames()) r.push(ev);
    await r.finish({ status: "succeeded", exit_code: 0 });
    const events = (await store.read(id, 0)).map((e) => e.event);
    const cut = events.findIndex((e) => e.type === "cut");
    expect(cut).toBeGreaterThan(0);
    expect(events[cut]).toMatchObject({ limit_bytes: 400, message: expect.stringContaining("limit") });
    expect(events.slice(cut + 1).every((e) => e.type === "usage")).toBe(true);
    expect(events.filter((e) => e.type === "cut")).toHaveLength(1);
  });

  it("reads from any position, and a reader following along reads only what is new", async () => {
    const dir = mkdtempSync(join(tmpdir(), "events-"));
    const store = createFileJobEventStore({ dir, ttlSeconds: 60 });
    const id = Bun.randomUUIDv7();
    const at = new Date().toISOString();
    await store.append(
      id,
      [1, 2, 3].map((n) => ({ type: "error" as const, at, code: "c", message: `m${n}` })),
    );
    expect((await store.read(id, 1)).map((e) => e.id)).toEqual([2, 3]);
    await store.append(id, [{ type: "error", at, code: "c", message: "m4" }]);
    const m4 = { type: "error" as const, at, code: "c", message: "m4" };
    expect(await store.read(id, 3)).toEqual([{ id: 4, event: m4, json: JSON.stringify(m4) }]);
    expect((await store.read(id, 0, 2)).map((e) => e.id)).toEqual([1, 2]);
    expect(await store.read(Bun.randomUUIDv7(), 0)).toEqual([]);
  });

  it("gives every reader each event's text as the log holds it, the same event it parses to", async () => {
    const dir = mkdtempSync(join(tmpdir(), "events-"));
    const here = createFileJobEventStore({ dir, ttlSeconds: 60 });
    const there = createFileJobEventStore({ dir, ttlSeconds: 60 });
    const id = Bun.randomUUIDv7();
    const r = new RunRecorder({ store: here, jobId: id, maxBytes: 1 << 20, onProgress: () => {} });
    for (const ev of frames()) r.push(ev);
    await r.finish({ status: "succeeded", exit_code: 0 });
    const lines = readFileSync(join(dir, `${id}.events.jsonl`), "utf8")
      .split("\n")
      .filter((l) => l !== "");
    expect(lines.length).toBeGreaterThan(3);
    // This pod's readers are served from memory, another pod's from the file: the same text either way.
    for (const store of [here, there]) {
      const read = await store.read(id, 0);
      expect(read.map((e) => e.json)).toEqual(lines);
      for (const e of read) expect(JSON.parse(e.json)).toEqual(e.event);
    }
  });

  it("keeps every position right when two pods share the directory and append in turn", async () => {
    const dir = mkdtempSync(join(tmpdir(), "events-"));
    const here = createFileJobEventStore({ dir, ttlSeconds: 60 });
    const there = createFileJobEventStore({ dir, ttlSeconds: 60 });
    const id = Bun.randomUUIDv7();
    const at = new Date().toISOString();
    const ev = (message: string) => ({ type: "error" as const, at, code: "c", message });
    try {
      await here.append(id, [ev("h1"), ev("h2")]);
      // A watcher here, caught up from memory, then the other pod's append, then ours again.
      expect((await here.read(id, 0)).map((e) => e.id)).toEqual([1, 2]);
      await there.append(id, [{ type: "status", at, status: "cancelled" }]);
      expect((await here.read(id, 2)).map((e) => [e.id, e.event.type])).toEqual([[3, "status"]]);
      await here.append(id, [ev("h3")]);
      for (const store of [here, there]) {
        expect((await store.read(id, 0)).map((e) => [e.id, e.event.type === "error" ? e.event.message : e.event.type])).toEqual([
          [1, "h1"],
          [2, "h2"],
          [3, "status"],
          [4, "h3"],
        ]);
      }
      // Whole lines on disk, in that order.
      expect(
        readFileSync(join(dir, `${id}.events.jsonl`), "utf8")
          .trimEnd()
          .split("\n")
          .map((l) => JSON.parse(l).message ?? JSON.parse(l).type),
      ).toEqual(["h1", "h2", "status", "h3"]);
    } finally {
      await Promise.all([here.close(), there.close()]);
    }
  });

  it("appends the run's events when the result line comes, not a tick later, and the answer when the run ends", async () => {
    const dir = mkdtempSync(join(tmpdir(), "events-"));
    const store = createFileJobEventStore({ dir, ttlSeconds: 60 });
    const id = Bun.randomUUIDv7();
    // A tick far longer than the test: only the result line can have written the events.
    const r = new RunRecorder({ store, jobId: id, maxBytes: 1 << 20, onProgress: () => {}, writeTickMs: 600_000 });
    const lines = frames();
    for (const ev of lines.slice(0, -1)) r.push(ev);
    expect(lines.at(-1)!.type).toBe("result");
    r.push(lines.at(-1)!);
    const events = await until(
      async () => {
        const all = await store.read(id, 0);
        return all.some((e) => e.event.type === "tool_use") ? all : undefined;
      },
      { what: "the tool call in the log" },
    );
    // A result line is not the run's end (a follow-up turn may come after a background
    // sub-agent): the answer is known when the agent has exited.
    expect(events.some((e) => e.event.type === "text" && e.event.final)).toBe(false);
    await r.finish({ status: "succeeded", exit_code: 0 });
    expect((await store.read(id, 0)).some((e) => e.event.type === "text" && e.event.final)).toBe(true);
    await store.close();
  });
});

describeWithRedis("the job's event log in Redis, with two pods appending", () => {
  it("gives this pod's watchers its own appends from memory, and every position right when another pod appends in between", async () => {
    const keyPrefix = `test-events-${crypto.randomUUID()}`;
    const opts = { url: REDIS_URL, keyPrefix, ttlSeconds: 60 };
    const here = createRedisJobEventStore(opts);
    const there = createRedisJobEventStore(opts);
    const raw = createClient({ url: REDIS_URL });
    await raw.connect();
    try {
      await until(
        async () => {
          try {
            await here.read(Bun.randomUUIDv7(), 0);
            await there.read(Bun.randomUUIDv7(), 0);
            return true;
          } catch {
            return false;
          }
        },
        { what: "both stores connected to Redis" },
      );
      const id = Bun.randomUUIDv7();
      const at = new Date().toISOString();
      const ev = (message: string) => ({ type: "error" as const, at, code: "c", message });
      await here.append(id, [ev("h1"), ev("h2")]);
      await there.append(id, [{ type: "status", at, status: "cancelled" }]);
      await here.append(id, [ev("h3")]);
      // Each pod reads the same log, with the same positions, whatever it kept in memory.
      for (const store of [here, there]) {
        const all = await store.read(id, 0);
        expect(all.map((e) => [e.id, e.event.type === "error" ? e.event.message : e.event.type])).toEqual([
          [1, "h1"],
          [2, "h2"],
          [3, "status"],
          [4, "h3"],
        ]);
        expect((await store.read(id, 2)).map((e) => e.id)).toEqual([3, 4]);
        expect(await store.read(id, 4)).toEqual([]);
      }
      // A watcher here, caught up, sees the other pod's next append (it asks Redis past its own).
      await there.append(id, [{ type: "status", at, status: "failed" }]);
      expect((await here.read(id, 4)).map((e) => [e.id, e.event.type])).toEqual([[5, "status"]]);
      // What the stream sends is the stored text itself.
      const [stored] = await raw.lRange(`${keyPrefix}:job-events:${id}`, 3, 3);
      expect((await here.read(id, 3))[0]!.json).toBe(stored!);
      await raw.del(`${keyPrefix}:job-events:${id}`);
    } finally {
      await raw.close();
      await Promise.all([here.close(), there.close()]);
    }
  });
});
