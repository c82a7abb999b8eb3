import { describe, expect, it } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAgentLine } from "../../agent/stream-json";
import { createFileJobEventStore } from "./file-store";
import { RunRecorder } from "./recorder";

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
    await store.append(id, [1, 2, 3].map((n) => ({ type: "error" as const, at, code: "c", message: `m${n}` })));
    expect((await store.read(id, 1)).map((e) => e.id)).toEqual([2, 3]);
    await store.append(id, [{ type: "error", at, code: "c", message: "m4" }]);
    expect(await store.read(id, 3)).toEqual([{ id: 4, event: { type: "error", at, code: "c", message: "m4" } }]);
    expect((await store.read(id, 0, 2)).map((e) => e.id)).toEqual([1, 2]);
    expect(await store.read(Bun.randomUUIDv7(), 0)).toEqual([]);
  });
});
