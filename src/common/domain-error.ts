// The errors domain code throws: what went wrong in the caller's terms (a kind), a stable code
// and a message that says what to do. Domain code knows no transport; each edge maps the kind
// once: HTTP to a status and the JSON error body (http-error.ts, httpErrorOf), MCP to a tool
// error carrying the code and message (mcp/tool-error.ts). No zod here, so code without routes
// (the CLIs' share of the index, migrations) can throw them too.

/** What went wrong; each edge maps a kind to its own terms (HTTP: 400, 404, 409, 413, 429, 502, 503, 504, 507). */
export type ErrorKind =
  /** The caller's input is wrong (a bad field, an unknown name). */
  | "invalid"
  /** What the caller names does not exist. */
  | "not_found"
  /** The request clashes with the state it finds (a finished job, stored vectors of another size). */
  | "conflict"
  /** The caller's input is larger than it may be. */
  | "too_large"
  /** The thing is busy with an earlier request of the caller's; retry later. */
  | "busy"
  /** A service this one depends on failed or answered nonsense. */
  | "upstream"
  /** A service this one depends on did not answer in time. */
  | "timeout"
  /** This service cannot do it now (stopping, draining, not configured); retry later or configure it. */
  | "unavailable"
  /** The storage it writes to is full (a disk, a quota): the operator frees space, then the caller retries. */
  | "full";

/** The kinds that are the caller's to fix (the rest are this service's or its dependencies'). */
const CALLERS: ReadonlySet<ErrorKind> = new Set(["invalid", "not_found", "conflict", "too_large", "busy"]);

export interface DomainErrorOptions {
  /** Machine-readable detail: [{path, message}] for invalid fields, else an object. */
  details?: unknown;
  /** When a retry may succeed, in seconds (HTTP: Retry-After). */
  retryAfterSeconds?: number;
}

export class DomainError extends Error {
  readonly details?: unknown;
  readonly retryAfterSeconds?: number;

  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    opts: DomainErrorOptions = {},
  ) {
    super(message);
    this.name = "DomainError";
    this.details = opts.details;
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }

  /** True when the caller's request is at fault (it should not be retried unchanged). */
  get callersFault(): boolean {
    return CALLERS.has(this.kind);
  }
}
