// A database that restarts is unavailable, not a bug (issue 37, part 7): while the index's
// Postgres is down (refused connections, connections cut by its shutdown, "the database system
// is starting up") every index call fails with 503 index_unavailable and a Retry-After, and the
// pool reconnects by itself on the next call once the server is back — no router restart.
import { DomainError } from "../../common/domain-error";
import type { IndexStore } from "./types";

/** Seconds a client is told to wait while the database is away. */
export const INDEX_RETRY_AFTER_SECONDS = 5;

/** Socket errors and the `postgres` client's own connection codes. */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
]);

/** True when `err` says the database cannot be reached now (not that the query is wrong). */
export function isConnectionLost(err: unknown): boolean {
  if (err === null || typeof err !== "object") return false;
  const { code, errno } = err as { code?: unknown; errno?: unknown };
  if (typeof code !== "string") return false;
  // Bun.SQL (the searches' pool, postgres.ts): its own codes for the connection, and the
  // server's SQLSTATE in errno.
  if (code.startsWith("ERR_POSTGRES_CONNECTION")) return true;
  const state = code === "ERR_POSTGRES_SERVER_ERROR" && typeof errno === "string" ? errno : code;
  // SQLSTATE class 08 (connection exception) and 57P (admin/crash shutdown, cannot connect now).
  return CONNECTION_CODES.has(state) || state.startsWith("08") || state.startsWith("57P");
}

function unavailable(err: unknown): DomainError {
  const why = (err as { code?: string }).code ?? "no answer";
  const e = new DomainError("unavailable", "index_unavailable", `the index database (DATABASE_URL) cannot be reached right now (${why}): retry shortly`, {
    retryAfterSeconds: INDEX_RETRY_AFTER_SECONDS,
  });
  (e as Error).cause = err;
  return e;
}

/** The store, its calls' connection failures turned into 503 index_unavailable. */
export function withConnectionErrors<S extends IndexStore>(store: S): S {
  const map = (err: unknown): never => {
    throw isConnectionLost(err) ? unavailable(err) : err;
  };
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function" || prop === "constructor") return value;
      return (...args: unknown[]) => {
        const out = (value as (...a: unknown[]) => unknown).apply(target, args);
        return out instanceof Promise ? out.catch(map) : out;
      };
    },
  });
}
