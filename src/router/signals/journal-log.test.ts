import { describe, expect, it } from "bun:test";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../../../test/support/main-process";
import { journalLog } from "./journal-log";

const lines = (path: string) =>
  readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: number; data: { n: number } });

describe("the signal journal", () => {
  it("appends made at once from two logs on one file: every event once, ids unique and in file order", async () => {
    const path = join(tempDir("journal"), "signal-events.jsonl");
    const a = journalLog(path, { keep: 5_000 });
    const b = journalLog(path, { keep: 5_000 });
    await Promise.all([a.open(10), b.open(10)]);
    const events = await Promise.all(Array.from({ length: 300 }, (_, n) => (n % 2 ? a : b).append("signal", { n })));
    // Each caller gets its own event back, with the id it was written under.
    expect(events.map((e) => e.data.n)).toEqual(Array.from({ length: 300 }, (_, n) => n));
    expect(new Set(events.map((e) => e.id)).size).toBe(300);
    const written = lines(path);
    expect(written.map((e) => e.id)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    const byId = new Map(events.map((e) => [e.id, e.data.n]));
    expect(written.every((e) => byId.get(e.id) === e.data.n)).toBe(true);
    // A later append continues the ids.
    expect((await a.append("signal", { n: 300 })).id).toBe(301);
    await Promise.all([a.close(), b.close()]);
  });

  it("a write that fails fails every append waiting with it, and the next ones still go in", async () => {
    const dir = tempDir("journal-fail");
    const path = join(dir, "signal-events.jsonl");
    const log = journalLog(path, { keep: 5_000 });
    await log.open(10);
    await log.append("signal", { n: 0 });
    rmSync(path);
    mkdirSync(path); // the journal's path is now a folder: appending to it fails
    const failed = await Promise.allSettled(Array.from({ length: 5 }, (_, n) => log.append("signal", { n: n + 1 })));
    expect(failed.every((r) => r.status === "rejected")).toBe(true);
    rmSync(path, { recursive: true });
    const next = await Promise.all([log.append("signal", { n: 6 }), log.append("signal", { n: 7 })]);
    expect(next.map((e) => e.id)).toEqual([1, 2]);
    expect(lines(path).map((e) => e.data.n)).toEqual([6, 7]);
    await log.close();
  });
});
