// Repository URLs a job may name, and the clone cache's key for each. Accepted: https://,
// http://, ssh://, scp-like user@host:path, git://, and (only with SERVICE_ALLOW_LOCAL_REPOS=1:
// assertRepoAllowed) file:// and absolute local paths. Refused: other schemes (ext::),
// option-like or relative values, a host starting with '-' (ssh would read it as an option),
// and credentials in the URL (they would end up in job records and logs; set GITHOST_TOKEN).
import { createHash } from "node:crypto";
import { isAbsolute, normalize } from "node:path";
import { DomainError } from "../../common/domain-error";

export class InvalidRepoUrlError extends DomainError {
  constructor(reason: string) {
    super("invalid", "invalid_repo_url", `repo_url ${reason}`);
    this.name = "InvalidRepoUrlError";
  }
}

export type RepoUrlKind = "https" | "http" | "ssh" | "git" | "file";

export interface RepoUrl {
  /** What git clones from (as given, minus nothing: credentials are refused). */
  url: string;
  kind: RepoUrlKind;
  /** Normalised: lower-case host, no user, no trailing slash, no .git (network URLs). */
  key: string;
  /** Network URLs: the host name (no port). */
  hostname?: string;
  /** http(s): scheme://host[:port]/ — what an auth header is scoped to. */
  origin?: string;
  /** Network URLs: host[:port] as written (lower-case; no port when it is the scheme's default). */
  host?: string;
}

const SCP_LIKE = /^([A-Za-z0-9._~-]+)@([A-Za-z0-9.-]+):(?!\/\/)(.+)$/;
const MAX_URL_LENGTH = 2048;

const stripGit = (path: string) => path.replace(/\/+$/, "").replace(/\.git$/, "");

export function parseRepoUrl(input: string): RepoUrl {
  const url = input.trim();
  if (url === "") throw new InvalidRepoUrlError("is empty");
  if (url.length > MAX_URL_LENGTH) throw new InvalidRepoUrlError(`is longer than ${MAX_URL_LENGTH} characters`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it rejects
  if (/[\s\x00-\x1f\x7f]/.test(url)) throw new InvalidRepoUrlError("contains whitespace or control characters");
  if (url.startsWith("-")) throw new InvalidRepoUrlError("must not start with '-'");

  if (isAbsolute(url)) return local(url);
  const scp = SCP_LIKE.exec(url);
  if (scp) {
    const [, , host, path] = scp as unknown as [string, string, string, string];
    noOptionHost(host);
    return { url, kind: "ssh", key: `ssh://${host.toLowerCase()}/${stripGit(path.replace(/^\/+/, ""))}`, hostname: host.toLowerCase() };
  }

  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidRepoUrlError(
      `${JSON.stringify(url)} is not a URL: use https://host/owner/repo(.git), git@host:owner/repo.git, ssh://, file:// or an absolute path`,
    );
  }
  const scheme = parsed.protocol.replace(/:$/, "");
  if (scheme !== "file") noOptionHost(parsed.hostname);
  switch (scheme) {
    case "https":
    case "http": {
      if (parsed.username || parsed.password) {
        throw new InvalidRepoUrlError("must not carry credentials (user or token before '@'): set GITHOST_TOKEN or the GitHub App identity instead");
      }
      if (parsed.search || parsed.hash) throw new InvalidRepoUrlError("must not have a query or fragment");
      const path = stripGit(parsed.pathname);
      if (path === "" || path === "/") throw new InvalidRepoUrlError("has no repository path");
      return {
        url,
        kind: scheme,
        key: `${scheme}://${parsed.host.toLowerCase()}${path}`,
        hostname: parsed.hostname.toLowerCase(),
        host: parsed.host.toLowerCase(),
        origin: `${parsed.protocol}//${parsed.host}/`,
      };
    }
    case "ssh": {
      if (parsed.password) throw new InvalidRepoUrlError("must not carry a password");
      const path = stripGit(parsed.pathname);
      if (path === "" || path === "/") throw new InvalidRepoUrlError("has no repository path");
      return { url, kind: "ssh", key: `ssh://${parsed.host.toLowerCase()}${path}`, hostname: parsed.hostname.toLowerCase() };
    }
    case "git": {
      const path = stripGit(parsed.pathname);
      if (path === "" || path === "/") throw new InvalidRepoUrlError("has no repository path");
      return { url, kind: "git", key: `git://${parsed.host.toLowerCase()}${path}`, hostname: parsed.hostname.toLowerCase(), host: parsed.host.toLowerCase() };
    }
    case "file": {
      if (parsed.host !== "") throw new InvalidRepoUrlError("file:// URLs must be file:///absolute/path");
      return local(decodeURIComponent(parsed.pathname), url);
    }
    default:
      throw new InvalidRepoUrlError(
        `scheme ${scheme}: is not supported: use https://, ssh://, user@host:path, git:// (file:// or an absolute path with SERVICE_ALLOW_LOCAL_REPOS=1)`,
      );
  }
}

function noOptionHost(host: string): void {
  if (host.startsWith("-")) throw new InvalidRepoUrlError("has a host starting with '-' (git and ssh would read it as an option)");
}

/** file:// URLs and local paths only when the service allows them (SERVICE_ALLOW_LOCAL_REPOS=1). */
export function assertRepoAllowed(repo: RepoUrl, allowLocal: boolean): void {
  if (repo.kind === "file" && !allowLocal) {
    throw new InvalidRepoUrlError(
      "is a local path or file:// URL, which this service does not clone: use https://, ssh:// or git://, or set SERVICE_ALLOW_LOCAL_REPOS=1",
    );
  }
}

function local(path: string, url = path): RepoUrl {
  const abs = normalize(path).replace(/\/+$/, "") || "/";
  return { url, kind: "file", key: `file://${abs}` };
}

/** The clone cache directory name: the first 16 hex of sha256 over the normalised URL. */
export const repoHash = (repo: RepoUrl): string => createHash("sha256").update(repo.key).digest("hex").slice(0, 16);
