// What every service-cli command shares: where the orchestrator is, the API key, printing.
// Failures and exit codes: cli/_errors.ts, as for router-cli. spec: "Server connection:
// SERVICE_HOST (127.0.0.1), SERVICE_PORT (8200)". Like the service, settings come from the
// environment first, then ~/.service/config.yml (server.host, server.port, server.api_keys).
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { ServiceClient } from "../../src/orchestrator/client";
import { connecting, type Server, usage } from "../_errors";

// The server's values (src/orchestrator/jobs/schema.ts), copied so a command never loads the
// server's schemas just to check a flag: start-up time. A test keeps them equal.
export const JOB_STATUSES = ["queued", "running", "succeeded", "failed", "cancelled"] as const;
export type JobStatusName = (typeof JOB_STATUSES)[number];
export const JOB_LIST_DEFAULT = 20;
export const JOB_LIST_MAX = 1000;

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 8200;

export const home = (): string => process.env.HOME || homedir();
export const stateDir = (): string => join(home(), ".service");
export const configFile = (): string => join(stateDir(), "config.yml");

/** A setting the user got wrong (exit 2); the service's own ConfigError counts too. */
export class CliConfigError extends Error {
  override name = "ConfigError";
}

/** The server.* keys of ~/.service/config.yml the client needs (the service validates the rest). */
function serverSettings(): { host?: string; port?: string; apiKeys?: string } {
  const path = configFile();
  if (!existsSync(path)) return {};
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, "utf8"));
  } catch (err) {
    throw new CliConfigError(`${path} is not valid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  const server = (doc as { server?: Record<string, unknown> } | null)?.server;
  if (!server || typeof server !== "object") return {};
  const text = (v: unknown) => (v === undefined || v === null ? undefined : Array.isArray(v) ? v.map(String).join(",") : String(v));
  return { host: text(server.host), port: text(server.port), apiKeys: text(server.api_keys) };
}

export interface Connection {
  baseUrl: string;
  token?: string;
  /** Where the key came from, for the 401 hint. */
  tokenFrom?: string;
}

/** A bind address is not a destination: 0.0.0.0 and :: mean this machine. */
function destination(host: string): string {
  const h = host.trim();
  if (h === "" || h === "0.0.0.0") return DEFAULT_HOST;
  if (h === "::" || h === "[::]") return "[::1]";
  return h.includes(":") && !h.startsWith("[") ? `[${h}]` : h;
}

/**
 * The orchestrator's URL and key. Key: SERVICE_API_KEY, else the first of SERVICE_API_KEYS (so
 * the CLI inside the service's own container needs nothing else), else the first of
 * server.api_keys in ~/.service/config.yml.
 */
export function connection(env: Record<string, string | undefined> = process.env): Connection {
  const file = serverSettings();
  const host = env.SERVICE_HOST || file.host || DEFAULT_HOST;
  const port = env.SERVICE_PORT || file.port || String(DEFAULT_PORT);
  if (!/^\d{1,5}$/.test(port.trim()) || Number(port) > 65535) throw new CliConfigError(`SERVICE_PORT=${JSON.stringify(port)} is not a port number`);
  const firstOf = (list: string | undefined) =>
    list
      ?.split(",")
      .map((k) => k.trim())
      .find(Boolean);
  const candidates: Array<[string | undefined, string]> = [
    [env.SERVICE_API_KEY?.trim() || undefined, "SERVICE_API_KEY"],
    [firstOf(env.SERVICE_API_KEYS), "SERVICE_API_KEYS"],
    [firstOf(file.apiKeys), `server.api_keys in ${configFile()}`],
  ];
  const [token, tokenFrom] = candidates.find(([value]) => value !== undefined) ?? [undefined, undefined];
  return { baseUrl: `http://${destination(host)}:${Number(port)}`, token, tokenFrom };
}

/** The orchestrator, in the words of service-cli's failure lines (cli/_errors.ts). */
export const ORCHESTRATOR: Server = {
  name: "orchestrator",
  credential: "API key",
  setCredential: "set SERVICE_API_KEY, or server.api_keys in ~/.service/config.yml",
  whenDown: "start it with `service-cli serve`, or point SERVICE_HOST/SERVICE_PORT at it",
};

export function client(timeoutMs = 30_000): ServiceClient {
  const c = connection();
  connecting(ORCHESTRATOR, c.tokenFrom);
  return new ServiceClient({ ...c, timeoutMs });
}

/**
 * The machine output of --json: pretty JSON on stdout and nothing else there. console.log, not
 * process.stdout.write: Bun writes it synchronously, so the exit that follows a command cannot
 * cut a long answer to a slow pipe short.
 */
export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

/** A whole number within bounds from a flag, or exit 2 naming the flag. */
export function intArg(name: string, value: string | undefined, min: number, max: number): number {
  const n = Number(value);
  if (value === undefined || !/^\s*\d+\s*$/.test(value) || n < min || n > max)
    usage(`--${name} takes a whole number from ${min} to ${max}, not ${JSON.stringify(value)}`);
  return n;
}

/** Job ids are UUIDs (v7): anything else is a typo, not a job that does not exist. */
export function jobIdArg(value: string | undefined): string {
  const id = (value ?? "").trim();
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id))
    usage(`${JSON.stringify(value ?? "")} is not a job id (a UUID, as \`service-cli jobs\` lists them)`);
  return id;
}

export const jsonArg = { json: { type: "boolean", description: "print JSON on stdout and nothing else there" } } as const;
