// What `agents` lists: local agents from the agent hub checkout (agents/<name>/agent.yml) and,
// with the Kubernetes backend on, the pods running the orchestrator (a container whose env names
// SERVICE_PORT or SERVICE_POD_NAME; HUB_AGENT makes it an agent-mode pod).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import type { OrchestratorConfig } from "../../../src/orchestrator/config";
import { dirFromUrl } from "../../../src/orchestrator/profiles/load";
import { companionParent } from "../../../src/orchestrator/repos/companions";
import type { Backend } from "./backend";
import { kubectl, nsArgs } from "./kubectl";

export interface LocalAgent {
  name: string;
  package_path: string;
  description: string;
  capabilities: string[];
}

export interface LocalAgentDetail extends LocalAgent {
  agent_yml: string;
  model: string | null;
  max_turns: number | null;
  permission_mode: string | null;
  mcp_categories: string[];
}

export interface Pod {
  name: string;
  namespace: string;
  phase: string;
  ready: boolean;
  container: string;
  port: number;
  /** HUB_AGENT of an agent-mode pod; null for a job orchestrator. */
  agent: string | null;
  mode: "agent" | "orchestrator";
}

/**
 * The hub checkout: --agentihub-dir, else SERVICE_HUB_PATH, else the service's clone of
 * SERVICE_HUB_URL (<clone root>/<dir-from-url>), else ~/.service/agentihub; null when none exists.
 */
export function hubDir(flag: string | undefined, config: OrchestratorConfig): string | null {
  if (flag) return resolve(flag);
  const candidates = [
    config.hubPath ? resolve(config.hubPath) : undefined,
    config.hubUrl ? join(companionParent(config), dirFromUrl(config.hubUrl)) : undefined,
    join(config.stateDir, "agentihub"),
  ];
  return candidates.find((c): c is string => c !== undefined && existsSync(c)) ?? null;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : []);

/** Every agents/<dir>/agent.yml that parses, sorted by name; the others are reported through `skipped`. */
export function localAgents(hub: string | null, skipped: (file: string, why: string) => void = () => {}): LocalAgentDetail[] {
  if (!hub || !existsSync(join(hub, "agents"))) return [];
  const out: LocalAgentDetail[] = [];
  for (const entry of readdirSync(join(hub, "agents"), { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const file = join(hub, "agents", entry.name, "agent.yml");
    if (!existsSync(file)) continue;
    let doc: Record<string, unknown>;
    try {
      const parsed = parseYaml(readFileSync(file, "utf8"));
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not a YAML mapping");
      doc = parsed as Record<string, unknown>;
    } catch (err) {
      skipped(file, (err as Error).message.split("\n")[0]!);
      continue;
    }
    const mcp = strings(doc.mcp_categories);
    out.push({
      name: typeof doc.name === "string" && doc.name ? doc.name : entry.name,
      package_path: join(hub, "agents", entry.name, "package"),
      description: typeof doc.description === "string" ? doc.description.trim() : "",
      // Hubs may list capabilities; without them, the MCP categories say what the agent can reach.
      capabilities: Array.isArray(doc.capabilities) ? strings(doc.capabilities) : mcp,
      agent_yml: file,
      model: typeof doc.model === "string" ? doc.model : null,
      max_turns: typeof doc.max_turns === "number" ? doc.max_turns : null,
      permission_mode: typeof doc.permission_mode === "string" ? doc.permission_mode : null,
      mcp_categories: mcp,
    });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

export const summary = ({ name, package_path, description, capabilities }: LocalAgent): LocalAgent => ({ name, package_path, description, capabilities });

export class KubectlError extends Error {}

interface PodItem {
  metadata?: { name?: string; namespace?: string };
  spec?: { containers?: Array<{ name?: string; env?: Array<{ name?: string; value?: string }> }> };
  status?: { phase?: string; containerStatuses?: Array<{ name?: string; ready?: boolean }> };
}

/** The orchestrator pods in the backend's namespaces (kubectl's current one when none is named). */
export async function discoverPods(backend: Backend): Promise<Pod[]> {
  const pods: Pod[] = [];
  for (const ns of backend.namespaces.length > 0 ? backend.namespaces : [undefined]) {
    const r = await kubectl(["get", "pods", ...nsArgs(ns), "-o", "json"]);
    if (r.code !== 0) throw new KubectlError(`kubectl get pods${ns ? ` -n ${ns}` : ""} failed: ${r.stderr.trim().split("\n").pop() || `exit ${r.code}`}`);
    let items: PodItem[];
    try {
      items = (JSON.parse(r.stdout) as { items?: PodItem[] }).items ?? [];
    } catch {
      throw new KubectlError(`kubectl get pods${ns ? ` -n ${ns}` : ""} printed no JSON`);
    }
    for (const item of items) {
      for (const c of item.spec?.containers ?? []) {
        const env = new Map((c.env ?? []).map((e) => [e.name ?? "", e.value ?? ""]));
        if (!env.has("SERVICE_PORT") && !env.has("SERVICE_POD_NAME")) continue;
        const agent = env.get("HUB_AGENT") || null;
        pods.push({
          name: item.metadata?.name ?? "",
          namespace: item.metadata?.namespace ?? ns ?? "default",
          phase: item.status?.phase ?? "Unknown",
          ready: item.status?.containerStatuses?.find((s) => s.name === c.name)?.ready === true,
          container: c.name ?? "",
          port: Number(env.get("SERVICE_PORT")) || 8200,
          agent,
          mode: agent ? "agent" : "orchestrator",
        });
        break;
      }
    }
  }
  return pods;
}
