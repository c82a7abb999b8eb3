// Bearer-token auth shared by both services. Tokens are compared in constant time:
// both sides are hashed to 32 bytes first, so neither content nor length leaks, and
// every configured token is checked (no early exit).
import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { HttpError } from "../errors";

const digest = (s: string) => createHash("sha256").update(s).digest();

export function tokenMatches(presented: string, tokens: readonly string[]): boolean {
  const p = digest(presented);
  let ok = false;
  for (const t of tokens) ok = timingSafeEqual(p, digest(t)) || ok;
  return ok;
}

export function bearerFrom(header: string | undefined): string | undefined {
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "");
  return m?.[1];
}

export interface BearerAuthOptions {
  tokens: readonly string[];
  /** Paths (GET or HEAD) served without a token. */
  openPaths: readonly string[];
  /**
   * When no token is configured: "fail-closed" answers 503 on every path (the router),
   * "open" lets everything through (the orchestrator on a loopback bind).
   */
  whenUnset: { mode: "fail-closed"; code: string; message: string } | { mode: "open" };
}

export function bearerAuth(opts: BearerAuthOptions): MiddlewareHandler {
  const open = new Set(opts.openPaths);
  return async function bearerAuth(c, next) {
    if (opts.tokens.length === 0) {
      if (opts.whenUnset.mode === "fail-closed") {
        throw new HttpError(503, opts.whenUnset.code, opts.whenUnset.message);
      }
      return next();
    }
    if ((c.req.method === "GET" || c.req.method === "HEAD") && open.has(c.req.path)) return next();
    const presented = bearerFrom(c.req.header("authorization"));
    if (presented === undefined) {
      throw new HttpError(401, "unauthorized", "missing bearer token: send Authorization: Bearer <token>", undefined, {
        "WWW-Authenticate": "Bearer",
      });
    }
    if (!tokenMatches(presented, opts.tokens)) {
      throw new HttpError(401, "unauthorized", "invalid bearer token", undefined, {
        "WWW-Authenticate": 'Bearer error="invalid_token"',
      });
    }
    return next();
  };
}
