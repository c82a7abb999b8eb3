// The error the HTTP edge answers with, and the one mapping of domain errors (domain-error.ts)
// onto it; errors.ts and error-handler.ts render it. Its own module so that code without routes
// does not load zod and the route schemas.
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { DomainError, type ErrorKind } from "./domain-error";
import { isStorageFull, storageFullError } from "./storage";

export class HttpError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "HttpError";
  }
}

/** The HTTP status of each domain error kind. */
export const STATUS_OF_KIND: Record<ErrorKind, ContentfulStatusCode> = {
  invalid: 400,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  busy: 429,
  upstream: 502,
  unavailable: 503,
  timeout: 504,
  full: 507,
};

/** The HTTP answer to an error: an HttpError as is, a DomainError by its kind, a full disk 507; undefined for anything else (a 500). */
export function httpErrorOf(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  // A full disk, whichever store raised it (a file write's ENOSPC, SQLITE_FULL): 507, never a 500.
  if (!(err instanceof DomainError)) return isStorageFull(err) ? httpErrorOf(storageFullError(err)) : undefined;
  const headers = err.retryAfterSeconds === undefined ? undefined : { "Retry-After": String(err.retryAfterSeconds) };
  return new HttpError(STATUS_OF_KIND[err.kind], err.code, err.message, err.details, headers);
}
