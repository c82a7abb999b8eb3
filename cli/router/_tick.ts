// Enqueueing a tick and waiting for it, shared by `tick` and `sync`.
import type { RouterClient } from "../../src/router/client";

export interface TickRecord {
  tick_id?: string;
  id?: string;
  status: string;
  error_tail?: string | null;
  counts?: Record<string, number>;
}

export const tickId = (t: TickRecord) => t.tick_id ?? t.id ?? "";
export const finished = (t: TickRecord) => t.status === "succeeded" || t.status === "failed";

export async function enqueueTick(c: RouterClient, flags: { dry_run?: boolean; no_ai?: boolean }): Promise<TickRecord> {
  return c.request<TickRecord>("POST", "/tick", { dry_run: Boolean(flags.dry_run), no_ai: Boolean(flags.no_ai) });
}

/** Polls GET /tick/{id} until the tick has finished (or the deadline passes). */
export async function waitForTick(c: RouterClient, id: string, opts: { timeoutMs?: number; onStatus?: (t: TickRecord) => void } = {}): Promise<TickRecord> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30 * 60_000);
  let last = "";
  for (let wait = 100; ; wait = Math.min(wait * 2, 2_000)) {
    const t = await c.request<TickRecord>("GET", `/tick/${encodeURIComponent(id)}`);
    if (t.status !== last) opts.onStatus?.(t);
    last = t.status;
    if (finished(t)) return t;
    if (Date.now() > deadline) throw new Error(`tick ${id} had not finished after ${Math.round((opts.timeoutMs ?? 0) / 1000)} s (still ${t.status})`);
    await Bun.sleep(wait);
  }
}
