// Enqueueing a tick and waiting for it, shared by `tick` and `sync`, through RouterClient.
import type { RouterClient, TickRecord } from "../../src/router/client";
import { fail } from "../_errors";

export const finished = (t: TickRecord) => t.status === "succeeded" || t.status === "failed";

export function enqueueTick(c: RouterClient, flags: { dry_run?: boolean; no_ai?: boolean }): Promise<TickRecord> {
  return c.tick({ dry_run: Boolean(flags.dry_run), no_ai: Boolean(flags.no_ai) });
}

/** Polls GET /tick/{id} until the tick has finished (or the deadline passes). */
export async function waitForTick(c: RouterClient, id: string, opts: { timeoutMs?: number; onStatus?: (t: TickRecord) => void } = {}): Promise<TickRecord> {
  const timeoutMs = opts.timeoutMs ?? 30 * 60_000;
  const deadline = Date.now() + timeoutMs;
  let last = "";
  for (let wait = 100; ; wait = Math.min(wait * 2, 2_000)) {
    const t = await c.getTick(id);
    if (t.status !== last) opts.onStatus?.(t);
    last = t.status;
    if (finished(t)) return t;
    if (Date.now() > deadline) fail(`tick ${id} had not finished after ${Math.round(timeoutMs / 1000)} s (still ${t.status})`);
    await Bun.sleep(wait);
  }
}
