// Scoped tokens: what an agent's hooks carry instead of the router's own token (issue 16 part 1,
// and #14: no secret in an agent's reach). The orchestrator mints one per job or agent-mode turn,
// bound to it (`sub`), good only for the routes the hooks and the profile's words call (the feed,
// signals, markers and the outbox replay, which is POST /marker; search and reading notes) and only until the run's timeout. The router checks it
// against its own tokens, so there is nothing new to configure: the signing key is derived from
// a router token (HMAC with a fixed label), and a rotated token (KB_ROUTER_TOKENS) keeps
// accepting what its predecessor signed until those runs expire.
//
// Format: `bsk1.<payload>.<mac>`, payload base64url JSON {sub, scope, iat, exp}, mac base64url
// HMAC-SHA256(key, "bsk1.<payload>"). Not a JWT: the service edge authorises synchronously and
// jose verifies through WebCrypto (async); this is one HMAC with node:crypto and a constant-time
// compare, checked against every configured key with no early exit.
import { createHmac, timingSafeEqual } from "node:crypto";

export const SCOPED_TOKEN_PREFIX = "bsk1.";
const KEY_LABEL = "brain-stack scoped token v1";

/** What a scope lets through: a method and an exact path (no query string), or with `under`, the paths below it. */
export interface ScopedRoute {
  method: string;
  path: string;
  /** Also every path under `path/` (GET /notes/{path}, its context). */
  under?: boolean;
}

/** The scopes the hooks need, and the routes each opens. */
export const HOOK_SCOPES = {
  "feed:read": [{ method: "GET", path: "/feed" }],
  "signal:read": [{ method: "GET", path: "/signal" }],
  "marker:write": [{ method: "POST", path: "/marker" }],
  // What the profile's words tell an agent to do besides markers: search the vault and read notes
  // (read-only; no ingest, ticks, dispatch or briefs, which spend the router's model budget).
  "vault:read": [
    { method: "POST", path: "/search" },
    { method: "GET", path: "/notes", under: true },
    { method: "POST", path: "/notes/batch" },
  ],
} as const satisfies Record<string, readonly ScopedRoute[]>;

export type HookScope = keyof typeof HOOK_SCOPES;
export const ALL_HOOK_SCOPES = Object.keys(HOOK_SCOPES) as HookScope[];

export interface ScopedClaims {
  /** What the token is bound to: `job:<id>`, `turn:<agent>:<uuid>`. */
  sub: string;
  scope: string[];
  /** Seconds since the epoch. */
  iat: number;
  exp: number;
}

const b64 = (b: Buffer | string) => Buffer.from(b).toString("base64url");
const signingKey = (secret: string) => createHmac("sha256", secret).update(KEY_LABEL).digest();
const mac = (key: Buffer, signed: string) => createHmac("sha256", key).update(signed).digest();

/** A token for `sub`, good for `scope` for `ttlSeconds`, signed with (a key derived from) `secret`. */
export function mintScopedToken(secret: string, opts: { sub: string; scope?: readonly HookScope[]; ttlSeconds: number; now?: number }): string {
  if (!secret) throw new Error("mintScopedToken: no secret to sign with");
  if (!(opts.ttlSeconds > 0)) throw new RangeError(`ttlSeconds must be positive, got ${opts.ttlSeconds}`);
  const iat = Math.floor((opts.now ?? Date.now()) / 1000);
  const claims: ScopedClaims = { sub: opts.sub, scope: [...(opts.scope ?? ALL_HOOK_SCOPES)], iat, exp: iat + Math.ceil(opts.ttlSeconds) };
  const signed = `${SCOPED_TOKEN_PREFIX}${b64(JSON.stringify(claims))}`;
  return `${signed}.${b64(mac(signingKey(secret), signed))}`;
}

export const looksScoped = (token: string) => token.startsWith(SCOPED_TOKEN_PREFIX);

export type ScopedCheck = { ok: true; claims: ScopedClaims } | { ok: false; reason: "invalid" | "expired" | "out_of_scope"; claims?: ScopedClaims };

/** Verifies scoped tokens against the keys derived from `secrets` (derived once). */
export function scopedTokenVerifier(secrets: readonly string[]) {
  const keys = secrets.map(signingKey);
  /** The token's claims when one of the keys signed it and it has not expired; else why not. */
  function verify(token: string, now = Date.now()): ScopedCheck {
    if (!looksScoped(token) || keys.length === 0) return { ok: false, reason: "invalid" };
    const dot = token.lastIndexOf(".");
    const signed = token.slice(0, dot);
    const presented = Buffer.from(token.slice(dot + 1), "base64url");
    if (dot <= SCOPED_TOKEN_PREFIX.length || presented.length !== 32) return { ok: false, reason: "invalid" };
    let good = false;
    for (const key of keys) good = timingSafeEqual(presented, mac(key, signed)) || good;
    if (!good) return { ok: false, reason: "invalid" };
    let claims: ScopedClaims;
    try {
      claims = JSON.parse(Buffer.from(signed.slice(SCOPED_TOKEN_PREFIX.length), "base64url").toString("utf8"));
    } catch {
      return { ok: false, reason: "invalid" };
    }
    if (typeof claims?.sub !== "string" || !Array.isArray(claims.scope) || typeof claims.exp !== "number") return { ok: false, reason: "invalid" };
    if (claims.exp * 1000 <= now) return { ok: false, reason: "expired", claims };
    return { ok: true, claims };
  }
  return {
    verify,
    /** verify, then: does one of the token's scopes open `method path`? */
    check(token: string, method: string, path: string, now = Date.now()): ScopedCheck {
      const v = verify(token, now);
      if (!v.ok) return v;
      const m = method === "HEAD" ? "GET" : method;
      const opens = (r: ScopedRoute) => r.method === m && (r.path === path || (r.under === true && path.startsWith(`${r.path}/`)));
      const allowed = v.claims.scope.some((s) => (HOOK_SCOPES as Record<string, readonly ScopedRoute[]>)[s]?.some(opens));
      return allowed ? v : { ok: false, reason: "out_of_scope", claims: v.claims };
    },
  };
}

/** The routes a scoped token can reach, for messages and docs. */
export const hookRoutesText = () =>
  Object.values(HOOK_SCOPES)
    .flat()
    .map((r: ScopedRoute) => `${r.method} ${r.path}${r.under ? "[/…]" : ""}`)
    .join(", ");
