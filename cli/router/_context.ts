// What every router-cli command shares: where the router is, the token, ~/.router/.env,
// and whom failures name (cli/_errors.ts). spec: "Client defaults: base URL http://localhost:8103 (override port with
// PORT_BRAIN_API in ~/.router/.env, or use --brain-url / BRAIN_URL); token from
// KB_ROUTER_TOKEN or ~/.router/.env, override with --token."

import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { RouterClient } from "../../src/router/client";
import { connecting, type Server } from "../_errors";

export const connectionArgs = {
  "brain-url": { type: "string", description: "router base URL (env BRAIN_URL; default http://localhost:<PORT_BRAIN_API|8103>)" },
  token: { type: "string", description: "bearer token (env KB_ROUTER_TOKEN, else ~/.router/.env)" },
} as const;

export const home = (): string => process.env.HOME || homedir();
export const routerDir = (): string => join(home(), ".router");
export const envFilePath = (): string => join(routerDir(), ".env");
// node:util's parseEnv (dotenv's syntax) rather than common/config/files.ts, which would load the
// services' settings and zod into every command.
export const readEnvFile = (): Record<string, string> =>
  existsSync(envFilePath()) ? (parseEnv(readFileSync(envFilePath(), "utf8")) as Record<string, string>) : {};

/** The router, in the words of router-cli's failure lines (cli/_errors.ts). */
export const ROUTER: Server = {
  name: "router",
  credential: "router token",
  setCredential: "set KB_ROUTER_TOKEN, put it in ~/.router/.env, or pass --token",
  whenDown: "is it running? (router-cli status; BRAIN_URL or --brain-url point elsewhere)",
};

export function connection(args: { "brain-url"?: string; token?: string }): { baseUrl: string; token?: string; tokenFrom?: string } {
  const file = readEnvFile();
  const port = process.env.PORT_BRAIN_API || file.PORT_BRAIN_API || "8103";
  const baseUrl = args["brain-url"] || process.env.BRAIN_URL || file.BRAIN_URL || `http://localhost:${port}`;
  const candidates: Array<[string | undefined, string]> = [
    [args.token, "--token"],
    [process.env.KB_ROUTER_TOKEN, "KB_ROUTER_TOKEN"],
    [file.KB_ROUTER_TOKEN, envFilePath()],
  ];
  const [token, tokenFrom] = candidates.find(([value]) => value) ?? [undefined, undefined];
  return { baseUrl, token, tokenFrom };
}

export function client(args: { "brain-url"?: string; token?: string }, timeoutMs = 30_000): RouterClient {
  const { tokenFrom, ...c } = connection(args);
  connecting(ROUTER, tokenFrom);
  return new RouterClient({ ...c, timeoutMs });
}
