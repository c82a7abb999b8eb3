// Whether `agents` uses the Kubernetes backend, and which namespaces (spec: "Backend precedence:
// CLI flag, then env, then ~/.service/state.json, then off; namespaces on the command line imply
// it, namespaces from env or state file do not; --no-k8s always wins").
//   flag:  --k8s, --no-k8s, --namespace a,b
//   env:   SERVICE_K8S_ENABLED (true/false, 1/0, yes/no, on/off), SERVICE_K8S_NAMESPACES (a,b)
//   state: ~/.service/state.json {"k8s": {"enabled": true, "namespaces": ["a"]}} (the TUI's `k` writes it)
// No namespaces means kubectl's current namespace.
import { existsSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../../../src/common/atomic-write";

export interface Backend {
  enabled: boolean;
  namespaces: string[];
  /** What decided `enabled`. */
  from: "flag" | "env" | "state" | "default";
}

export interface BackendFlags {
  /** true for --k8s, false for --no-k8s, undefined when neither. */
  k8s?: boolean;
  namespace?: string;
}

export interface StateFile {
  k8s?: { enabled?: unknown; namespaces?: unknown };
  [key: string]: unknown;
}

export class BackendSettingError extends Error {}

export const statePath = (home: string): string => join(home, ".service", "state.json");

export function readState(path: string): StateFile {
  if (!existsSync(path)) return {};
  try {
    const doc = JSON.parse(readFileSync(path, "utf8"));
    return doc && typeof doc === "object" && !Array.isArray(doc) ? (doc as StateFile) : {};
  } catch {
    // A broken state file must not lock the user out of the TUI: it counts as empty.
    return {};
  }
}

/** Saves the backend choice, keeping whatever else the file holds. */
export async function saveBackend(path: string, backend: Pick<Backend, "enabled" | "namespaces">): Promise<void> {
  const state = readState(path);
  state.k8s = { ...(state.k8s ?? {}), enabled: backend.enabled, namespaces: backend.namespaces };
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, `${JSON.stringify(state, null, 2)}\n`);
}

export const parseList = (value: string | undefined): string[] =>
  (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function parseBool(name: string, value: string): boolean {
  const v = value.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(v)) return true;
  if (["0", "false", "no", "off"].includes(v)) return false;
  throw new BackendSettingError(`${name}=${JSON.stringify(value)} is not a boolean (true/false, 1/0, yes/no, on/off)`);
}

export function resolveBackend(flags: BackendFlags, env: Record<string, string | undefined>, state: StateFile): Backend {
  const cli = parseList(flags.namespace);
  const fromEnv = parseList(env.SERVICE_K8S_NAMESPACES);
  const fromState = Array.isArray(state.k8s?.namespaces)
    ? (state.k8s!.namespaces as unknown[]).filter((n): n is string => typeof n === "string" && n !== "")
    : [];
  const namespaces = cli.length > 0 ? cli : fromEnv.length > 0 ? fromEnv : fromState;
  for (const ns of namespaces) if (!NAMESPACE.test(ns)) throw new BackendSettingError(`${JSON.stringify(ns)} is not a Kubernetes namespace name`);
  if (flags.k8s === false) return { enabled: false, namespaces, from: "flag" };
  if (flags.k8s === true || cli.length > 0) return { enabled: true, namespaces, from: "flag" };
  const enabledEnv = env.SERVICE_K8S_ENABLED?.trim();
  if (enabledEnv) return { enabled: parseBool("SERVICE_K8S_ENABLED", enabledEnv), namespaces, from: "env" };
  if (typeof state.k8s?.enabled === "boolean") return { enabled: state.k8s.enabled, namespaces, from: "state" };
  return { enabled: false, namespaces, from: "default" };
}
