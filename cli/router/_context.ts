// What every router-cli command shares: where the router is, the token, ~/.router/.env,
// and printing. spec: "Client defaults: base URL http://localhost:8103 (override port with
// PORT_BRAIN_API in ~/.router/.env, or use --brain-url / BRAIN_URL); token from
// KB_ROUTER_TOKEN or ~/.router/.env, override with --token."
import { homedir } from "node:os";
import { join } from "node:path";
import { consola } from "consola";
import { existsSync, readFileSync } from "node:fs";
import { parse as parseDotenv } from "dotenv";
import { ApiError, ConnectionError, RouterClient } from "../../src/router/client";

export const connectionArgs = {
  "brain-url": { type: "string", description: "router base URL (env BRAIN_URL; default http://localhost:<PORT_BRAIN_API|8103>)" },
  token: { type: "string", description: "bearer token (env KB_ROUTER_TOKEN, else ~/.router/.env)" },
} as const;

export const home = (): string => process.env.HOME || homedir();
export const routerDir = (): string => join(home(), ".router");
export const envFilePath = (): string => join(routerDir(), ".env");
// dotenv directly (not common/config/files.ts): that would load the services' settings and zod into every command.
export const readEnvFile = (): Record<string, string> => (existsSync(envFilePath()) ? parseDotenv(readFileSync(envFilePath(), "utf8")) : {});

export function connection(args: { "brain-url"?: string; token?: string }): { baseUrl: string; token?: string } {
  const file = readEnvFile();
  const port = process.env.PORT_BRAIN_API || file.PORT_BRAIN_API || "8103";
  const baseUrl = args["brain-url"] || process.env.BRAIN_URL || file.BRAIN_URL || `http://localhost:${port}`;
  const token = args.token || process.env.KB_ROUTER_TOKEN || file.KB_ROUTER_TOKEN || undefined;
  return { baseUrl, token };
}

// Whether the last client was made without any token, so a 401 can say the token is missing
// rather than that the router rejected one.
let withoutToken = false;

export function client(args: { "brain-url"?: string; token?: string }, timeoutMs = 30_000): RouterClient {
  const c = connection(args);
  withoutToken = !c.token;
  return new RouterClient({ ...c, timeoutMs });
}

/** One clear line for a failed call, then the exit code the caller should use. */
export function reportFailure(err: unknown): number {
  if (err instanceof ConnectionError) consola.error(`the router does not answer at ${err.baseUrl}; is it running? (router-cli status)`);
  else if (err instanceof ApiError && err.status === 401 && withoutToken) {
    consola.error(`no router token: set KB_ROUTER_TOKEN, put it in ${envFilePath()}, or pass --token`);
  } else if (err instanceof ApiError) consola.error(`${err.status} ${err.code}: ${err.message}`);
  else consola.error((err as Error)?.message ?? String(err));
  return 1;
}

export const exit = (code: number): never => process.exit(code);
