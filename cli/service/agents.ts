// service-cli agents: browse local agents (from the agent hub checkout) and, with the Kubernetes
// backend on, the orchestrator pods; chat with one, see its health, submit a job, sync its repos.
// Interactive (a terminal UI) by default; `--headless <action>` for scripts (JSON on stdout,
// errors on stderr). kubectl is only run when the backend is on (backend.ts has the precedence).
import { existsSync } from "node:fs";
import { defineCommand } from "citty";
import { loadOrchestratorConfig } from "../../src/orchestrator/config";
import { usage } from "../_errors";
import { home } from "./_context";
import { type Backend, BackendSettingError, readState, resolveBackend, statePath } from "./agents/backend";
import { hubDir } from "./agents/discovery";
import { ACTIONS, type Action, emit, headless } from "./agents/headless";

export default defineCommand({
  meta: { name: "agents", description: "Browse and talk to local agents and orchestrator pods (TUI, or --headless)" },
  args: {
    action: { type: "positional", required: false, description: `headless action: ${ACTIONS.join(", ")} (default list)` },
    headless: { type: "boolean", description: "no TUI: JSON on stdout, errors on stderr" },
    k8s: { type: "boolean", description: "use the Kubernetes backend (--no-k8s: never; wins over everything)" },
    namespace: { type: "string", description: "namespaces to look in, comma-separated (implies --k8s)" },
    "agentihub-dir": { type: "string", description: "the agent hub checkout (default SERVICE_HUB_PATH, else the service's clone of SERVICE_HUB_URL)" },
    pod: { type: "string", description: "chat/job/sync/health: the pod (NAME or NAMESPACE/NAME); without it, the local service" },
    agent: { type: "string", description: "local: the local agent's name" },
    message: { type: "string", description: "chat: the message" },
    "conversation-id": { type: "string", description: "chat: continue this conversation" },
    task: { type: "string", description: "job: the task" },
    repo: { type: "string", description: "job: the repository URL" },
    wait: { type: "boolean", description: "job: wait for the job to finish (default; --no-wait returns the queued job)" },
  },
  async run({ args }) {
    const a = args as Record<string, unknown>;
    // citty reads --no-x as x=false.
    const k8s = a["no-k8s"] === true || a.k8s === false ? false : a.k8s === true ? true : undefined;
    const wait = !(a["no-wait"] === true || a.wait === false);
    const action = (args.action ?? "list") as Action;
    const invalid = (message: string): never => (args.headless ? emit({ exit: 2, error: { code: "invalid_input", message } }) : usage(message));
    if (!(ACTIONS as readonly string[]).includes(action)) invalid(`unknown action ${JSON.stringify(action)}: one of ${ACTIONS.join(", ")}`);
    if (args.action !== undefined && !args.headless) invalid(`actions run with --headless (service-cli agents --headless ${action})`);

    let backend: Backend;
    let hub: string | null;
    try {
      backend = resolveBackend({ k8s, namespace: args.namespace }, process.env, readState(statePath(home())));
      const config = loadOrchestratorConfig(process.env, home());
      hub = hubDir(args["agentihub-dir"], config);
    } catch (err) {
      if (err instanceof BackendSettingError || (err as Error).name === "ConfigError") return invalid((err as Error).message);
      throw err;
    }
    if (hub && args["agentihub-dir"] && !existsSync(hub)) invalid(`--agentihub-dir ${args["agentihub-dir"]}: no such directory`);
    if (args.headless) {
      emit(
        await headless({
          action,
          backend,
          hub,
          pod: args.pod,
          agent: args.agent,
          message: args.message,
          conversationId: args["conversation-id"],
          task: args.task,
          repo: args.repo,
          wait,
        }),
      );
    }
    if (!process.stdin.isTTY || !process.stdout.isTTY)
      invalid("the agents TUI needs a terminal; use --headless for scripts (service-cli agents --headless list)");
    const { runTui } = await import("./agents/tui");
    return await runTui({ backend, hub, statePath: statePath(home()) });
  },
});
