// Cross-process mutual exclusion on a path, for anything several processes (or hosts on a
// shared filesystem) may write at once: the file key-value store, the repo clone cache.
// Built on proper-lockfile: the lock is a `<path>.lock` directory (mkdir is atomic everywhere,
// NFS included) whose mtime the holder refreshes, so a crashed holder's lock goes stale.
// Beside it, `<lock>.owner` names the holder (pid and host): a lock whose owner process on this
// host is gone is stale at once, so a restart after a crash does not wait out staleMs.

import { mkdir, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname, resolve } from "node:path";
import lockfile from "proper-lockfile";
import { log } from "./logger.ts";

const logger = log("file-lock");

export interface FileLockOptions {
  /** Give up waiting after this long (default 60 s). 0 tries once. */
  timeoutMs?: number;
  /**
   * A lock whose mtime is older than this is taken over (default 10 s, proper-lockfile's
   * floor is 2 s). The holder refreshes it every staleMs/2, so only dead holders go stale.
   */
  staleMs?: number;
  /** Where the lock lives, when not `<path>.lock` (the clone cache uses `{hash}/.lock`). */
  lockPath?: string;
}

export type ReleaseFileLock = () => Promise<void>;

export class FileLockTimeoutError extends Error {
  readonly code = "file_lock_timeout";
  constructor(
    readonly lockPath: string,
    readonly timeoutMs: number,
    staleMs: number,
  ) {
    super(
      `timed out after ${timeoutMs} ms waiting for the lock ${lockPath}: a live process holds it ` +
        `(a dead holder's lock is taken over once it is ${staleMs} ms old)`,
    );
    this.name = "FileLockTimeoutError";
  }
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_STALE_MS = 10_000;
const FIRST_WAIT_MS = 5;
const MAX_WAIT_MS = 250;

/** Waits for and takes the lock on `path` (which need not exist); resolves to its release. */
export async function acquireFileLock(path: string, opts: FileLockOptions = {}): Promise<ReleaseFileLock> {
  const target = resolve(path);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const staleMs = Math.max(opts.staleMs ?? DEFAULT_STALE_MS, 2000);
  const lockPath = opts.lockPath ? resolve(opts.lockPath) : `${target}.lock`;
  await mkdir(dirname(target), { recursive: true });

  const deadline = Date.now() + timeoutMs;
  let wait = FIRST_WAIT_MS;
  for (;;) {
    try {
      const release = await lockfile.lock(target, {
        realpath: false,
        lockfilePath: lockPath,
        stale: staleMs,
        retries: 0,
        // The default throws from a timer, which would kill the process. A compromised lock
        // (its directory removed or taken over while we hold it) is worth a loud log, not a crash.
        onCompromised: (err) => logger.error(`file lock ${lockPath} was compromised: ${err.message}`),
      });
      const owner = ownerPath(lockPath);
      await writeFile(owner, JSON.stringify({ pid: process.pid, host: HOST })).catch(() => {});
      return async () => {
        await unlink(owner).catch(() => {});
        await release().catch((err: NodeJS.ErrnoException) => {
          // Already released or compromised: the lock is not ours either way.
          if (err.code !== "ERELEASED" && err.code !== "ENOTACQUIRED") throw err;
        });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ELOCKED") throw err;
      if (await takeOverFromDeadOwner(lockPath)) continue;
    }
    const left = deadline - Date.now();
    if (left <= 0) throw new FileLockTimeoutError(lockPath, timeoutMs, staleMs);
    // Jittered backoff so contending processes do not retry in lockstep.
    await Bun.sleep(Math.min(left, wait * (0.5 + Math.random())));
    wait = Math.min(wait * 2, MAX_WAIT_MS);
  }
}

const HOST = hostname();
const ownerPath = (lockPath: string) => `${lockPath}.owner`;

/** True when `pid` is a live process on this host. */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The holder recorded for a lock when it is a process of this host that is gone. */
async function deadOwner(lockPath: string): Promise<boolean> {
  const text = await readFile(ownerPath(lockPath), "utf8").catch(() => null);
  if (text === null) return false;
  try {
    const o = JSON.parse(text) as { pid?: number; host?: string };
    return o.host === HOST && typeof o.pid === "number" && o.pid !== process.pid && !processAlive(o.pid);
  } catch {
    return false;
  }
}

/** Removes a lock whose owner died (owner file first, so no one else reads it as dead twice). */
async function takeOverFromDeadOwner(lockPath: string): Promise<boolean> {
  if (!(await deadOwner(lockPath))) return false;
  logger.warn(`taking over the lock ${lockPath}: its holder process is gone`);
  await unlink(ownerPath(lockPath)).catch(() => {});
  await rm(lockPath, { recursive: true, force: true }).catch(() => {});
  return true;
}

/** Removes a lock left by a crashed process of this host (start-up cleanup); true when it did. */
export async function removeDeadLock(lockPath: string): Promise<boolean> {
  return takeOverFromDeadOwner(lockPath);
}

/** Runs `fn` holding the lock on `path`; releases it however `fn` ends. */
export async function withFileLock<T>(path: string, fn: () => Promise<T> | T, opts: FileLockOptions = {}): Promise<T> {
  const release = await acquireFileLock(path, opts);
  try {
    return await fn();
  } finally {
    await release();
  }
}
