// The edge every service app runs, as ONE middleware: request id, access log, auth, body
// limit, in that order (auth before the body is read, so an unauthenticated upload is refused
// cheaply). One function rather than four chained middlewares: each link of Hono's chain
// costs about a microsecond, which the /health benchmark showed (scripts/bench/http.ts).
import type { ErrorHandler, MiddlewareHandler } from "hono";
import { infoLine, log } from "../logger";
import { bodyLimit } from "./body-limit";

const SAFE_ID = /^[\w\-=]{1,200}$/;

/** The caller's X-Request-Id when it is safe to echo (letters, digits, - _ =; ≤ 200), else a new UUID. */
export function requestIdFrom(header: string | undefined): string {
  return header !== undefined && SAFE_ID.test(header) ? header : crypto.randomUUID();
}

export interface EdgeOptions {
  /** The access log's tag: [router], [orchestrator]. */
  logTag: string;
  auth: MiddlewareHandler;
  maxBodyBytes: number;
  /** The app's error handler: errors thrown at the edge (auth, body limit) become its response. */
  onError: ErrorHandler;
  /** Context variables set on every request (the app's deps). */
  vars?: Record<string, unknown>;
}

export function serviceEdge(opts: EdgeOptions): MiddlewareHandler {
  const limit = bodyLimit(opts.maxBodyBytes);
  const { logTag, auth, onError } = opts;
  const logger = log(logTag);
  const vars = Object.entries(opts.vars ?? {});
  return async function serviceEdge(c, next) {
    const start = performance.now();
    const id = requestIdFrom(c.req.header("x-request-id"));
    c.set("requestId" as never, id as never);
    for (const [k, v] of vars) c.set(k as never, v as never);
    // At debug level the start of a request is logged too (what is in flight at shutdown).
    if (logger.level >= 4) logger.debug(`-> ${c.req.method} ${c.req.path}`);
    try {
      await auth(c, async () => {
        if (c.req.raw.body) await limit(c, next);
        else await next();
      });
    } catch (err) {
      c.res = await onError(err as Error, c);
    }
    try {
      c.res.headers.set("X-Request-Id", id);
    } catch {
      // an immutable response (Response.redirect/error): nothing to add the id to
    }
    // Method, path, status, ms, id: never the query string (it can carry a token), a header or a body.
    if (logger.level >= 3) infoLine(logTag, `${c.req.method} ${c.req.path} ${c.res.status} ${(performance.now() - start).toFixed(1)}ms id=${id}`);
  };
}

