// `agents --headless <action>`: the agents command for scripts and other agents (spec: "JSON on
// stdout, errors on stderr; actions list, chat, job, sync, health, local; pod actions exit 2 when
// the backend is off"). Errors are {"error": {"code", "message"}} on stderr.
import { localAction, type Outcome, POD_ACTIONS, type PodAction, podAction } from "./actions";
import type { Backend } from "./backend";
import { discoverPods, KubectlError, type LocalAgentDetail, localAgents, summary } from "./discovery";

export const ACTIONS = ["list", ...POD_ACTIONS, "local"] as const;
export type Action = (typeof ACTIONS)[number];

export interface HeadlessInput {
  action: Action;
  backend: Backend;
  hub: string | null;
  pod?: string;
  agent?: string;
  message?: string;
  conversationId?: string;
  task?: string;
  repo?: string;
  wait: boolean;
}

const invalid = (message: string): Outcome => ({ exit: 2, error: { code: "invalid_input", message } });

export async function headless(input: HeadlessInput): Promise<Outcome> {
  const skipped: string[] = [];
  const agents = () => localAgents(input.hub, (file, why) => skipped.push(`${file}: ${why}`));
  switch (input.action) {
    case "list": {
      let pods: Awaited<ReturnType<typeof discoverPods>> = [];
      if (input.backend.enabled) {
        try {
          pods = await discoverPods(input.backend);
        } catch (err) {
          if (err instanceof KubectlError) return { exit: 1, error: { code: "kubectl_failed", message: err.message } };
          throw err;
        }
      }
      const local = agents();
      warnSkipped(skipped);
      return {
        exit: 0,
        json: { k8s: { enabled: input.backend.enabled, namespaces: input.backend.namespaces }, agentihub: input.hub, pods, local_agents: local.map(summary) },
      };
    }
    case "local": {
      if (!input.agent) return invalid("local needs --agent NAME (a local agent from the hub)");
      const found: LocalAgentDetail | undefined = agents().find((a) => a.name === input.agent);
      warnSkipped(skipped);
      if (!found)
        return {
          exit: 1,
          error: {
            code: "agent_not_found",
            message: `no local agent ${input.agent} in ${input.hub ? `${input.hub}/agents/` : "any hub (none found: pass --agentihub-dir or set SERVICE_HUB_PATH)"}`,
          },
        };
      return { exit: 0, json: found };
    }
    default:
      return podOrLocal(input.action, input);
  }
}

async function podOrLocal(action: PodAction, input: HeadlessInput): Promise<Outcome> {
  if (action === "chat" && !input.message?.trim()) return invalid("chat needs --message TEXT");
  if (action === "job" && !input.task?.trim()) return invalid("job needs --task TEXT");
  if (!input.wait && action !== "job") return invalid("--no-wait applies to job only (a chat's answer is its result)");
  if (input.repo && action !== "job") return invalid("--repo applies to job only");
  const args = { message: input.message, conversationId: input.conversationId, task: input.task, repo: input.repo, wait: input.wait };
  if (input.pod === undefined) return localAction(action, args);
  if (!input.backend.enabled) {
    return {
      exit: 2,
      error: {
        code: "backend_off",
        message: `--pod needs the Kubernetes backend, which is off (${input.backend.from}): pass --k8s or --namespace, or set SERVICE_K8S_ENABLED=true`,
      },
    };
  }
  return podAction(input.backend, input.pod, action, args);
}

function warnSkipped(skipped: string[]): void {
  for (const s of skipped) process.stderr.write(`${JSON.stringify({ warning: `agent skipped: ${s}` })}\n`);
}

export function emit(outcome: Outcome): never {
  // console.log: written synchronously, before the exit below.
  if (outcome.json !== undefined) console.log(JSON.stringify(outcome.json, null, 2));
  if (outcome.error) process.stderr.write(`${JSON.stringify({ error: outcome.error })}\n`);
  process.exit(outcome.exit);
}
