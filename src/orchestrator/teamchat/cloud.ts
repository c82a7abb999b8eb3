// Where the team-chat connector may talk to (spec: Team-chat scope, "commercial cloud only"):
// the platform's public hosts, never a sovereign cloud (US government, China, Germany), and
// replies — which carry the bot's token — only to service URLs on the platform's hosts
// (botframework.com, trafficmanager.net, skype.com) or on hosts the operator listed.

/** Hosts (with their subdomains) replies may go to without being listed. */
const PLATFORM_SERVICE_HOSTS = ["botframework.com", "trafficmanager.net", "skype.com"] as const;

/**
 * Sovereign-cloud domains: their authorities (login.microsoftonline.us, login.chinacloudapi.cn,
 * login.microsoftonline.de), bot platform hosts (botframework.azure.us, api.botframework.us,
 * botframework.azure.cn) and Teams service URLs (smba.infra.gov.teams.microsoft.us, …).
 */
const SOVEREIGN_DOMAINS = [
  "microsoftonline.us",
  "microsoftonline.de",
  "microsoftonline.cn",
  "chinacloudapi.cn",
  "azure.us",
  "azure.cn",
  "botframework.us",
  "microsoft.us",
  "usgovcloudapi.net",
  "cloudapi.de",
  "microsoft.scloud",
  "eaglex.ic.gov",
] as const;

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

const normalHost = (host: string) => host.trim().toLowerCase().replace(/\.$/, "");

/** host is `domain` or one of its subdomains. */
function hostIn(host: string, domain: string): boolean {
  const h = normalHost(host);
  const d = normalHost(domain).replace(/^\*?\./, "");
  return h === d || h.endsWith(`.${d}`);
}

export function isSovereignHost(host: string): boolean {
  return SOVEREIGN_DOMAINS.some((d) => hostIn(host, d));
}

/** The host of a URL or of a scope such as https://api.botframework.com/.default; undefined when it has none. */
export function hostOf(value: string): string | undefined {
  try {
    return new URL(value).hostname || undefined;
  } catch {
    return undefined;
  }
}

export class ServiceUrlRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ServiceUrlRejected";
  }
}

/**
 * Throws ServiceUrlRejected unless replies (and the bot's token) may go to `serviceUrl`: https on a
 * platform host or a listed one, or http on a listed loopback host (the emulator, tests); never a
 * sovereign cloud, listed or not.
 */
export function checkServiceUrl(serviceUrl: string | undefined, allowedHosts: readonly string[]): URL {
  if (!serviceUrl) throw new ServiceUrlRejected("the activity has no serviceUrl to reply to");
  let url: URL;
  try {
    url = new URL(serviceUrl);
  } catch {
    throw new ServiceUrlRejected(`the activity's serviceUrl ${JSON.stringify(serviceUrl)} is not a URL`);
  }
  const host = url.hostname;
  if (isSovereignHost(host)) {
    throw new ServiceUrlRejected(`service URL host ${host} is a sovereign cloud: only the commercial cloud is supported`);
  }
  const listed = allowedHosts.some((h) => hostIn(host, h));
  const platform = PLATFORM_SERVICE_HOSTS.some((h) => hostIn(host, h));
  if (!listed && !platform) {
    throw new ServiceUrlRejected(
      `service URL host ${host} is not a bot platform host (${PLATFORM_SERVICE_HOSTS.join(", ")}): add it to TEAMCHAT_ALLOWED_SERVICE_HOSTS to reply there`,
    );
  }
  if (url.protocol === "https:") return url;
  if (url.protocol === "http:" && listed && LOOPBACK.has(normalHost(host))) return url;
  throw new ServiceUrlRejected(`service URL ${url.origin} is not https (plain http is accepted only for a listed loopback host)`);
}

/** The token endpoint for the bot's tenant: the default multi-tenant path segment botframework.com replaced by the tenant id. */
export function tenantTokenUrl(tokenUrl: string, tenantId: string | undefined): string {
  if (!tenantId) return tokenUrl;
  const url = new URL(tokenUrl);
  const parts = url.pathname.split("/");
  const i = parts.indexOf("botframework.com");
  if (i < 0) return tokenUrl;
  parts[i] = encodeURIComponent(tenantId);
  url.pathname = parts.join("/");
  return url.toString();
}

/** Start-up check of the configured endpoints: one message naming every sovereign-cloud value. */
export function sovereignSettings(values: Record<string, string | readonly string[]>): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(values)) {
    for (const v of typeof value === "string" ? [value] : value) {
      const host = hostOf(v) ?? v;
      if (isSovereignHost(host)) problems.push(`${name}=${v} points at a sovereign cloud (${host})`);
    }
  }
  return problems;
}
