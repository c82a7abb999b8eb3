// The git host credentials a job uses for private repositories, push and `gh`: a GitHub App
// installation token when the App identity is configured (app id + installation id + PEM key
// as path, text or base64), else GITHOST_TOKEN. The token only goes to the git host (the host
// of GITHOST_API_URL, "api." dropped), over https, on that host's port: never to another host
// or port a job names, and never over plain http.
import { createPrivateKey, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { SignJWT } from "jose";
import { DomainError } from "../../common/domain-error";
import { isLoopback } from "../../common/server";
import type { OrchestratorConfig } from "../config";
import type { GitAuth } from "./git";
import type { RepoUrl } from "./url";

export type CredentialsConfig = Pick<
  OrchestratorConfig,
  | "githostToken"
  | "githostApiUrl"
  | "githostUrl"
  | "githostAppId"
  | "githostAppInstallationId"
  | "githostAppPrivateKeyPath"
  | "githostAppPrivateKey"
  | "githostAppPrivateKeyBase64"
>;

export interface GitCredentials {
  token: string;
  source: "pat" | "app";
  /** The only host name the token is sent to. */
  hostname: string;
  /**
   * The only origin it is sent to: https://<git host>[:port]/ (the port of GITHOST_API_URL).
   * http:// only when GITHOST_API_URL itself is plain http on a loopback address (a local test host).
   */
  origin: string;
}

export class GitCredentialsError extends DomainError {
  constructor(message: string) {
    super("upstream", "githost_credentials_failed", message);
    this.name = "GitCredentialsError";
  }
}

/** api.github.com → github.com; ghe.example.com/api/v3 → ghe.example.com. */
const gitHostname = (apiUrl: string): string => new URL(apiUrl).hostname.toLowerCase().replace(/^api\./, "");

/**
 * The one origin git credentials go to: GITHOST_URL, else GITHOST_API_URL with "api." dropped
 * (https://api.github.com → https://github.com/; https://ghe.example.com:8443/api/v3 →
 * https://ghe.example.com:8443/). Always https, except plain http on a loopback address.
 */
export const gitOrigin = (config: Pick<CredentialsConfig, "githostApiUrl" | "githostUrl">): string => {
  const u = new URL(config.githostUrl ?? config.githostApiUrl);
  const hostname = config.githostUrl ? u.hostname.toLowerCase() : gitHostname(config.githostApiUrl);
  const scheme = u.protocol === "http:" && isLoopback(u.hostname) ? "http:" : "https:";
  return `${scheme}//${hostname}${u.port ? `:${u.port}` : ""}/`;
};

const appConfigured = (c: CredentialsConfig) =>
  Boolean(c.githostAppId || c.githostAppInstallationId || c.githostAppPrivateKeyPath || c.githostAppPrivateKey || c.githostAppPrivateKeyBase64);

export async function resolveGitCredentials(config: CredentialsConfig, now: () => number = Date.now): Promise<GitCredentials | undefined> {
  const origin = gitOrigin(config);
  const hostname = new URL(origin).hostname;
  if (appConfigured(config)) return { token: await installationToken(config, now), source: "app", hostname, origin };
  if (config.githostToken) return { token: config.githostToken, source: "pat", hostname, origin };
  return undefined;
}

/** The auth header for a repository, when the credentials may go to it: https, the git host, its port. */
export function gitAuthFor(repo: RepoUrl, creds: GitCredentials | undefined): GitAuth | undefined {
  if (!creds || !repo.origin || repo.origin.toLowerCase() !== creds.origin) return undefined;
  const basic = Buffer.from(`x-access-token:${creds.token}`).toString("base64");
  return { origin: repo.origin, header: `Authorization: Basic ${basic}` };
}

function privateKey(c: CredentialsConfig): KeyObject {
  let pem: string;
  if (c.githostAppPrivateKey) pem = c.githostAppPrivateKey.replace(/\\n/g, "\n");
  else if (c.githostAppPrivateKeyBase64) pem = Buffer.from(c.githostAppPrivateKeyBase64, "base64").toString("utf8");
  else if (c.githostAppPrivateKeyPath) {
    try {
      pem = readFileSync(c.githostAppPrivateKeyPath, "utf8");
    } catch (err) {
      throw new GitCredentialsError(`cannot read GITHOST_APP_PRIVATE_KEY_PATH ${c.githostAppPrivateKeyPath}: ${(err as Error).message}`);
    }
  } else
    throw new GitCredentialsError(
      "the GitHub App identity needs a private key: set GITHOST_APP_PRIVATE_KEY_PATH, GITHOST_APP_PRIVATE_KEY or GITHOST_APP_PRIVATE_KEY_BASE64",
    );
  try {
    // PKCS#1 (GitHub's download) and PKCS#8 both load here; jose's importPKCS8 takes only the latter.
    return createPrivateKey(pem);
  } catch {
    throw new GitCredentialsError("the GitHub App private key is not a PEM RSA key");
  }
}

const cache = new Map<string, { token: string; expiresAt: number }>();
const REFRESH_BEFORE_MS = 5 * 60_000;

async function installationToken(c: CredentialsConfig, now: () => number): Promise<string> {
  if (!c.githostAppId || !c.githostAppInstallationId) {
    throw new GitCredentialsError("the GitHub App identity needs both GITHOST_APP_ID and GITHOST_APP_INSTALLATION_ID");
  }
  const api = c.githostApiUrl.replace(/\/+$/, "");
  const cacheKey = `${api}|${c.githostAppId}|${c.githostAppInstallationId}`;
  const hit = cache.get(cacheKey);
  if (hit && hit.expiresAt - REFRESH_BEFORE_MS > now()) return hit.token;

  const iat = Math.floor(now() / 1000) - 60; // clock drift allowance, as GitHub recommends
  const jwt = await new SignJWT({})
    .setProtectedHeader({ alg: "RS256" })
    .setIssuedAt(iat)
    .setExpirationTime(iat + 9 * 60)
    .setIssuer(c.githostAppId)
    .sign(privateKey(c));
  const url = `${api}/app/installations/${encodeURIComponent(c.githostAppInstallationId)}/access_tokens`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${jwt}`,
        accept: "application/vnd.github+json",
        "x-github-api-version": "2022-11-28",
        "user-agent": "brain-stack",
      },
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new GitCredentialsError(`cannot reach ${url} for a GitHub App installation token: ${(err as Error).message}`);
  }
  const body = (await res.json().catch(() => ({}))) as { token?: unknown; expires_at?: unknown; message?: unknown };
  if (!res.ok || typeof body.token !== "string") {
    throw new GitCredentialsError(
      `${url} answered ${res.status} for a GitHub App installation token${typeof body.message === "string" ? `: ${body.message}` : ""}`,
    );
  }
  const expiresAt = typeof body.expires_at === "string" ? Date.parse(body.expires_at) : now() + 60 * 60_000;
  cache.set(cacheKey, { token: body.token, expiresAt: Number.isNaN(expiresAt) ? now() + 60 * 60_000 : expiresAt });
  return body.token;
}

/** For tests: forget cached installation tokens. */
export const clearTokenCache = (): void => cache.clear();
