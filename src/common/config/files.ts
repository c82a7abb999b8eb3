// Reading the two configuration files into flat string maps for loadSettings().
import { existsSync, readFileSync } from "node:fs";
import { parse as parseDotenv } from "dotenv";
import { ConfigError } from "./settings";

/** ~/.service/config.yml → {"server.port": "8200", "server.api_keys": "a,b", …}. */
export function readYamlFlat(path: string): Record<string, string> {
  if (!existsSync(path)) return {};
  let doc: unknown;
  try {
    // The YAML parser loads only when the file exists (most processes run without one).
    doc = (require("yaml") as typeof import("yaml")).parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new ConfigError(`invalid configuration: ${path} is not valid YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== "object" || Array.isArray(doc)) {
    throw new ConfigError(`invalid configuration: ${path} must hold a YAML mapping (key: value)`);
  }
  const out: Record<string, string> = {};
  const walk = (node: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(node)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (v === null || v === undefined) continue;
      if (Array.isArray(v)) out[key] = v.map(String).join(",");
      else if (typeof v === "object") walk(v as Record<string, unknown>, key);
      else out[key] = String(v);
    }
  };
  walk(doc as Record<string, unknown>, "");
  return out;
}

/** ~/.router/.env → {KEY: value}. */
export function readDotenv(path: string): Record<string, string> {
  if (!existsSync(path)) return {};
  return parseDotenv(readFileSync(path, "utf8"));
}
