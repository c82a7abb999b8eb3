// A cross-process claim on a key: the cheap lock for hot paths whose holders hold it for a
// moment (ingest's dedupe of one content hash, the vault's shared files). file-lock.ts's lock
// directory (proper-lockfile: mkdir, owner file, an mtime timer, rmdir) costs ~0.3–0.7 ms; a
// claim is one exclusive create of a file holding {"claim": {pid, host}}, and one unlink —
// or none, for a record file that is its own claim (withRecordClaim).
// - Callers in this process queue on a promise chain per path: no polling between them.
// - Another process's claim is waited for (jittered backoff), unless its holder is dead: a
//   process of this host that is gone is stale at once; a claim of another host (a shared
//   filesystem) once its mtime is older than staleMs — a live holder refreshes it every
//   staleMs/2 while it holds the claim.
// - A claim left by a crash is removed at start-up too (crash-leftovers.ts, removeDeadClaim).
import { mkdirSync, readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { hostname } from "node:os";
import { writeFileAtomicSync } from "./atomic-write";
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

/** Runs `fn` after every earlier caller of this process queued on `key` has finished. */
function queued<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prior = queues.get(key);
  const run = prior ? prior.then(fn) : fn();
  const tail = run.then(
    () => {},
    () => {},
  );
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return run;
}

/** Runs `fn` holding the claim on `path` (the claim file itself, e.g. `<path>.claim`). */
export function withClaim<T>(path: string, fn: () => Promise<T>, opts: ClaimOptions = {}): Promise<T> {
  return queued(path, async () => {
    await acquire(path, opts, false);
    return hold(path, opts, async () => {
      try {
        return await fn();
      } finally {
        removeQuietly(path);
      }
    });
  });
}

/**
 * A record file that is its own claim (ingest's ledger entry: one file per content hash).
 * When `path` already holds a record, `seen(text)` answers and `fn` does not run. Otherwise the
 * file is created as a claim, `fn` runs holding it and returns the record's final text, which
 * replaces the claim atomically (temp file and rename); if `fn` throws, the claim is removed and
 * no record is left. So a lookup and the claim are one exclusive create, and there is no unlink.
 */
export function withRecordClaim<T>(path: string, seen: (text: string) => T, fn: () => Promise<{ value: T; record: string }>, opts: ClaimOptions = {}): Promise<T> {
  return queued(path, async () => {
    const existing = await acquire(path, opts, true);
    if (existing !== undefined) return seen(existing);
    return hold(path, opts, async () => {
      let done: { value: T; record: string };
      try {
        done = await fn();
      } catch (err) {
        removeQuietly(path);
        throw err;
      }
      writeFileAtomicSync(path, done.record);
      return done.value;
    });
  });
}

/** Keeps a held claim's mtime fresh (another host's waiter goes by it) while `fn` runs. */
async function hold<T>(path: string, opts: ClaimOptions, fn: () => Promise<T>): Promise<T> {
  const staleMs = opts.staleMs ?? DEFAULT_STALE_MS;
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
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {}
}

/**
 * Takes the claim on `path`, waiting (jittered backoff) while a live holder has it. With
 * `records`, a file that holds a record (JSON without a `claim` key) is returned as text instead.
 */
async function acquire(path: string, opts: ClaimOptions, records: boolean): Promise<string | undefined> {
  const staleMs = opts.staleMs ?? DEFAULT_STALE_MS;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  let wait = 2;
  for (let takeovers = 0; ; ) {
    try {
      createClaim(path);
      return undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const found = readClaim(path);
    if (found.state === "record" && records) return found.text;
    if (found.state === "gone") continue;
    if (found.state !== "record" && takeovers < 3 && isDead(path, found, staleMs)) {
      takeovers++;
      logger.warn(`taking over the claim ${path}: its holder is gone`);
      removeQuietly(path);
      continue;
    }
    const left = deadline - Date.now();
    if (left <= 0) throw new FileLockTimeoutError(path, timeoutMs, staleMs);
    await Bun.sleep(Math.min(left, wait * (0.5 + Math.random())));
    wait = Math.min(wait * 2, MAX_WAIT_MS);
  }
}

/** The exclusive create; a missing folder is made (as file-lock.ts makes the lock's). */
function createClaim(path: string): void {
  const owner = JSON.stringify({ claim: { pid: process.pid, host: HOST } });
  try {
    writeFileSync(path, owner, { flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, owner, { flag: "wx" });
  }
}

type Found =
  | { state: "gone" }
  | { state: "record"; text: string }
  | { state: "torn" }
  | { state: "owner"; pid?: number; host?: string };

/** What `path` holds now: a claim's owner, a record, a torn file (a crash mid-create), or nothing. */
function readClaim(path: string): Found {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return { state: "gone" };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { state: "torn" };
  }
  const claim = (parsed as { claim?: { pid?: number; host?: string } } | null)?.claim;
  if (parsed === null || typeof parsed !== "object" || claim === undefined) return { state: "record", text };
  return { state: "owner", pid: claim.pid, host: claim.host };
}

/**
 * A claim whose holder is gone: a process of this host that is not running (or this process:
 * its own claims are queued, so one found on disk was left by an earlier process with the same
 * pid, as a container's pid 1 is), or another host's not refreshed for staleMs. A torn claim
 * (a crash between create and write) counts as dead once it is a second old.
 */
function isDead(path: string, found: Found, staleMs: number): boolean {
  if (found.state === "torn") return ageMs(path) > 1_000;
  if (found.state !== "owner") return false;
  if (found.host !== HOST) return ageMs(path) > staleMs;
  return typeof found.pid !== "number" || found.pid === process.pid || !processAlive(found.pid);
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
  const found = readClaim(path);
  if (found.state !== "owner" || found.host !== HOST) return false;
  if (typeof found.pid === "number" && found.pid !== process.pid && processAlive(found.pid)) return false;
  try {
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}
