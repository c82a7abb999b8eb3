// The agents command's actions, shared by the headless mode and the TUI. Without --pod they
// talk to the orchestrator this machine's settings point at (SERVICE_HOST/SERVICE_PORT: the
// container `agent --run` starts, or the service itself inside a pod). With --pod they run the
// same headless action inside that pod through `kubectl exec … service-cli agents --headless`,
// which finds its own service and key there, and relay its JSON and exit code.
import { ApiError, ConnectionError, type Job } from "../../../src/orchestrator/client";
import { failure } from "../../_errors";
import { client } from "../_context";
import type { Backend } from "./backend";
import { discoverPods, KubectlError, type Pod } from "./discovery";
import { kubectl } from "./kubectl";

export interface Outcome {
  exit: number;
  /** Printed on stdout (headless). */
  json?: unknown;
  /** Printed on stderr as {"error": {...}} (headless). */
  error?: { code: string; message: string };
}

export const POD_ACTIONS = ["chat", "job", "sync", "health"] as const;
export type PodAction = (typeof POD_ACTIONS)[number];

export interface ActionInput {
  message?: string;
  conversationId?: string;
  task?: string;
  repo?: string;
  wait: boolean;
}

const failed = (err: unknown): Outcome => {
  const f = failure(err);
  const code = err instanceof ConnectionError ? "unreachable" : err instanceof ApiError ? err.code : "failed";
  return { exit: f.exitCode, error: { code, message: f.message } };
};

const finished = (j: Job) => j.status !== "queued" && j.status !== "running";

/** One action against the service this machine's settings point at. */
export async function localAction(action: PodAction, input: ActionInput): Promise<Outcome> {
  try {
    switch (action) {
      case "chat": {
        const reply = await client().completion({ message: input.message!, ...(input.conversationId ? { conversation_id: input.conversationId } : {}) });
        return { exit: 0, json: reply };
      }
      case "job": {
        const c = client();
        const job = await c.submitJob({ task: input.task!, ...(input.repo ? { repo_url: input.repo } : {}), wait: input.wait });
        // The server answers 202 with the job as it is when its own wait bound passes first.
        return { exit: !input.wait || job.status === "succeeded" ? 0 : finished(job) ? 1 : 0, json: job };
      }
      case "sync": {
        const result = await client().sync("all");
        return { exit: result.results.some((r) => r.status === "failed") ? 1 : 0, json: result };
      }
      case "health": {
        const c = client(10_000);
        return { exit: 0, json: { ...(await c.health()), url: c.baseUrl } };
      }
    }
  } catch (err) {
    return failed(err);
  }
}

/** `name` or `namespace/name` among the discovered pods. */
export function findPod(pods: Pod[], ref: string): Pod | Outcome {
  const [ns, name] = ref.includes("/") ? (ref.split("/", 2) as [string, string]) : [undefined, ref];
  const matches = pods.filter((p) => p.name === name && (ns === undefined || p.namespace === ns));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0)
    return {
      exit: 1,
      error: {
        code: "pod_not_found",
        message: `no orchestrator pod ${ref} (${pods.length} found: ${pods.map((p) => `${p.namespace}/${p.name}`).join(", ") || "none"})`,
      },
    };
  return {
    exit: 2,
    error: { code: "pod_ambiguous", message: `pod ${ref} is in several namespaces (${matches.map((p) => p.namespace).join(", ")}): pass --pod NAMESPACE/NAME` },
  };
}

/** How long kubectl exec may take: a turn or a waited job runs up to the job timeout (3600 s). */
const POD_TIMEOUT_MS: Record<PodAction, number> = { chat: 3_700_000, job: 3_700_000, sync: 660_000, health: 60_000 };

/** The argv that runs the action inside the pod. */
export function podArgv(pod: Pod, action: PodAction, input: ActionInput): string[] {
  return [
    "exec",
    "-n",
    pod.namespace,
    pod.name,
    "-c",
    pod.container,
    "--",
    "service-cli",
    "agents",
    "--headless",
    action,
    "--no-k8s",
    ...(action === "chat" ? ["--message", input.message!, ...(input.conversationId ? ["--conversation-id", input.conversationId] : [])] : []),
    ...(action === "job" ? ["--task", input.task!, ...(input.repo ? ["--repo", input.repo] : []), ...(input.wait ? [] : ["--no-wait"])] : []),
  ];
}

export async function podAction(backend: Backend, ref: string, action: PodAction, input: ActionInput, known?: Pod[]): Promise<Outcome> {
  let pods: Pod[];
  try {
    pods = known ?? (await discoverPods(backend));
  } catch (err) {
    if (err instanceof KubectlError) return { exit: 1, error: { code: "kubectl_failed", message: err.message } };
    throw err;
  }
  const pod = findPod(pods, ref);
  if ("exit" in pod) return pod;
  const r = await kubectl(podArgv(pod, action, input), { timeoutMs: POD_TIMEOUT_MS[action] });
  const parse = (text: string): unknown => {
    try {
      return text.trim() ? JSON.parse(text) : undefined;
    } catch {
      return undefined;
    }
  };
  const json = parse(r.stdout);
  const err = (parse(r.stderr) as { error?: Outcome["error"] } | undefined)?.error;
  if (json === undefined && !err) {
    const why = r.stderr.trim().split("\n").pop() || r.stdout.trim().split("\n").pop() || `exit ${r.code}`;
    return {
      exit: r.code === 0 ? 1 : r.code === 2 ? 2 : 1,
      error: { code: "kubectl_failed", message: `kubectl exec into ${pod.namespace}/${pod.name} failed: ${why}` },
    };
  }
  return { exit: r.code, ...(json !== undefined ? { json } : {}), ...(err ? { error: err } : {}) };
}
