// What keeps a web page the developer visits from driving a service on their machine:
//  - Host: without a credential configured, a request must name the bind address, localhost
//    or a host of ALLOWED_HOSTS (else a DNS-rebinding page on evil.example, resolved to
//    127.0.0.1, would be served). 403 host_not_allowed.
//  - Origin: a request that carries one must come from the service's own origin or a
//    CORS_ORIGINS entry. 403 origin_not_allowed.
//  - Content type: a request with a body (POST, PUT, PATCH, DELETE) must send JSON; forms and
//    text/plain, which a page may send cross-site without a preflight, answer 415.
//  - CORS: off unless CORS_ORIGINS lists origins; then their preflight (OPTIONS) is answered
//    here, without a token, and their responses carry Access-Control-Allow-Origin.
import { networkInterfaces } from "node:os";
import { HttpError } from "../errors";
import { BODY_METHODS } from "./body-limit";

export interface BrowserGuardOptions {
  /** The address the service listens on. */
  bindHost: string;
  /** ALLOWED_HOSTS. */
  allowedHosts: readonly string[];
  /** CORS_ORIGINS. */
  corsOrigins: readonly string[];
  /** True when the service checks a credential on every request (the Host check is then off). */
  credentialed: boolean;
}

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;
const ALLOW_METHODS = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";
const ALLOW_HEADERS =
  "authorization, content-type, last-event-id, mcp-session-id, mcp-protocol-version, x-request-id, x-conversation-id, x-user-id, x-correlation-id";
const EXPOSE_HEADERS = "mcp-session-id, x-request-id, retry-after, x-conversation-id, x-conversation-tier, x-session-id, x-correlation-id";

/** The host part of a Host header or URL authority, lower-case, without port or brackets. */
function hostName(authority: string): string {
  const a = authority.trim().toLowerCase();
  if (a.startsWith("[")) return a.slice(1, a.indexOf("]") > 0 ? a.indexOf("]") : undefined);
  const colon = a.lastIndexOf(":");
  return colon >= 0 && a.indexOf(":") === colon ? a.slice(0, colon) : a;
}

const normalOrigin = (o: string) => o.trim().toLowerCase().replace(/\/+$/, "");

const WILDCARD = new Set(["0.0.0.0", "::", "[::]", ""]);

export class BrowserGuard {
  private readonly hosts: Set<string>;
  private readonly cors: Set<string>;

  constructor(private readonly opts: BrowserGuardOptions) {
    const bind = hostName(opts.bindHost);
    this.hosts = new Set(["localhost", "127.0.0.1", "::1", bind, ...opts.allowedHosts.map(hostName)]);
    // Bound on every interface: each of the machine's own addresses is its name too.
    if (WILDCARD.has(bind)) {
      for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) this.hosts.add(i.address.toLowerCase());
    }
    this.cors = new Set(opts.corsOrigins.map(normalOrigin));
  }

  /**
   * Throws an HttpError (403) for a request refused before auth; answers a CORS preflight
   * with a Response; undefined when the request goes on.
   */
  check(req: Request, method: string): Response | undefined {
    const headers = req.headers;
    const host = headers.get("host");
    if (!this.opts.credentialed && host !== null && !this.hosts.has(hostName(host))) {
      throw new HttpError(
        403,
        "host_not_allowed",
        `Host ${JSON.stringify(host)} is not this service's: use its address or localhost, or add the name to ALLOWED_HOSTS`,
      );
    }
    const origin = headers.get("origin");
    const cors = origin !== null && this.cors.has(normalOrigin(origin));
    if (origin !== null && !cors && !this.sameOrigin(origin, host)) {
      throw new HttpError(403, "origin_not_allowed", `requests from ${JSON.stringify(origin)} are not allowed; list the origin in CORS_ORIGINS to allow it`);
    }
    if (method === "OPTIONS" && cors && headers.has("access-control-request-method")) {
      return new Response(null, {
        status: 204,
        headers: {
          ...this.corsHeaders(origin!),
          "access-control-allow-methods": ALLOW_METHODS,
          "access-control-allow-headers": headers.get("access-control-request-headers") ?? ALLOW_HEADERS,
          "access-control-max-age": "600",
        },
      });
    }
    return undefined;
  }

  /** After auth: a request with a body must send JSON (415 otherwise). */
  checkBody(req: Request, method: string): void {
    const headers = req.headers;
    if (BODY_METHODS.has(method)) {
      const type = headers.get("content-type");
      const hasBody = type !== null || Number(headers.get("content-length") ?? 0) > 0 || headers.has("transfer-encoding");
      if (hasBody && !JSON_TYPE.test(type ?? "")) {
        throw new HttpError(
          415,
          "unsupported_media_type",
          `this endpoint takes a JSON body: send Content-Type: application/json (got ${type === null ? "none" : JSON.stringify(type.slice(0, 100))})`,
        );
      }
    }
  }

  /** Adds the CORS headers to the answer of an allowed cross-origin request. */
  decorate(res: Response, origin: string | null): void {
    if (origin === null || !this.cors.has(normalOrigin(origin))) return;
    try {
      for (const [k, v] of Object.entries(this.corsHeaders(origin))) res.headers.set(k, v);
      res.headers.set("access-control-expose-headers", EXPOSE_HEADERS);
    } catch {
      // an immutable response: nothing to add
    }
  }

  private corsHeaders(origin: string): Record<string, string> {
    return { "access-control-allow-origin": origin, vary: "Origin" };
  }

  /** The page is the service's own (its /docs, say): Origin names the Host the request went to. */
  private sameOrigin(origin: string, host: string | null): boolean {
    if (host === null) return false;
    try {
      return new URL(origin).host.toLowerCase() === host.trim().toLowerCase();
    } catch {
      return false;
    }
  }
}
