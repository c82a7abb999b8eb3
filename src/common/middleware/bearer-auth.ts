// Bearer-token auth shared by both services. Tokens are compared in constant time:
// both sides are hashed to 32 bytes first, so neither content nor length leaks, and
// every configured token is checked (no early exit).
import { createHash, timingSafeEqual } from "node:crypto";
import { HttpError } from "../errors";
import { hookRoutesText, looksScoped, scopedTokenVerifier } from "../scoped-token";

const digest = (s: string) => createHash("sha256").update(s).digest();

/** The configured tokens' digests, made once per token (not on every request); keyed by the token. */
const configured = new Map<string, Buffer>();
function configuredDigest(token: string): Buffer {
  let d = configured.get(token);
  if (d === undefined) {
    d = digest(token);
    configured.set(token, d);
  }
  return d;
}

function tokenMatches(presented: string, tokens: readonly string[]): boolean {
  const p = digest(presented);
  let ok = false;
  for (const t of tokens) ok = timingSafeEqual(p, configuredDigest(t)) || ok;
  return ok;
}

export function bearerFrom(header: string | undefined): string | undefined {
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "");
  return m?.[1];
}

/** What the edge knows of a request before it is dispatched. */
export interface EdgeRequest {
  method: string;
  path: string;
  header(name: string): string | null;
}

/** Throws an HttpError (401, or 503 when failing closed) when the request may not pass. */
export type Authorize = (req: EdgeRequest) => void;

export interface BearerAuthOptions {
  tokens: readonly string[];
  /** Paths (GET or HEAD) served without a token. */
  openPaths: readonly string[];
  /**
   * When no token is configured: "fail-closed" answers 503 on every path (the router),
   * "open" lets everything through (the orchestrator on a loopback bind).
   */
  whenUnset: { mode: "fail-closed"; code: string; message: string } | { mode: "open" };
  /**
   * Accept scoped tokens (common/scoped-token.ts) signed with one of `tokens`, on the routes of
   * their scopes only: 403 elsewhere, 401 once expired. Off: they are just invalid tokens.
   */
  scopedTokens?: boolean;
}

export function bearerAuth(opts: BearerAuthOptions): Authorize {
  const open = new Set(opts.openPaths);
  const scoped = opts.scopedTokens ? scopedTokenVerifier(opts.tokens) : undefined;
  return function bearerAuth(req) {
    if (opts.tokens.length === 0) {
      if (opts.whenUnset.mode === "fail-closed") {
        throw new HttpError(503, opts.whenUnset.code, opts.whenUnset.message);
      }
      return;
    }
    if ((req.method === "GET" || req.method === "HEAD") && open.has(req.path)) return;
    const presented = bearerFrom(req.header("authorization") ?? undefined);
    if (presented === undefined) {
      throw new HttpError(401, "unauthorized", "missing bearer token: send Authorization: Bearer <token>", undefined, {
        "WWW-Authenticate": "Bearer",
      });
    }
    if (tokenMatches(presented, opts.tokens)) return;
    if (scoped && looksScoped(presented)) {
      const v = scoped.check(presented, req.method, req.path);
      if (v.ok) return;
      if (v.reason === "out_of_scope") {
        throw new HttpError(
          403,
          "forbidden",
          `this token is scoped to an agent's hooks (${hookRoutesText()}); ${req.method} ${req.path} needs the router's own token`,
        );
      }
      if (v.reason === "expired") {
        throw new HttpError(401, "unauthorized", "scoped token expired (it lasts as long as the job or turn it was made for)", undefined, {
          "WWW-Authenticate": 'Bearer error="invalid_token", error_description="expired"',
        });
      }
    }
    throw new HttpError(401, "unauthorized", "invalid bearer token", undefined, {
      "WWW-Authenticate": 'Bearer error="invalid_token"',
    });
  };
}
