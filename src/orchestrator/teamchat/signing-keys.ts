// The bot platform's token signing keys: its OpenID metadata names a jwks_uri, whose keys (each
// with the channels it is endorsed for) are cached, fetched again after a day, and at once when a
// token names a kid the cache lacks (the platform rotates keys) — at most once per cooldown, so a
// stream of made-up kids cannot turn into a stream of fetches.
import { type CryptoKey, importJWK, type JWK } from "jose";
import { log } from "../../common/logger";
import { hostOf, isSovereignHost } from "./cloud";

const logger = log("teamchat");

export interface SigningKeysOptions {
  metadataUrl: string;
  fetch?: typeof fetch;
  /** Keys are fetched again after this long even when every kid is known (default 24 h). */
  maxAgeMs?: number;
  /** Least time between two fetches caused by an unknown kid (default 60 s). */
  unknownKidCooldownMs?: number;
  /** Per request (default 10 s). */
  timeoutMs?: number;
}

/** The token names no key the platform publishes, or a key not endorsed for the activity's channel. */
export class UnknownSigningKey extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnknownSigningKey";
  }
}

/** The metadata or key set could not be fetched and nothing is cached: tokens cannot be checked now. */
export class SigningKeysUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SigningKeysUnavailable";
  }
}

interface Entry {
  jwk: JWK & { endorsements?: unknown };
  key?: Promise<CryptoKey | Uint8Array>;
}

export class SigningKeys {
  private entries = new Map<string, Entry>();
  private fetchedAt = 0;
  private refreshing: Promise<void> | undefined;
  private readonly fetch: typeof fetch;
  /** Key set fetches so far (metadata included in each). */
  fetches = 0;

  constructor(private readonly opts: SigningKeysOptions) {
    this.fetch = opts.fetch ?? fetch;
  }

  /** The verification key for `kid`, checked against the channel's endorsement when the key lists them. */
  async key(kid: string | undefined, channelId: string | undefined): Promise<CryptoKey | Uint8Array> {
    if (!kid) throw new UnknownSigningKey("the token names no signing key (kid)");
    const now = Date.now();
    if (this.entries.size === 0 || now - this.fetchedAt > (this.opts.maxAgeMs ?? 86_400_000)) await this.refresh(this.entries.size === 0);
    let entry = this.entries.get(kid);
    if (!entry && Date.now() - this.fetchedAt >= (this.opts.unknownKidCooldownMs ?? 60_000)) {
      await this.refresh(false);
      entry = this.entries.get(kid);
    }
    if (!entry) throw new UnknownSigningKey(`the token's signing key ${kid} is not one the bot platform publishes`);
    const endorsements = entry.jwk.endorsements;
    if (channelId && Array.isArray(endorsements) && !endorsements.includes(channelId)) {
      throw new UnknownSigningKey(`the token's signing key ${kid} is not endorsed for channel ${channelId}`);
    }
    entry.key ??= importJWK(entry.jwk, "RS256");
    return entry.key;
  }

  private refresh(required: boolean): Promise<void> {
    this.refreshing ??= this.load()
      .catch((err: Error) => {
        if (required && this.entries.size === 0) throw new SigningKeysUnavailable(err.message);
        // Keep what we have; try again on the next unknown kid or when the cooldown allows.
        logger.warn(`bot platform signing keys: ${err.message}; keeping the ${this.entries.size} cached key(s)`);
        this.fetchedAt = Date.now();
      })
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  private async load(): Promise<void> {
    this.fetches++;
    const metadata = await this.getJson(this.opts.metadataUrl, "OpenID metadata");
    const jwksUri = (metadata as { jwks_uri?: unknown }).jwks_uri;
    if (typeof jwksUri !== "string" || !URL.canParse(jwksUri)) throw new Error(`the OpenID metadata at ${this.opts.metadataUrl} has no jwks_uri`);
    const host = hostOf(jwksUri)!;
    if (isSovereignHost(host)) throw new Error(`the OpenID metadata's jwks_uri ${jwksUri} is a sovereign cloud: only the commercial cloud is supported`);
    if (new URL(jwksUri).protocol !== "https:" && new URL(this.opts.metadataUrl).protocol === "https:") {
      throw new Error(`the OpenID metadata's jwks_uri ${jwksUri} is not https`);
    }
    const set = await this.getJson(jwksUri, "key set");
    const keys = (set as { keys?: unknown }).keys;
    if (!Array.isArray(keys)) throw new Error(`the key set at ${jwksUri} has no keys`);
    const next = new Map<string, Entry>();
    for (const k of keys as Array<JWK & { endorsements?: unknown }>) {
      if (!k || typeof k !== "object" || typeof k.kid !== "string" || k.kty !== "RSA") continue;
      // A key already imported stays imported (same kid, same material).
      const old = this.entries.get(k.kid);
      next.set(k.kid, old && old.jwk.n === k.n ? { jwk: k, key: old.key } : { jwk: k });
    }
    if (next.size === 0) throw new Error(`the key set at ${jwksUri} holds no RSA keys`);
    this.entries = next;
    this.fetchedAt = Date.now();
  }

  private async getJson(url: string, what: string): Promise<unknown> {
    let res: Response;
    try {
      res = await this.fetch(url, { signal: AbortSignal.timeout(this.opts.timeoutMs ?? 10_000), headers: { accept: "application/json" } });
    } catch (err) {
      throw new Error(`could not fetch the ${what} at ${url}: ${(err as Error).message}`);
    }
    if (!res.ok) throw new Error(`the ${what} at ${url} answered HTTP ${res.status}`);
    try {
      return await res.json();
    } catch {
      throw new Error(`the ${what} at ${url} is not JSON`);
    }
  }
}
