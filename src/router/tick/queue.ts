// Tick requests and records (issue 6, POST /tick): a request is a JSON file
// brain-feed/ticks/requested/<YYYYMMDDTHHMMSSZ>-<id>.json that the worker rewrites as it runs
// (status running) and then moves to completed/ or failed/ (with error_tail). One tick runs at
// a time: requests run in the order they were requested, each under a cross-process lock. Dry runs never
// touch the vault, so their records live in memory only. Requests found at start-up run;
// one left "running" by a process that died is failed with that reason.
import { mkdir, readdir, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { DomainError } from "../../common/domain-error";
import { withFileLock } from "../../common/file-lock";
import { log } from "../../common/logger";
import { compactStamp } from "../vault/slug";
import { TICK_WAIT_MS } from "./limits";
import type { TickCounts, TickOutcome } from "./run";
import type { TickRequest as TickWireRequest } from "./schema";

const logger = log("tick");

const TICKS_DIR = "brain-feed/ticks";
export const TICK_FOLDERS = { requested: `${TICKS_DIR}/requested`, completed: `${TICKS_DIR}/completed`, failed: `${TICKS_DIR}/failed` } as const;
export { TICK_WAIT_MS } from "./limits";

/** How long to wait for a tick: what the caller asked, within 0..TICK_WAIT_MS; the bound when it asked nothing. */
export function tickWaitMs(requestedMs?: number): number {
  if (requestedMs === undefined || Number.isNaN(requestedMs)) return TICK_WAIT_MS;
  return Math.min(Math.max(requestedMs, 0), TICK_WAIT_MS);
}

/** A tick that has run to its end, well or not. */
export const tickFinished = (r: TickRecord) => r.status === "succeeded" || r.status === "failed";

/** Finished records kept per folder (older ones are pruned). */
const TICKS_KEPT = 500;
const ERROR_TAIL_LINES = 20;
const ERROR_TAIL_CHARS = 4000;
const DRY_RUNS_KEPT = 100;

export type TickStatus = "queued" | "running" | "succeeded" | "failed";
export type TickTrigger = "api" | "scheduler" | "mcp";

export interface TickRecord {
  tick_id: string;
  status: TickStatus;
  trigger: TickTrigger;
  dry_run: boolean;
  no_ai: boolean;
  /** The time the tick computes heat, TTLs and feed expiry against (default: when it was requested). */
  as_of: string;
  requested_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  counts: TickCounts | null;
  /** Milliseconds per step (walk, harvest, arcs, signals, feed, apply, index). */
  phases_ms: Record<string, number> | null;
  warnings: string[];
  /** Vault paths written and deleted (for a dry run: what it would write and delete). */
  plan: { writes: string[]; deletes: string[] } | null;
  /** The failing error's last lines. */
  error_tail: string | null;
}

/** A tick as the domain enqueues it: the request's flags, its as_of read as a Date, and who asked. */
export type TickRequest = Pick<TickWireRequest, "dry_run" | "no_ai"> & { as_of?: Date; trigger?: TickTrigger };

export interface TickQueueDeps {
  vault: string;
  run: (opts: { dryRun: boolean; noAi: boolean; asOf: Date }) => Promise<TickOutcome>;
  now?: () => Date;
}

const fileName = (r: TickRecord) => `${compactStamp(new Date(r.requested_at))}-${r.tick_id}.json`;

function errorTail(err: unknown): string {
  const text = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
  const tail = text.trimEnd().split("\n").slice(-ERROR_TAIL_LINES).join("\n");
  return tail.length > ERROR_TAIL_CHARS ? tail.slice(-ERROR_TAIL_CHARS) : tail;
}

export class TickQueue {
  private readonly memory = new Map<string, TickRecord>();
  private readonly waiters = new Map<string, Array<(r: TickRecord) => void>>();
  private pump: Promise<void> | undefined;
  private closed = false;
  private lastRequested = 0;
  /** Set by every enqueue: a drain that found nothing looks once more before it stops. */
  private dirty = false;

  constructor(private readonly deps: TickQueueDeps) {}

  private now(): Date {
    return (this.deps.now ?? (() => new Date()))();
  }

  /** Creates the folders, fails ticks a dead process left running, runs waiting requests. */
  async start(): Promise<void> {
    for (const dir of Object.values(TICK_FOLDERS)) await mkdir(join(this.deps.vault, dir), { recursive: true });
    await withFileLock(
      this.lockPath(),
      async () => {
        for (const { name, record } of await this.listRequested()) {
          if (record?.status !== "running") continue;
          // Killed after its final record was written: only the request is left to remove.
          if (await this.finishedElsewhere(name)) {
            await unlink(join(this.deps.vault, TICK_FOLDERS.requested, name)).catch(() => {});
            continue;
          }
          const failed: TickRecord = {
            ...record,
            status: "failed",
            finished_at: this.now().toISOString(),
            error_tail: "the router stopped while this tick was running",
          };
          await this.finish(name, failed);
        }
      },
      { timeoutMs: 5_000 },
    ).catch((err) => logger.warn(`tick recovery skipped: ${(err as Error).message}`));
    this.kick();
  }

  async enqueue(req: TickRequest): Promise<TickRecord> {
    if (this.closed) throw new DomainError("unavailable", "shutting_down", "the router is shutting down; request the tick again once it is back");
    // Strictly increasing request times: the worker runs requests in that order, ties none.
    let requested = this.now();
    if (requested.getTime() <= this.lastRequested) requested = new Date(this.lastRequested + 1);
    this.lastRequested = requested.getTime();
    const record: TickRecord = {
      tick_id: crypto.randomUUID().replaceAll("-", "").slice(0, 12),
      status: "queued",
      trigger: req.trigger ?? "api",
      dry_run: req.dry_run ?? false,
      no_ai: req.no_ai ?? false,
      as_of: (req.as_of ?? requested).toISOString(),
      requested_at: requested.toISOString(),
      started_at: null,
      finished_at: null,
      duration_ms: null,
      counts: null,
      phases_ms: null,
      warnings: [],
      plan: null,
      error_tail: null,
    };
    if (record.dry_run) this.remember(record);
    else await writeFileAtomic(join(this.deps.vault, TICK_FOLDERS.requested, fileName(record)), `${JSON.stringify(record, null, 2)}\n`);
    this.dirty = true;
    this.kick();
    return record;
  }

  /** The record of a tick by id: memory (dry runs), then requested/, completed/, failed/. */
  async get(id: string): Promise<TickRecord | undefined> {
    if (!/^[0-9a-f]{1,64}$/i.test(id)) return undefined;
    const mem = this.memory.get(id);
    if (mem) return mem;
    // A tick that finishes meanwhile moves from requested/ to completed/ or failed/ (the final
    // file first, then the request goes): a request listed but gone when read is looked for
    // again, so a reader never sees a tick that exists as missing.
    for (let pass = 0; pass < 2; pass++) {
      for (const dir of Object.values(TICK_FOLDERS)) {
        const name = (await readdir(join(this.deps.vault, dir)).catch(() => [] as string[])).find((n) => n.endsWith(`-${id}.json`));
        const record = name === undefined ? undefined : await readRecord(join(this.deps.vault, dir, name));
        if (record) return record;
      }
    }
    return undefined;
  }

  /** Resolves with the record once the tick has finished, or with its current state after timeoutMs (tickWaitMs bounds it). */
  async wait(id: string, timeoutMs?: number): Promise<TickRecord | undefined> {
    const now = await this.get(id);
    if (!now || tickFinished(now)) return now;
    return new Promise((resolve) => {
      const timer = setTimeout(async () => {
        const list = this.waiters.get(id);
        if (list)
          this.waiters.set(
            id,
            list.filter((f) => f !== done),
          );
        resolve(await this.get(id));
      }, tickWaitMs(timeoutMs));
      const done = (r: TickRecord) => {
        clearTimeout(timer);
        resolve(r);
      };
      this.waiters.set(id, [...(this.waiters.get(id) ?? []), done]);
    });
  }

  /** True while a tick (not a dry run) is queued or running: the scheduler then adds none. */
  async busy(): Promise<boolean> {
    return (await this.listRequested()).length > 0;
  }

  /** Stops taking requests and waits for the running tick (queued ones stay for the next start). */
  async close(): Promise<void> {
    this.closed = true;
    await this.pump;
  }

  private kick(): void {
    if (this.closed) return;
    this.pump ??= this.drain().then(
      () => {
        this.pump = undefined;
        // An enqueue that raced the end of the drain is picked up here.
        if (!this.closed && this.dirty) this.kick();
      },
      (err) => {
        this.pump = undefined;
        logger.error(`tick worker stopped; waiting requests run at the next request or start-up: ${(err as Error).message}`);
      },
    );
  }

  private async drain(): Promise<void> {
    for (;;) {
      if (this.closed) return;
      this.dirty = false;
      const next = await this.next();
      if (!next) {
        if (this.dirty) continue;
        return;
      }
      await this.runOne(next);
    }
  }

  /** The oldest waiting request: dry runs (memory) and files (incl. ones other processes wrote) by request time. */
  private async next(): Promise<{ record: TickRecord; name?: string } | undefined> {
    const files = (await this.listRequested()).filter((f) => f.record?.status === "queued");
    const dry = [...this.memory.values()].filter((r) => r.status === "queued");
    const candidates = [
      ...files.map((f) => ({ record: f.record!, name: f.name as string | undefined })),
      ...dry.map((record) => ({ record, name: undefined })),
    ];
    candidates.sort((a, b) => (a.record.requested_at < b.record.requested_at ? -1 : a.record.requested_at > b.record.requested_at ? 1 : 0));
    return candidates[0];
  }

  private async runOne({ record, name }: { record: TickRecord; name?: string }): Promise<void> {
    const started = this.now();
    let running: TickRecord = { ...record, status: "running", started_at: started.toISOString() };
    const finishWith = async (final: TickRecord) => {
      if (name) await this.finish(name, final);
      else this.remember(final);
      for (const w of this.waiters.get(final.tick_id) ?? []) w(final);
      this.waiters.delete(final.tick_id);
    };
    const body = async () => {
      if (name) await writeFileAtomic(join(this.deps.vault, TICK_FOLDERS.requested, name), `${JSON.stringify(running, null, 2)}\n`);
      else this.remember(running);
      logger.info(`tick ${record.tick_id} started${record.dry_run ? " (dry run)" : ""}${record.no_ai ? " (no_ai)" : ""}`);
      try {
        const outcome = await this.deps.run({ dryRun: record.dry_run, noAi: record.no_ai, asOf: new Date(record.as_of) });
        const finished = this.now();
        running = {
          ...running,
          status: "succeeded",
          finished_at: finished.toISOString(),
          duration_ms: finished.getTime() - started.getTime(),
          counts: outcome.counts,
          phases_ms: outcome.phases_ms,
          warnings: outcome.warnings,
          plan: outcome.plan,
        };
        logger.info(`tick ${record.tick_id} succeeded in ${running.duration_ms} ms`);
      } catch (err) {
        const finished = this.now();
        running = {
          ...running,
          status: "failed",
          finished_at: finished.toISOString(),
          duration_ms: finished.getTime() - started.getTime(),
          error_tail: errorTail(err),
        };
        logger.error(`tick ${record.tick_id} failed: ${(err as Error).message}`);
      }
      await finishWith(running);
    };
    try {
      // Dry runs write nothing, so they need no lock; real ticks take the cross-process one.
      if (name) await withFileLock(this.lockPath(), body, { timeoutMs: 30 * 60_000, staleMs: 30_000 });
      else await body();
    } catch (err) {
      // The lock itself failed: the request stays queued for the next pump.
      logger.error(`tick ${record.tick_id} could not start: ${(err as Error).message}`);
      throw err;
    }
  }

  private async finishedElsewhere(name: string): Promise<boolean> {
    for (const folder of [TICK_FOLDERS.completed, TICK_FOLDERS.failed]) {
      if ((await readRecord(join(this.deps.vault, folder, name))) !== undefined) return true;
    }
    return false;
  }

  private lockPath(): string {
    return join(this.deps.vault, TICKS_DIR, ".worker");
  }

  private remember(r: TickRecord): void {
    this.memory.set(r.tick_id, r);
    if (this.memory.size > DRY_RUNS_KEPT) {
      const oldest = [...this.memory.values()].find((x) => x.status === "succeeded" || x.status === "failed");
      if (oldest) this.memory.delete(oldest.tick_id);
    }
  }

  private async listRequested(): Promise<Array<{ name: string; record: TickRecord | undefined }>> {
    const dir = join(this.deps.vault, TICK_FOLDERS.requested);
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith(".json") && !n.startsWith(".")).sort();
    return Promise.all(names.map(async (name) => ({ name, record: await readRecord(join(dir, name)) })));
  }

  /**
   * Writes the final record into completed/ or failed/, then removes the request: a reader that
   * sees the final state (in either folder) always finds the finished file.
   */
  private async finish(name: string, record: TickRecord): Promise<void> {
    const from = join(this.deps.vault, TICK_FOLDERS.requested, name);
    const folder = record.status === "succeeded" ? TICK_FOLDERS.completed : TICK_FOLDERS.failed;
    await writeFileAtomic(join(this.deps.vault, folder, name), `${JSON.stringify(record, null, 2)}\n`);
    await unlink(from).catch(() => {});
    await prune(join(this.deps.vault, folder));
  }
}

export async function readRecord(path: string): Promise<TickRecord | undefined> {
  return readFile(path, "utf8").then(
    (t) => {
      try {
        return JSON.parse(t) as TickRecord;
      } catch {
        return undefined;
      }
    },
    () => undefined,
  );
}

async function prune(dir: string): Promise<void> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith(".json")).sort();
  for (const n of names.slice(0, Math.max(0, names.length - TICKS_KEPT))) await unlink(join(dir, n)).catch(() => {});
}
