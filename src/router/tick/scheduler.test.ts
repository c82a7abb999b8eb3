// The in-process tick scheduler: off at 0, due one interval after the newest tick on record
// (a restart neither skips the schedule nor ticks at once), overdue → at once, and no tick
// added while one is still queued or running.
import { afterEach, describe, expect, it } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until } from "../../../test/support/until";
import { TICK_FOLDERS, type TickQueue, type TickRequest } from "./queue";
import { TickScheduler } from "./scheduler";

const NOW = new Date("2026-05-01T12:00:00Z");
const running: TickScheduler[] = [];
afterEach(() => {
  for (const s of running.splice(0)) s.stop();
});

function vaultWithTick(folder: keyof typeof TICK_FOLDERS | undefined, requestedAt?: Date): string {
  const vault = mkdtempSync(join(tmpdir(), "scheduler-"));
  for (const dir of Object.values(TICK_FOLDERS)) mkdirSync(join(vault, dir), { recursive: true });
  if (folder && requestedAt) {
    const stamp = requestedAt
      .toISOString()
      .replace(/[-:]/g, "")
      .replace(/\.\d+Z$/, "Z");
    writeFileSync(join(vault, TICK_FOLDERS[folder], `${stamp}-abcdef012345.json`), "{}");
  }
  return vault;
}

/** A queue that records what the scheduler asks of it; `enqueued` resolves at the first enqueue. */
function fakeQueue(busy = false) {
  const calls: TickRequest[] = [];
  let busyAsked = 0;
  let resolveEnqueued!: () => void;
  let resolveBusy!: () => void;
  const enqueued = new Promise<void>((r) => (resolveEnqueued = r));
  const askedBusy = new Promise<void>((r) => (resolveBusy = r));
  const queue = {
    async busy() {
      busyAsked++;
      resolveBusy();
      return busy;
    },
    async enqueue(req: TickRequest) {
      calls.push(req);
      resolveEnqueued();
      return {};
    },
  } as unknown as TickQueue;
  return { queue, calls, enqueued, askedBusy, busyAsked: () => busyAsked };
}

function scheduler(vault: string, intervalSeconds: number, queue: TickQueue): TickScheduler {
  const s = new TickScheduler({ vault, intervalSeconds, queue, now: () => NOW });
  running.push(s);
  return s;
}

describe("TickScheduler", () => {
  it("is off with TICK_INTERVAL_SECONDS=0: nothing armed, nothing enqueued", async () => {
    const q = fakeQueue();
    const s = scheduler(vaultWithTick(undefined), 0, q.queue);
    await s.start();
    expect(s.nextDueAt).toBeUndefined();
    expect(q.calls).toEqual([]);
  });

  it("on a vault that never ticked, is due one interval from now", async () => {
    const s = scheduler(vaultWithTick(undefined), 7200, fakeQueue().queue);
    await s.start();
    expect(s.nextDueAt?.toISOString()).toBe("2026-05-01T14:00:00.000Z");
  });

  it("after a restart, is due one interval after the newest tick on record", async () => {
    const s = scheduler(vaultWithTick("completed", new Date(NOW.getTime() - 1800_000)), 7200, fakeQueue().queue);
    await s.start();
    expect(s.nextDueAt?.toISOString()).toBe("2026-05-01T13:30:00.000Z");
    s.stop();
    expect(s.nextDueAt).toBeUndefined();
  });

  it("enqueues at once when a tick is overdue, with trigger scheduler, then re-arms", async () => {
    const q = fakeQueue();
    const s = scheduler(vaultWithTick("failed", new Date(NOW.getTime() - 3 * 3600_000)), 3600, q.queue);
    await s.start();
    await q.enqueued;
    expect(q.calls).toEqual([{ trigger: "scheduler" }]);
    await until(() => s.nextDueAt?.getTime() === NOW.getTime() + 3600_000, { ms: 5_000, what: "the next tick to be planned", every: 5 });
    expect(s.nextDueAt?.toISOString()).toBe("2026-05-01T13:00:00.000Z");
  });

  it("adds no tick while one is still queued or running", async () => {
    const q = fakeQueue(true);
    const s = scheduler(vaultWithTick("requested", new Date(NOW.getTime() - 3 * 3600_000)), 3600, q.queue);
    await s.start();
    await q.askedBusy;
    await until(() => s.nextDueAt?.getTime() === NOW.getTime() + 3600_000, { ms: 5_000, what: "the next tick to be planned", every: 5 });
    expect(q.busyAsked()).toBe(1);
    expect(q.calls).toEqual([]);
  });
});
