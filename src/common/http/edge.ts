// The edge every service app runs: request id, access log, auth and the body limit around the
// app's own dispatch. It wraps
// `app.fetch` rather than sitting in front as an `app.use` middleware: a GET then stays on
// Hono's one-handler path (no middleware chain, no promise when the handler answers at once),
// the cheapest a request can be (scripts/bench/http.ts keeps it in sight).
// The app's handlers get what they need as bindings (c.env): the deps, the request id and
// Bun's server (to lift the idle timeout of a long request).
import type { Context, Hono } from "hono";
import { getPath } from "hono/utils/url";
import { errorPayload, type OpenAiPathTest } from "../error-handler";
import { HttpError, httpErrorOf } from "../http-error";
import { infoLine, log } from "../logger";
import type { AuthThrottle } from "../middleware/auth-throttle";
import type { Authorize, EdgeRequest } from "../middleware/bearer-auth";
import { limitBody } from "../middleware/body-limit";
import type { BrowserGuard } from "../middleware/browser-guard";
import { type AddressServer, clientAddress } from "../middleware/client-address";
import { headLimitApplies, oversizedHead } from "../middleware/header-limit";
import { liftIdleTimeout } from "./sse";

const SAFE_ID = /^[\w\-=]{1,200}$/;

/** The caller's X-Request-Id when it is safe to echo (letters, digits, - _ =; ≤ 200), else a new UUID. */
function requestIdFrom(header: string | null | undefined): string {
  return header != null && SAFE_ID.test(header) ? header : crypto.randomUUID();
}

/** What every app behind the edge finds in c.env, besides its own bindings. */
export interface EdgeBindings {
  requestId: string;
  /** Bun's server when served by Bun.serve (undefined under app.request in tests). */
  server?: { timeout?: (req: Request, seconds: number) => void } & AddressServer;
}

export interface EdgeOptions {
  /** The access log's tag: [router], [orchestrator]. */
  logTag: string;
  authorize: Authorize;
  maxBodyBytes: number;
  /** Which paths answer refusals in OpenAI's error shape. */
  openAi: OpenAiPathTest;
  /** Host, Origin, content-type and CORS (browser-guard.ts); before auth. */
  guard?: BrowserGuard;
  /** Failed bearer attempts per client address (auth-throttle.ts). */
  throttle?: AuthThrottle;
  /** The app's own bindings (its deps), handed to every request as c.env with the edge's. */
  bindings?: Record<string, unknown>;
}

/** Installs the edge on `app` (it wraps app.fetch). */
// biome-ignore lint/suspicious/noExplicitAny: any app, whatever its service's Env (Hono's generic is invariant)
export function installServiceEdge(app: Hono<any>, opts: EdgeOptions): void {
  const dispatch = app.fetch;
  const maxBodyBytes = opts.maxBodyBytes;
  const { logTag, authorize, openAi, guard, throttle } = opts;
  const logger = log(logTag);
  const bindings = opts.bindings ?? {};

  app.fetch = function serviceEdge(req: Request, server?: unknown, ctx?: unknown): Response | Promise<Response> {
    const start = performance.now();
    const headers = req.headers;
    const id = requestIdFrom(headers.get("x-request-id"));
    const method = req.method;
    const path = getPath(req);
    // At debug level the start of a request is logged too (what is in flight at shutdown).
    if (logger.level >= 4) logger.debug(`-> ${method} ${path}`);
    let res: Response | Promise<Response>;
    try {
      if (headLimitApplies) {
        const over = oversizedHead(req, method);
        if (over) throw over;
      }
      const early = guard?.check(req, method);
      if (early) {
        res = early;
      } else {
        const edgeReq: EdgeRequest = { method, path, header: (name) => headers.get(name) };
        try {
          authorize(edgeReq);
        } catch (err) {
          // Only a refused request meets the throttle: a right token is served even from an address
          // that is throttled (one bad client behind a shared proxy must not lock the others out).
          if (throttle && err instanceof HttpError && err.status === 401) {
            const address = clientAddress(req, server as AddressServer | undefined);
            throttle.check(address);
            throttle.failed(address);
          }
          throw err;
        }
        guard?.checkBody(req, method);
        const env = { ...bindings, requestId: id, server };
        const limited = limitBody(req, method, maxBodyBytes);
        res =
          limited instanceof Promise
            ? limited.then(
                (r) => dispatch(r, env, ctx as never),
                (err) => refusal(err, path, openAi, logger),
              )
            : dispatch(limited, env, ctx as never);
      }
    } catch (err) {
      res = refusal(err, path, openAi, logger);
    }
    const origin = guard ? headers.get("origin") : null;
    const done = (r: Response): Response => {
      if (origin !== null) guard!.decorate(r, origin);
      try {
        r.headers.set("X-Request-Id", id);
      } catch {
        // an immutable response (Response.redirect/error): nothing to add the id to
      }
      // Method, path, status, ms, id: never the query string (it can carry a token), a header or a body.
      if (logger.level >= 3) infoLine(logTag, `${method} ${path} ${r.status} ${(performance.now() - start).toFixed(1)}ms id=${id}`);
      return r;
    };
    return res instanceof Promise ? res.then(done) : done(res);
  } as typeof app.fetch;
}

/** The answer to a request refused at the edge (auth), in the shape its path calls for. */
function refusal(err: unknown, path: string, openAi: OpenAiPathTest, logger: ReturnType<typeof log>): Response {
  const e = httpErrorOf(err);
  if (e) return Response.json(errorPayload(path, e.status, e.code, e.message, e.details, openAi), { status: e.status, headers: e.headers });
  logger.error(`the edge failed on ${path}:`, err);
  return Response.json(errorPayload(path, 500, "internal_error", "the server failed to handle this request; see its log", undefined, openAi), { status: 500 });
}

/**
 * Keeps this request open past Bun's idle timeout (a wait for a job, a stream). The server comes
 * from the edge's bindings; an app called without them (app.request() in a test) has none to lift.
 */
export function keepOpen(c: Context): void {
  liftIdleTimeout((c.env as Partial<EdgeBindings> | undefined)?.server, c.req.raw);
}
