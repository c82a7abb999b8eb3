// The bot's own token for replies (spec: Authentication, "Team-chat outbound"): OAuth2 client
// credentials against the platform's identity provider (the tenant's endpoint for a
// single-tenant bot), scope the bot API; cached until shortly before it expires, one request in
// flight however many replies wait for it, dropped when the platform answers 401 to it.
import { log } from "../../common/logger";

const logger = log("teamchat");

export interface OutboundTokenOptions {
  tokenUrl: string;
  appId: string;
  appPassword: string;
  scope: string;
  fetch?: typeof fetch;
  /** Per request (default 15 s). */
  timeoutMs?: number;
}

/** Refreshed this long before expiry (or at half its life, for short-lived tokens). */
const EXPIRY_MARGIN_SECONDS = 300;

class OutboundTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OutboundTokenError";
  }
}

export class OutboundToken {
  private cached: { token: string; refreshAt: number } | undefined;
  private pending: Promise<string> | undefined;
  private readonly fetch: typeof fetch;

  constructor(private readonly opts: OutboundTokenOptions) {
    this.fetch = opts.fetch ?? fetch;
  }

  async get(): Promise<string> {
    if (this.cached && Date.now() < this.cached.refreshAt) return this.cached.token;
    this.pending ??= this.request().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** The platform refused `token`: the next get() asks for a new one (unless one replaced it already). */
  invalidate(token: string): void {
    if (this.cached?.token === token) this.cached = undefined;
  }

  private async request(): Promise<string> {
    const body = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: this.opts.appId,
      client_secret: this.opts.appPassword,
      scope: this.opts.scope,
    });
    let res: Response;
    try {
      res = await this.fetch(this.opts.tokenUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body,
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 15_000),
      });
    } catch (err) {
      throw new OutboundTokenError(`could not reach the token endpoint ${this.opts.tokenUrl}: ${(err as Error).message}`);
    }
    const json = (await res.json().catch(() => ({}))) as { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown };
    if (!res.ok || typeof json.access_token !== "string") {
      // The description names the problem (wrong secret, unknown app, wrong tenant), never the secret.
      const why = typeof json.error_description === "string" ? json.error_description.split("\n")[0] : typeof json.error === "string" ? json.error : "";
      throw new OutboundTokenError(
        `the token endpoint ${this.opts.tokenUrl} answered HTTP ${res.status}${why ? `: ${why}` : ""} (check TEAMCHAT_APP_ID, TEAMCHAT_APP_PASSWORD and TEAMCHAT_TENANT_ID)`,
      );
    }
    const expiresIn = Number(json.expires_in);
    const life = Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3600;
    const margin = Math.min(EXPIRY_MARGIN_SECONDS, life / 2);
    this.cached = { token: json.access_token, refreshAt: Date.now() + (life - margin) * 1000 };
    logger.debug(`bot token obtained, valid ${life} s`);
    return json.access_token;
  }
}
