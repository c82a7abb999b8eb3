// A cross-process claim on a key: the cheap lock for a hot path whose holders hold it for
// a moment (POST /ingest's dedupe of one content hash). file-lock.ts's lock directory
// (proper-lockfile: mkdir, owner file, an mtime timer, rmdir) is four file calls and a timer; a
// claim is one exclusive create of `<path>` holding {pid, host}, and one unlink.
// - Callers in this process queue on a promise chain per path: no polling between them.
// - Another process's claim is waited for (jittered backoff), unless its holder is dead: a
//   process of this host that is gone is stale at once; a claim of another host (a shared
//   filesystem) once its mtime is older than staleMs — a live holder refreshes it every
//   staleMs/2 while it holds the claim.
// - A claim left by a crash is removed at start-up too (crash-leftovers.ts, removeDeadClaim).
import { closeSync, mkdirSync, open, openSync, readFileSync, statSync, unlinkSync, utimesSync, writeFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { promisify } from "node:util";
import { FileLockTimeoutError, processAlive } from "./file-lock";
import { log } from "./logger";

const logger = log("claim");
const HOST = hostname();
const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_STALE_MS = 10_000;
const MAX_WAIT_MS = 100;

/** open(2) on the thread pool, answering a descriptor (fs/promises would wrap it in a FileHandle). */
const openOffThread = promisify(open);

export interface ClaimOptions {
  /**
   * withRecordClaim only: make the file on the thread pool, not in the calling thread. For
   * many claims at once (a batch): a file's creation (the directory entry, the inode) is most
   * of a claim's cost, and off the thread it overlaps the caller's other work.
   */
  offThread?: boolean;
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
  return queued(path, () => held(path, fn, opts));
}

/** Runs `fn` once every earlier caller of this process queued on `key` has finished. */
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

/** A held claim's mtime touched every staleMs/2, so another host does not take it as stale; clearInterval() ends it. */
function keepFresh(path: string, staleMs: number): ReturnType<typeof setInterval> {
  const refresh = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(path, now, now);
    } catch (err) {
      logger.error(`claim ${path} could not be refreshed: ${(err as Error).message}`);
    }
  }, staleMs / 2);
  refresh.unref?.();
  return refresh;
}

