// A full disk is a storage error, never a bug (issue 37): what counts as "no space" whatever
// raised it (a file write's ENOSPC, SQLite's SQLITE_FULL, Postgres's disk_full), the 507
// storage_full the HTTP edge answers with, and each service's storage paths with their free
// space for the health reports, so the operator reads which path is full.
import { statfsSync } from "node:fs";
import { DomainError } from "./domain-error";
import { log } from "./logger";

const logger = log("storage");
/** A full disk refuses every write: said in the log at most this often. */
const WARN_EVERY_MS = 60_000;
let warnedAt = Number.NEGATIVE_INFINITY;

/** Error codes that mean "the device (or quota) is full": Node/Bun, SQLite, Postgres (SQLSTATE 53100). */
const FULL_CODES = new Set(["ENOSPC", "EDQUOT", "SQLITE_FULL", "53100"]);
/** Below this much free space a path reports full: a note, a job record or an index commit needs more. */
export const STORAGE_LOW_BYTES = 1024 * 1024;
/** What a client is told to wait before it tries again. */
export const STORAGE_RETRY_AFTER_SECONDS = 30;

/** True when `err`, or an error it wraps (cause, AggregateError), says the storage is full. */
export function isStorageFull(err: unknown, depth = 0): boolean {
  if (err === null || typeof err !== "object" || depth > 5) return false;
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === "string" && FULL_CODES.has(e.code)) return true;
  if (err instanceof DomainError && err.kind === "full") return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isStorageFull(x, depth + 1))) return true;
  return isStorageFull(e.cause, depth + 1);
}

export interface StoragePath {
  /** What the path holds, as the configuration names it (e.g. "vault", "DATA_DIR", "SERVICE_JOBS_DIR"). */
  role: string;
  path: string;
}

export interface StorageStatus extends StoragePath {
  /** Bytes an unprivileged write may still use there; null when the path cannot be read. */
  free_bytes: number | null;
  /** Less than STORAGE_LOW_BYTES free (or the path's device cannot be read). */
  full: boolean;
}

const registered = new Map<string, StoragePath>();

/** Declares a path this process writes to (the 507 message and the health reports name it when it is full). */
export function watchStoragePath(role: string, path: string): void {
  registered.set(`${role}\0${path}`, { role, path });
}

/** Free space of each path, now. */
export function storageStatus(paths: StoragePath[] = [...registered.values()]): StorageStatus[] {
  return paths.map(({ role, path }) => {
    try {
      const s = statfsSync(path);
      const free = Number(s.bavail) * Number(s.bsize);
      return { role, path, free_bytes: free, full: free < STORAGE_LOW_BYTES };
    } catch {
      return { role, path, free_bytes: null, full: false };
    }
  });
}

/** The message of a 507: which of the declared paths is full, and what to do. */
export function storageFullMessage(): string {
  const full = storageStatus().filter((s) => s.full);
  const where =
    full.length > 0
      ? `no space left for ${full.map((s) => `${s.role} (${s.path}, ${s.free_bytes ?? 0} bytes free)`).join(", ")}`
      : "no space left on the device this write needed";
  return `${where}: free some space there and send the request again`;
}

/** The domain error a store throws (or the edge makes of a raw ENOSPC): 507 storage_full over HTTP. */
export function storageFullError(cause?: unknown): DomainError {
  const message = storageFullMessage();
  if (Date.now() - warnedAt >= WARN_EVERY_MS) {
    warnedAt = Date.now();
    logger.warn(`writes refused (507 storage_full): ${message}`);
  }
  const err = new DomainError("full", "storage_full", message, { retryAfterSeconds: STORAGE_RETRY_AFTER_SECONDS });
  if (cause !== undefined) (err as Error).cause = cause;
  return err;
}
