// The tick queue's files: a finished tick's record is in completed/ (or failed/) by the time any
// reader sees its final state, and a start after a crash between "final record written" and
// "request removed" keeps the outcome rather than failing a tick that finished.
import { describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TICK_FOLDERS, TICK_WAIT_MS, TickQueue, type TickRecord, tickWaitMs } from "./queue";

const outcome = { counts: { arcs: 0, markers_harvested: 0 }, phases_ms: {}, warnings: [], plan: null } as never;

function vault(): string {
  const v = mkdtempSync(join(tmpdir(), "tick-queue-"));
  for (const dir of Object.values(TICK_FOLDERS)) mkdirSync(join(v, dir), { recursive: true });
  return v;
}

describe("TickQueue files", () => {
  it("has the completed file in place whenever a reader sees the tick succeeded", async () => {
    const v = vault();
    const q = new TickQueue({ vault: v, run: async () => outcome });
    await q.start();
    const queued = await q.enqueue({});
    // Read as fast as possible while it runs: every succeeded read must find its file.
    let seen: TickRecord | undefined;
    for (let i = 0; i < 10_000 && seen?.status !== "succeeded"; i++) {
      seen = await q.get(queued.tick_id);
      if (seen?.status === "succeeded") {
        const names = readdirSync(join(v, TICK_FOLDERS.completed)).filter((n) => n.endsWith(`-${queued.tick_id}.json`));
        expect(names).toHaveLength(1);
      }
    }
    expect(seen?.status).toBe("succeeded");
    await q.close();
  });

  it("on start, removes the request of a tick whose final record was already written, and keeps its outcome", async () => {
    const v = vault();
    const name = "20260501T120000Z-abcdef012345.json";
    const base = {
      tick_id: "abcdef012345",
      trigger: "api",
      dry_run: false,
      no_ai: false,
      as_of: "2026-05-01T12:00:00.000Z",
      requested_at: "2026-05-01T12:00:00.000Z",
      started_at: "2026-05-01T12:00:01.000Z",
      counts: null,
      phases_ms: null,
      warnings: [],
      plan: null,
      error_tail: null,
    };
    writeFileSync(join(v, TICK_FOLDERS.requested, name), JSON.stringify({ ...base, status: "running", finished_at: null, duration_ms: null }));
    const done = { ...base, status: "succeeded", finished_at: "2026-05-01T12:00:02.000Z", duration_ms: 1000 };
    writeFileSync(join(v, TICK_FOLDERS.completed, name), JSON.stringify(done));
    const q = new TickQueue({ vault: v, run: async () => outcome });
    await q.start();
    expect(existsSync(join(v, TICK_FOLDERS.requested, name))).toBe(false);
    expect(existsSync(join(v, TICK_FOLDERS.failed, name))).toBe(false);
    expect(JSON.parse(readFileSync(join(v, TICK_FOLDERS.completed, name), "utf8")).status).toBe("succeeded");
    expect((await q.get("abcdef012345"))?.status).toBe("succeeded");
    await q.close();
  });
});

describe("waiting for a tick", () => {
  it("waits the bound when the caller names no time, and never longer than it", () => {
    expect(tickWaitMs()).toBe(TICK_WAIT_MS);
    expect(tickWaitMs(TICK_WAIT_MS * 10)).toBe(TICK_WAIT_MS);
    expect(tickWaitMs(Number.POSITIVE_INFINITY)).toBe(TICK_WAIT_MS);
    expect(tickWaitMs(Number.NaN)).toBe(TICK_WAIT_MS);
  });

  it("keeps a shorter wait as asked and treats a negative one as none", () => {
    expect(tickWaitMs(1500)).toBe(1500);
    expect(tickWaitMs(-5)).toBe(0);
  });

  it("finds a tick that finished between listing its request and reading it (the request gone, the final record written)", async () => {
    const v = vault();
    const q = new TickQueue({ vault: v, run: async () => outcome });
    const id = "0123456789ab";
    const name = `20260101T000000Z-${id}.json`;
    const final = { tick_id: id, status: "succeeded" } as TickRecord;
    mkdirSync(join(v, TICK_FOLDERS.requested), { recursive: true });
    mkdirSync(join(v, TICK_FOLDERS.completed), { recursive: true });
    // Listed in requested/ but gone when read (a link to nothing), and finished in completed/.
    symlinkSync(join(v, "gone.json"), join(v, TICK_FOLDERS.requested, name));
    writeFileSync(join(v, TICK_FOLDERS.completed, name), JSON.stringify(final));
    expect((await q.get(id))?.status).toBe("succeeded");
    expect((await q.wait(id, 0))?.status).toBe("succeeded");
  });

  it("answers with the running tick's record once a short wait is up, and with the final record when it finishes in time", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const q = new TickQueue({
      vault: vault(),
      run: async () => {
        await gate;
        return outcome;
      },
    });
    await q.start();
    const queued = await q.enqueue({});
    const early = await q.wait(queued.tick_id, 20);
    expect(early?.status === "queued" || early?.status === "running").toBe(true);
    const waiting = q.wait(queued.tick_id);
    release();
    expect((await waiting)?.status).toBe("succeeded");
    await q.close();
  });
});
