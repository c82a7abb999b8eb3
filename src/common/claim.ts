// A cross-process claim on a key: the cheap lock for a hot path whose holders hold it for
// a moment (POST /ingest's dedupe of one content hash). file-lock.ts's lock directory
// (proper-lockfile: mkdir, owner file, an mtime timer, rmdir) costs ~0.3 ms a request; a
// claim is one exclusive create of `<path>` holding {pid, host}, and one unlink.
// - Callers in this process queue on a promise chain per path: no polling between them.
// - Another process's claim is waited for (jittered backoff), unless its holder is dead: a
//   process of this host that is gone is stale at once; a claim of another host (a shared
//   filesystem) once its mtime is older than staleMs — a live holder refreshes it every
//   staleMs/2 while it holds the claim.
// - A claim left by a crash is removed at start-up too (crash-leftovers.ts, removeDeadClaim).
import { mkdirSync, readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { FileLockTimeoutError, processAlive } from "./file-lock";
import { log } from "./logger";

const logger = log("claim");
const HOST = hostname();
const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_STALE_MS = 10_000;
const MAX_WAIT_MS = 100;

export interface ClaimOptions {
  /** Give up waiting after this long (default 60 s). */
  timeoutMs?: number;
  /** A claim of another host whose mtime is older than this is taken over (default 10 s). */
  staleMs?: number;
}

/** Claim files end in `.claim`; start-up cleanup looks for these. */
export const isClaimFileName = (name: string): boolean => name.endsWith(".claim");

const queues = new Map<string, Promise<unknown>>();

/** Runs `fn` holding the claim on `path` (the claim file itself, e.g. `<ledger>.claim`). */
export function withClaim<T>(path: string, fn: () => Promise<T>, opts: ClaimOptions = {}): Promise<T> {
  const prior = queues.get(path);
  const run = prior ? prior.then(() => held(path, fn, opts)) : held(path, fn, opts);
  const tail = run.then(
    () => {},
    () => {},
  );
  queues.set(path, tail);
  void tail.then(() => {
    if (queues.get(path) === tail) queues.delete(path);
  });
  return run;
}

async function held<T>(path: string, fn: () => Promise<T>, opts: ClaimOptions): Promise<T> {
  const staleMs = opts.staleMs ?? DEFAULT_STALE_MS;
  if (!tryClaim(path, staleMs)) await waitForClaim(path, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, staleMs);
  const refresh = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(path, now, now);
    } catch (err) {
      logger.error(`claim ${path} could not be refreshed: ${(err as Error).message}`);
    }
  }, staleMs / 2);
  refresh.unref?.();
  try {
    return await fn();
  } finally {
    clearInterval(refresh);
    try {
      unlinkSync(path);
    } catch {}
  }
}

/** One attempt: true when the claim is ours now (a dead holder's claim is taken over). */
function tryClaim(path: string, staleMs: number): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      createClaim(path);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    if (!isDeadClaim(path, staleMs)) return false;
    logger.warn(`taking over the claim ${path}: its holder is gone`);
    try {
      unlinkSync(path);
    } catch {}
  }
  return false;
}

/** The exclusive create; a missing folder is made (as file-lock.ts makes the lock's). */
function createClaim(path: string): void {
  const owner = JSON.stringify({ pid: process.pid, host: HOST });
  try {
    writeFileSync(path, owner, { flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, owner, { flag: "wx" });
  }
}

async function waitForClaim(path: string, timeoutMs: number, staleMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let wait = 2;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) throw new FileLockTimeoutError(path, timeoutMs, staleMs);
    await Bun.sleep(Math.min(left, wait * (0.5 + Math.random())));
    wait = Math.min(wait * 2, MAX_WAIT_MS);
    if (tryClaim(path, staleMs)) return;
  }
}

/**
 * A claim whose holder is gone: a process of this host that is not running (or this process:
 * its own claims are queued, so one found on disk was left by an earlier process with the same
 * pid, as a container's pid 1 is), or another host's not refreshed for staleMs. An unreadable
 * claim (a crash between create and write) counts as dead once it is a second old.
 */
function isDeadClaim(path: string, staleMs: number): boolean {
  const owner = readClaim(path);
  if (owner === "gone") return true;
  if (owner === null || owner.host !== HOST) return ageMs(path) > (owner === null ? 1_000 : staleMs);
  return typeof owner.pid !== "number" || owner.pid === process.pid || !processAlive(owner.pid);
}

function readClaim(path: string): { pid?: number; host?: string } | null | "gone" {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return "gone";
  }
  try {
    return JSON.parse(text) as { pid?: number; host?: string };
  } catch {
    return null;
  }
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** Start-up cleanup: removes the claim at `path` when a gone process of this host left it. */
export function removeDeadClaim(path: string): boolean {
  const owner = readClaim(path);
  if (owner === "gone" || owner === null || owner.host !== HOST) return false;
  if (typeof owner.pid === "number" && owner.pid !== process.pid && processAlive(owner.pid)) return false;
  try {
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}