async function held<T>(path: string, fn: () => Promise<T>, opts: ClaimOptions): Promise<T> {
  const staleMs = opts.staleMs ?? DEFAULT_STALE_MS;
  if (!tryClaim(path, staleMs)) await waitForClaim(path, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, staleMs);
  const refresh = keepFresh(path, staleMs);
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

/**
 * A record file that is its own claim (ingest's ledger entry, one file per content hash): one
 * exclusive create both finds a record written before — `seen(text)` answers, `fn` does not
 * run — and claims the key. `fn` runs holding the claim and returns the record's text, which
 * is written over the claim in place; if `fn` throws, the claim is removed and no record is
 * left. So a lookup, the claim and the record are two filesystem calls, against five for a
 * `.claim` file beside a record written by temp file and rename.
 *
 * In place, not by rename: a rename over an existing file (or a truncate to zero) makes ext4
 * flush it to disk at once (auto_da_alloc), a disk wait on every ingest. The record is padded to at least
 * the claim's length, so no byte of the claim is left behind it. A reader that catches the
 * write halfway sees neither a claim nor a record (torn) and waits, as for a claim; a crash
 * mid-write leaves a torn file, taken over like a dead claim once it is a second old.
 */
export async function withRecordClaim<T>(
  path: string,
  seen: (text: string) => T,
  opts: ClaimOptions,
  fn: () => Promise<{ value: T; record: string }>,
): Promise<T> {
  const got = await claimRecord(path, opts);
  if ("seen" in got) return seen(got.seen);
  let done: { value: T; record: string };
  try {
    done = await fn();
  } catch (err) {
    got.abandon();
    throw err;
  }
  got.finish(done.record);
  return done.value;
}

/** A record claim this caller holds: finish() writes the record over it, abandon() removes it. Either ends the hold. */
export interface HeldRecord {
  finish(record: string): void;
  abandon(): void;
}

/**
 * withRecordClaim in two steps, for a caller that holds many claims at once (a batch of
 * ingests): the record already written (`seen`), or the claim, held — callers of this process
 * on the same path wait on it, as on withRecordClaim's — until finish() or abandon().
 */
export function claimRecord(path: string, opts: ClaimOptions): Promise<{ seen: string } | HeldRecord> {
  return new Promise((answer, fail) => {
    void queued(path, async () => {
      const staleMs = opts.staleMs ?? DEFAULT_STALE_MS;
      let got: string | { fd: number };
      try {
        got = await acquireRecord(path, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, staleMs, opts.offThread ?? false);
      } catch (err) {
        fail(err);
        return;
      }
      if (typeof got === "string") {
        answer({ seen: got });
        return;
      }
      const fd = got.fd;
      const refresh = keepFresh(path, staleMs);
      const released = Promise.withResolvers<void>();
      let open = true;
      const end = (write: () => void) => {
        if (!open) return;
        open = false;
        clearInterval(refresh);
        try {
          write();
        } finally {
          closeSync(fd);
          released.resolve();
        }
      };
      answer({
        // Through the claim's own descriptor, kept open: no second lookup of the path.
        finish: (record) => end(() => writeSync(fd, record.padEnd(RECORD_CLAIM.length), 0)),
        abandon: () =>
          end(() => {
            try {
              unlinkSync(path);
            } catch {}
          }),
      });
      await released.promise;
    });
  });
}

const RECORD_CLAIM = JSON.stringify({ claim: { pid: process.pid, host: HOST } });

type Found = { state: "gone" } | { state: "record"; text: string } | { state: "torn" } | { state: "owner"; pid?: number; host?: string };

/**
 * Creates the claim (its descriptor returned, still open), or returns the record already
 * there; waits (jittered backoff) while a live holder has it.
 */
async function acquireRecord(path: string, timeoutMs: number, staleMs: number, offThread: boolean): Promise<string | { fd: number }> {
  const deadline = Date.now() + timeoutMs;
  let wait = 2;
  for (let takeovers = 0; ; ) {
    try {
      let fd: number;
      try {
        fd = offThread ? await openOffThread(path, "wx") : openSync(path, "wx");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
        mkdirSync(dirname(path), { recursive: true });
        fd = offThread ? await openOffThread(path, "wx") : openSync(path, "wx");
      }
      try {
        writeSync(fd, RECORD_CLAIM, 0);
      } catch (err) {
        closeSync(fd);
        try {
          unlinkSync(path);
        } catch {}
        throw err;
      }
      return { fd };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const found = readRecordClaim(path);
    if (found.state === "record") return found.text;
    if (found.state === "gone") continue;
    if (takeovers < 3 && (await isDeadRecordClaim(path, found, staleMs))) {
      takeovers++;
      logger.warn(`taking over the claim ${path}: its holder is gone`);
      try {
        unlinkSync(path);
      } catch {}
      continue;
    }
    const left = deadline - Date.now();
    if (left <= 0) throw new FileLockTimeoutError(path, timeoutMs, staleMs);
    await Bun.sleep(Math.min(left, wait * (0.5 + Math.random())));
    wait = Math.min(wait * 2, MAX_WAIT_MS);
  }
}

/** What a record claim's file holds now: a claim's owner, a record, a torn text, or nothing. */
function readRecordClaim(path: string): Found {
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
  if (parsed === null || typeof parsed !== "object") return { state: "torn" };
  const claim = (parsed as { claim?: { pid?: number; host?: string } }).claim;
  if (claim === undefined) return { state: "record", text };
  return { state: "owner", pid: claim.pid, host: claim.host };
}

/**
 * As isDeadClaim. A torn file counts as dead once it is a second old and still torn a moment
 * later (a reader can catch a live holder's record write halfway; a crash leaves it torn).
 */
async function isDeadRecordClaim(path: string, found: Found, staleMs: number): Promise<boolean> {
  if (found.state === "torn") {
    if (ageMs(path) <= 1_000) return false;
    await Bun.sleep(20);
    return readRecordClaim(path).state === "torn" && ageMs(path) > 1_000;
  }
  if (found.state !== "owner") return false;
  if (found.host !== HOST) return ageMs(path) > staleMs;
  return typeof found.pid !== "number" || found.pid === process.pid || !processAlive(found.pid);
}
