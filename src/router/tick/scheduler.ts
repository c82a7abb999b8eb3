// The in-process scheduler: enqueues a tick every TICK_INTERVAL_SECONDS (0 = off), counted
// from the last tick requested (so a restart neither skips the schedule nor ticks at once),
// and adds none while a tick is still queued or running.
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { log } from "../../common/logger";
import { TICK_FOLDERS, type TickQueue } from "./queue";

const logger = log("tick");
/** setTimeout's ceiling (~24.8 days); longer waits are taken in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class TickScheduler {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private due: number | undefined;

  constructor(private readonly opts: { vault: string; intervalSeconds: number; queue: TickQueue; now?: () => Date }) {}

  async start(): Promise<void> {
    if (this.opts.intervalSeconds <= 0) return;
    const last = await lastRequestedAt(this.opts.vault);
    const now = this.now();
    const due = last ? last.getTime() + this.opts.intervalSeconds * 1000 : now + this.opts.intervalSeconds * 1000;
    this.arm(Math.max(0, due - now));
  }

  stop(): void {
    this.stopped = true;
    this.due = undefined;
    if (this.timer) clearTimeout(this.timer);
  }

  /** When the next scheduled tick is due; undefined while the scheduler is off or stopped. */
  get nextDueAt(): Date | undefined {
    return this.due === undefined ? undefined : new Date(this.due);
  }

  private now(): number {
    return (this.opts.now ?? (() => new Date()))().getTime();
  }

  private arm(ms: number): void {
    if (this.stopped) return;
    this.due = this.now() + ms;
    const step = Math.min(ms, MAX_TIMER_MS);
    this.timer = setTimeout(() => void (step < ms ? this.arm(ms - step) : this.fire()), step);
    this.timer.unref?.();
  }

  private async fire(): Promise<void> {
    try {
      if (await this.opts.queue.busy()) logger.info("scheduled tick skipped: one is still queued or running");
      else await this.opts.queue.enqueue({ trigger: "scheduler" });
    } catch (err) {
      logger.error(`scheduled tick not enqueued: ${(err as Error).message}`);
    }
    this.arm(this.opts.intervalSeconds * 1000);
  }
}

/** When the newest tick on record was requested (file names start with its time). */
async function lastRequestedAt(vault: string): Promise<Date | undefined> {
  let newest = "";
  for (const dir of Object.values(TICK_FOLDERS)) {
    for (const n of await readdir(join(vault, dir)).catch(() => [] as string[])) if (/^\d{8}T\d{6}Z-/.test(n) && n > newest) newest = n;
  }
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z/.exec(newest);
  return m ? new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`) : undefined;
}
