// service-cli agents, the compiled binary: the headless mode's JSON shapes and exit codes, the
// Kubernetes backend's precedence (flag → env → ~/.service/state.json → off) with the fixture
// `kubectl` recording its argv, pod actions through `kubectl exec` into a "pod" played by the
// real orchestrator (jobs) and an agent-mode server (chat), and the TUI driven through tmux.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Job } from "../src/orchestrator/jobs/schema";
import { AGENT, MANIFEST, makeHub } from "./support/agent-mode";
import { compiledClis, fixturePath } from "./support/cli";
import { tempDir } from "./support/main-process";
import { type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { envFor, svc, tmuxBinary, tmuxSession } from "./support/service-cli";

// Each test starts processes (servers, the compiled CLI): more room than bun's 5 s default.
setDefaultTimeout(30_000);

let cliDir = "";
let hub = "";
let podsFile = "";
let orchestrator: Orchestrator;
/** The orchestrator in agent mode (SERVICE_HUB_URL + HUB_AGENT), the fixture agent answering. */
let agentServer: Orchestrator;

const POD_AGENT = "deploy-helper-0";
const POD_JOBS = "orchestrator-7f9c-abcde";

/** kubectl get pods -o json items: an agent-mode pod, an orchestrator pod, and pods that are not ours. */
function podItems() {
  const pod = (name: string, namespace: string, container: string, env: Array<Record<string, unknown>>, phase = "Running") => ({
    metadata: { name, namespace },
    spec: { containers: [{ name: container, image: "ghcr.io/brain-stack/brain-stack:0.1.0", env }] },
    status: { phase, containerStatuses: [{ name: container, ready: phase === "Running" }] },
  });
  return {
    items: [
      pod(POD_AGENT, "agents", "agent", [
        { name: "SERVICE_PORT", value: "8200" },
        { name: "HUB_AGENT", value: AGENT },
      ]),
      pod(POD_JOBS, "jobs", "orchestrator", [
        { name: "SERVICE_PORT", value: "8200" },
        { name: "SERVICE_POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
      ]),
      pod("redis-0", "jobs", "redis", [{ name: "REDIS_ARGS", value: "--appendonly yes" }]),
      pod("orchestrator-default", "default", "orchestrator", [{ name: "SERVICE_PORT", value: "8300" }], "Pending"),
    ],
  };
}

const EXPECTED_PODS = {
  agent: { name: POD_AGENT, namespace: "agents", phase: "Running", ready: true, container: "agent", port: 8200, agent: AGENT, mode: "agent" },
  jobs: { name: POD_JOBS, namespace: "jobs", phase: "Running", ready: true, container: "orchestrator", port: 8200, agent: null, mode: "orchestrator" },
  default: {
    name: "orchestrator-default",
    namespace: "default",
    phase: "Pending",
    ready: false,
    container: "orchestrator",
    port: 8300,
    agent: null,
    mode: "orchestrator",
  },
};

interface Setup {
  home: string;
  record: string;
  env: Record<string, string>;
}

/** A HOME, the fixture kubectl (and the compiled service-cli, for `kubectl exec … service-cli`) on PATH. */
function setup(extra: Record<string, string> = {}, target: { url: string } = orchestrator): Setup {
  const home = tempDir("agents-home");
  const record = join(tempDir("kubectl-record"), "argv.jsonl");
  return {
    home,
    record,
    env: {
      ...envFor(target),
      HOME: home,
      PATH: `${fixturePath({ kubectl: "fake-kubectl" }).split(":")[0]}:${cliDir}:${process.env.PATH}`,
      FAKE_KUBECTL_RECORD: record,
      FAKE_KUBECTL_PODS: podsFile,
      SERVICE_HUB_PATH: hub,
      ...extra,
    },
  };
}

const kubectlCalls = (s: Setup): string[][] =>
  existsSync(s.record)
    ? readFileSync(s.record, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
const headless = (s: Setup, ...args: string[]) => svc(["agents", "--headless", ...args], s.env);
const writeState = (s: Setup, state: unknown) => {
  mkdirSync(join(s.home, ".service"), { recursive: true });
  writeFileSync(join(s.home, ".service", "state.json"), JSON.stringify(state));
};
const listed = async (s: Setup, ...args: string[]) => {
  const r = await headless(s, "list", ...args);
  if (r.code !== 0) throw new Error(`agents --headless list ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as { k8s: { enabled: boolean; namespaces: string[] }; agentihub: string | null; pods: unknown[]; local_agents: unknown[] };
};
const errorOf = (stderr: string) => (JSON.parse(stderr.trim().split("\n").pop()!) as { error: { code: string; message: string } }).error;

beforeAll(async () => {
  cliDir = await compiledClis();
  const root = tempDir("agents-hub");
  hub = join(root, "hub");
  const agent = (name: string, yml: string) => {
    mkdirSync(join(hub, "agents", name, "package"), { recursive: true });
    writeFileSync(join(hub, "agents", name, "agent.yml"), yml);
  };
  agent(AGENT, MANIFEST);
  agent(
    "reviewer",
    "name: reviewer\nmodel: haiku\nmax_turns: 5\npermission_mode: plan\ndescription: Reviews pull requests\ncapabilities: [review, summarize]\n",
  );
  agent("broken", "name: [unclosed\n");
  podsFile = join(root, "pods.json");
  writeFileSync(podsFile, JSON.stringify(podItems()));

  const agentHome = tempDir("agent-mode-home");
  const hubUrl = await makeHub(join(agentHome, "hub-repo"));
  const agentMode = {
    SERVICE_HUB_URL: hubUrl,
    HUB_AGENT: AGENT,
    SERVICE_CLONE_ROOT: join(agentHome, "clones"),
    SERVICE_PACKAGE_DIR: join(agentHome, "package"),
  };
  [orchestrator, agentServer] = await Promise.all([startOrchestrator(), startOrchestrator({ env: agentMode })]);
}, 120_000);

afterAll(async () => {
  await Promise.all([orchestrator?.stop(), agentServer?.stop()]);
});

describe("agents --headless list", () => {
  it("returns exactly {k8s:{enabled,namespaces}, agentihub, pods, local_agents[{name, package_path, description, capabilities}]}", async () => {
    const s = setup();
    const r = await headless(s, "list");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      k8s: { enabled: false, namespaces: [] },
      agentihub: hub,
      pods: [],
      local_agents: [
        {
          name: AGENT,
          package_path: join(hub, "agents", AGENT, "package"),
          description: "answers questions about deployments",
          capabilities: ["knowledge", "deploy"],
        },
        {
          name: "reviewer",
          package_path: join(hub, "agents", "reviewer", "package"),
          description: "Reviews pull requests",
          capabilities: ["review", "summarize"],
        },
      ],
    });
    // The broken agent.yml is reported on stderr, as JSON.
    expect(JSON.parse(r.stderr.trim()).warning).toContain(join(hub, "agents", "broken", "agent.yml"));
  });

  it("is the default action; --agentihub-dir names the hub; no hub is null and no local agents", async () => {
    const s = setup({ SERVICE_HUB_PATH: "" });
    const none = await listed(s);
    expect(none.agentihub).toBeNull();
    expect(none.local_agents).toEqual([]);
    const r = await svc(["agents", "--headless", "--agentihub-dir", hub], s.env);
    expect(JSON.parse(r.stdout).agentihub).toBe(hub);
  });

  it("never runs kubectl while the backend is off", async () => {
    const s = setup();
    await listed(s);
    expect(kubectlCalls(s)).toEqual([]);
  });

  it("with the backend on lists the orchestrator pods of each namespace (kubectl get pods -n NS -o json)", async () => {
    const s = setup();
    const out = await listed(s, "--namespace", "agents,jobs");
    expect(out.k8s).toEqual({ enabled: true, namespaces: ["agents", "jobs"] });
    expect(out.pods).toEqual([EXPECTED_PODS.agent, EXPECTED_PODS.jobs]);
    expect(kubectlCalls(s)).toEqual([
      ["get", "pods", "-n", "agents", "-o", "json"],
      ["get", "pods", "-n", "jobs", "-o", "json"],
    ]);
  });

  it("without namespaces asks kubectl's current one", async () => {
    const s = setup();
    const out = await listed(s, "--k8s");
    expect(out.k8s).toEqual({ enabled: true, namespaces: [] });
    expect(out.pods).toEqual([EXPECTED_PODS.default]);
    expect(kubectlCalls(s)).toEqual([["get", "pods", "-o", "json"]]);
  });

  it("exits 1 with the error on stderr when kubectl fails", async () => {
    const s = setup({ FAKE_KUBECTL_FAIL: "get pods" });
    const r = await headless(s, "list", "--k8s");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(errorOf(r.stderr)).toMatchObject({ code: "kubectl_failed" });
  });
});

describe("backend precedence: flag, then env, then ~/.service/state.json, then off", () => {
  const k8sOf = async (s: Setup, ...args: string[]) => (await listed(s, ...args)).k8s;

  it("is off by default", async () => {
    expect(await k8sOf(setup())).toEqual({ enabled: false, namespaces: [] });
  });

  it("env: SERVICE_K8S_ENABLED turns it on; SERVICE_K8S_NAMESPACES alone does not", async () => {
    expect(await k8sOf(setup({ SERVICE_K8S_ENABLED: "true", SERVICE_K8S_NAMESPACES: "jobs" }))).toEqual({ enabled: true, namespaces: ["jobs"] });
    const nsOnly = setup({ SERVICE_K8S_NAMESPACES: "jobs,agents" });
    expect(await k8sOf(nsOnly)).toEqual({ enabled: false, namespaces: ["jobs", "agents"] });
    expect(kubectlCalls(nsOnly)).toEqual([]);
  });

  it("state file: enabled turns it on; its namespaces alone do not", async () => {
    const on = setup();
    writeState(on, { k8s: { enabled: true, namespaces: ["agents"] } });
    expect(await k8sOf(on)).toEqual({ enabled: true, namespaces: ["agents"] });
    const nsOnly = setup();
    writeState(nsOnly, { k8s: { namespaces: ["agents"] } });
    expect(await k8sOf(nsOnly)).toEqual({ enabled: false, namespaces: ["agents"] });
  });

  it("env wins over the state file", async () => {
    const s = setup({ SERVICE_K8S_ENABLED: "false" });
    writeState(s, { k8s: { enabled: true } });
    expect((await k8sOf(s)).enabled).toBe(false);
    const t = setup({ SERVICE_K8S_ENABLED: "1", SERVICE_K8S_NAMESPACES: "jobs" });
    writeState(t, { k8s: { enabled: false, namespaces: ["agents"] } });
    expect(await k8sOf(t)).toEqual({ enabled: true, namespaces: ["jobs"] });
  });

  it("a flag wins over env and state; --namespace implies it and replaces their namespaces", async () => {
    const s = setup({ SERVICE_K8S_ENABLED: "false", SERVICE_K8S_NAMESPACES: "jobs" });
    writeState(s, { k8s: { enabled: false } });
    expect(await k8sOf(s, "--k8s")).toEqual({ enabled: true, namespaces: ["jobs"] });
    expect(await k8sOf(s, "--namespace", "agents")).toEqual({ enabled: true, namespaces: ["agents"] });
  });

  it("--no-k8s always wins, even over --namespace", async () => {
    const s = setup({ SERVICE_K8S_ENABLED: "true" });
    writeState(s, { k8s: { enabled: true } });
    expect(await k8sOf(s, "--no-k8s", "--namespace", "agents")).toEqual({ enabled: false, namespaces: ["agents"] });
    expect(kubectlCalls(s)).toEqual([]);
  });

  it("a SERVICE_K8S_ENABLED that is not a boolean, or a bad namespace, is invalid input: exit 2", async () => {
    const r = await headless(setup({ SERVICE_K8S_ENABLED: "maybe" }), "list");
    expect(r.code).toBe(2);
    expect(errorOf(r.stderr)).toMatchObject({ code: "invalid_input" });
    expect((await headless(setup(), "list", "--namespace", "Not_A_Namespace")).code).toBe(2);
  });
});

describe("pod actions", () => {
  it("exit 2 when the backend is off, without running kubectl", async () => {
    const s = setup({ SERVICE_K8S_NAMESPACES: "jobs" });
    for (const args of [["chat", "--message", "hi"], ["job", "--task", "x"], ["sync"], ["health"]]) {
      const r = await headless(s, ...args, "--pod", POD_JOBS);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(errorOf(r.stderr).code).toBe("backend_off");
    }
    expect(kubectlCalls(s)).toEqual([]);
  });

  it("job --pod runs the job inside the pod (kubectl exec … service-cli agents --headless job) and prints the finished job", async () => {
    const s = setup();
    const r = await headless(s, "job", "--namespace", "jobs", "--pod", POD_JOBS, "--task", "Explain the pods", "--repo", "");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout) as Job).toMatchObject({ task: "Explain the pods", status: "succeeded" });
    expect(kubectlCalls(s)).toEqual([
      ["get", "pods", "-n", "jobs", "-o", "json"],
      ["exec", "-n", "jobs", POD_JOBS, "-c", "orchestrator", "--", "service-cli", "agents", "--headless", "job", "--no-k8s", "--task", "Explain the pods"],
    ]);
  });

  it("job --no-wait answers with the queued job; --pod NAMESPACE/NAME picks the namespace", async () => {
    const s = setup({ SERVICE_K8S_ENABLED: "true", SERVICE_K8S_NAMESPACES: "agents,jobs" });
    const r = await headless(s, "job", "--pod", `jobs/${POD_JOBS}`, "--task", "Explain later", "--repo", "https://example.com/acme/widgets.git", "--no-wait");
    expect(r.code).toBe(0);
    const job = JSON.parse(r.stdout) as Job;
    expect(job).toMatchObject({ status: "queued", repo_url: "https://example.com/acme/widgets.git" });
    expect(kubectlCalls(s).at(-1)).toEqual([
      "exec",
      "-n",
      "jobs",
      POD_JOBS,
      "-c",
      "orchestrator",
      "--",
      "service-cli",
      "agents",
      "--headless",
      "job",
      "--no-k8s",
      "--task",
      "Explain later",
      "--repo",
      "https://example.com/acme/widgets.git",
      "--no-wait",
    ]);
    await orchestrator.until(job.id, (j) => j.status !== "queued" && j.status !== "running");
  });

  it("health and sync --pod relay the pod's answers", async () => {
    const s = setup();
    const health = await headless(s, "health", "--k8s", "--namespace", "jobs", "--pod", POD_JOBS);
    expect(health.code).toBe(0);
    expect(JSON.parse(health.stdout)).toMatchObject({ status: "ok", service: "job-orchestrator" });
    const sync = await headless(s, "sync", "--namespace", "jobs", "--pod", POD_JOBS);
    expect(sync.code).toBe(0);
    expect((JSON.parse(sync.stdout) as { results: Array<{ target: string }> }).results.map((x) => x.target)).toEqual(["agentihooks", "bundle", "agentihub"]);
    expect(
      kubectlCalls(s)
        .filter((a) => a[0] === "exec")
        .map((a) => a.slice(7)),
    ).toEqual([
      ["service-cli", "agents", "--headless", "health", "--no-k8s"],
      ["service-cli", "agents", "--headless", "sync", "--no-k8s"],
    ]);
  });

  it("chat --pod talks to the agent-mode pod through POST /completions and carries the conversation on", async () => {
    const s = setup({}, agentServer);
    const first = await headless(s, "chat", "--namespace", "agents", "--pod", POD_AGENT, "--message", "How is the build?");
    expect(first.code).toBe(0);
    const reply = JSON.parse(first.stdout) as { reply: string; conversation_id: string; session_id: string };
    expect(reply.reply).toBe("Hello! The build passes on main.");
    const second = await headless(s, "chat", "--namespace", "agents", "--pod", POD_AGENT, "--message", "And now?", "--conversation-id", reply.conversation_id);
    expect(JSON.parse(second.stdout)).toMatchObject({ conversation_id: reply.conversation_id, session_id: reply.session_id });
    expect(kubectlCalls(s).filter((a) => a[0] === "exec")).toEqual([
      ["exec", "-n", "agents", POD_AGENT, "-c", "agent", "--", "service-cli", "agents", "--headless", "chat", "--no-k8s", "--message", "How is the build?"],
      [
        "exec",
        "-n",
        "agents",
        POD_AGENT,
        "-c",
        "agent",
        "--",
        "service-cli",
        "agents",
        "--headless",
        "chat",
        "--no-k8s",
        "--message",
        "And now?",
        "--conversation-id",
        reply.conversation_id,
      ],
    ]);
  });

  it("an unknown pod is exit 1; a name in two namespaces without one is exit 2", async () => {
    const s = setup();
    const missing = await headless(s, "health", "--namespace", "jobs", "--pod", "nope");
    expect(missing.code).toBe(1);
    expect(errorOf(missing.stderr).code).toBe("pod_not_found");
    const twice = join(tempDir("pods"), "pods.json");
    const items = podItems().items;
    writeFileSync(twice, JSON.stringify({ items: [...items, { ...items[1], metadata: { name: POD_JOBS, namespace: "agents" } }] }));
    const ambiguous = await headless(setup({ FAKE_KUBECTL_PODS: twice }), "health", "--namespace", "agents,jobs", "--pod", POD_JOBS);
    expect(ambiguous.code).toBe(2);
    expect(errorOf(ambiguous.stderr).code).toBe("pod_ambiguous");
  });
});

describe("actions without --pod: the service this machine points at", () => {
  it("chat sends POST /completions to SERVICE_HOST:SERVICE_PORT", async () => {
    const r = await headless(setup({}, agentServer), "chat", "--message", "Hello?");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ reply: "Hello! The build passes on main." });
  });

  it("health, job and sync answer from the orchestrator", async () => {
    const s = setup();
    expect(JSON.parse((await headless(s, "health")).stdout)).toMatchObject({ status: "ok", url: orchestrator.url });
    const job = await headless(s, "job", "--task", "Explain locally");
    expect(job.code).toBe(0);
    expect(JSON.parse(job.stdout)).toMatchObject({ status: "succeeded" });
    expect((await headless(s, "sync")).code).toBe(0);
  });

  it("a service that does not answer is exit 1 with {error:{code:unreachable}} on stderr", async () => {
    const r = await headless(setup({ SERVICE_PORT: "1" }), "health");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(errorOf(r.stderr).code).toBe("unreachable");
  });
});

describe("local and the flags each action needs", () => {
  it("local --agent prints the local agent with its agent.yml settings", async () => {
    const r = await headless(setup(), "local", "--agent", "reviewer");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      name: "reviewer",
      package_path: join(hub, "agents", "reviewer", "package"),
      description: "Reviews pull requests",
      capabilities: ["review", "summarize"],
      agent_yml: join(hub, "agents", "reviewer", "agent.yml"),
      model: "haiku",
      max_turns: 5,
      permission_mode: "plan",
      mcp_categories: [],
    });
  });

  it("an unknown local agent is exit 1", async () => {
    const r = await headless(setup(), "local", "--agent", "nobody");
    expect(r.code).toBe(1);
    expect(errorOf(r.stderr).code).toBe("agent_not_found");
  });

  it("a missing --agent, --message or --task, --no-wait off job, or an unknown action is exit 2", async () => {
    const s = setup();
    for (const args of [["local"], ["chat"], ["job"], ["chat", "--message", "hi", "--no-wait"], ["dance"]]) {
      const r = await headless(s, ...args);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(errorOf(r.stderr).code).toBe("invalid_input");
    }
  });

  it("an action without --headless, or the TUI without a terminal, is exit 2", async () => {
    const s = setup();
    expect((await svc(["agents", "list"], s.env)).code).toBe(2);
    const r = await svc(["agents"], s.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--headless");
  });
});

describe("the agents TUI (through tmux)", () => {
  it("lists pods and local agents, chats with a local agent, shows health, opens a pod's logs, toggles the backend, quits", async () => {
    const tmux = tmuxBinary();
    if (!tmux) return;
    const s = setup({ TERM: "xterm-256color" }, agentServer);
    const tui = tmuxSession(tmux, s.env, [join(cliDir, "service-cli"), "agents", "--namespace", "agents"]);
    const { screen, type, waitFor } = tui;
    try {
      await waitFor("brain-stack agents");
      await waitFor("deploy-helper-0");
      const list = screen();
      expect(list).toContain("Kubernetes: on (namespaces agents)");
      expect(list).toMatch(/\[1\]\s+deploy-helper-0\s+agent deploy-helper\s+Running/);
      expect(list).toMatch(/\[2\]\s+deploy-helper\s+sonnet/);
      expect(list).toMatch(/\[3\]\s+reviewer\s+haiku/);

      // The local agent: chat, then health.
      type("2", "Enter");
      await waitFor("[1] Chat");
      type("1", "Enter");
      await waitFor("chat with deploy-helper");
      type("How is the build?", "Enter");
      await waitFor("deploy-helper › Hello! The build passes on main.");
      type("Enter");
      await waitFor("[2] Health");
      type("2", "Enter");
      await waitFor("service:  job-orchestrator");
      expect(screen()).toMatch(/status:\s+ok/);
      type("Enter");
      type("b", "Enter");
      await waitFor("1-N open");

      // The pod: its logs through kubectl.
      type("1", "Enter");
      await waitFor("[4] Logs");
      type("4", "Enter");
      await waitFor("log line 3 of agents/deploy-helper-0");
      type("Enter");
      type("b", "Enter");
      await waitFor("1-N open");

      // k turns the backend off and saves it.
      type("k", "Enter");
      await waitFor("Kubernetes: off");
      expect(screen()).not.toContain("deploy-helper-0");
      expect(JSON.parse(readFileSync(join(s.home, ".service", "state.json"), "utf8"))).toEqual({ k8s: { enabled: false, namespaces: ["agents"] } });

      type("q", "Enter");
      await waitFor("EXITED:0");
      expect(kubectlCalls(s)).toContainEqual(["logs", "-n", "agents", "deploy-helper-0", "-c", "agent", "--tail", "50"]);
    } finally {
      tui.kill();
    }
  }, 60_000);
});
