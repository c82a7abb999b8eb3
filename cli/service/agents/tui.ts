// The agents TUI: a numbered list of orchestrator pods (Kubernetes backend on) and local agents
// (the hub checkout); pick one to chat with it, see its health, and for pods submit a job, sync
// its repositories or read its logs. `k` turns the Kubernetes backend on or off (saved in
// ~/.service/state.json), `r` refreshes, `q` quits. Local agents are talked to at the service
// this machine's settings point at (SERVICE_HOST/SERVICE_PORT, where `service-cli agent --run`
// publishes the agent container); pods through kubectl.
import { readFileSync } from "node:fs";
import type { CompletionResult, Health, Job, SyncResult } from "../../../src/orchestrator/client";
import { connection } from "../_context";
import { localAction, type Outcome, podAction } from "./actions";
import { type Backend, saveBackend } from "./backend";
import { discoverPods, type LocalAgentDetail, localAgents, type Pod } from "./discovery";
import { kubectl } from "./kubectl";
import { ANSI, Terminal } from "./terminal";

type Item = { kind: "pod"; pod: Pod } | { kind: "local"; agent: LocalAgentDetail };

export interface TuiOptions {
  backend: Backend;
  hub: string | null;
  statePath: string;
}

const RULE = `  ${ANSI.dim("─".repeat(64))}`;

export async function runTui(opts: TuiOptions): Promise<number> {
  const t = new Terminal();
  t.start();
  try {
    return await new Tui(t, opts).main();
  } finally {
    t.stop();
  }
}

class Tui {
  private backend: Backend;
  private pods: Pod[] = [];
  private podError?: string;
  private agents: LocalAgentDetail[] = [];

  constructor(
    private readonly t: Terminal,
    private readonly opts: TuiOptions,
  ) {
    this.backend = opts.backend;
  }

  private async refresh(): Promise<void> {
    this.agents = localAgents(this.opts.hub);
    this.pods = [];
    this.podError = undefined;
    if (!this.backend.enabled) return;
    try {
      this.pods = await this.t.busy("asking kubectl for pods", discoverPods(this.backend));
    } catch (err) {
      this.podError = (err as Error).message;
    }
  }

  private items(): Item[] {
    return [...this.pods.map((pod) => ({ kind: "pod" as const, pod })), ...this.agents.map((agent) => ({ kind: "local" as const, agent }))];
  }

  async main(): Promise<number> {
    await this.refresh();
    for (;;) {
      this.renderList();
      const input = await this.t.readLine(`${ANSI.green("›")} `);
      if (input === null) return 0;
      const cmd = input.trim().toLowerCase();
      if (cmd === "q") return 0;
      if (cmd === "r") await this.refresh();
      else if (cmd === "k") {
        this.backend = { ...this.backend, enabled: !this.backend.enabled, from: "state" };
        await saveBackend(this.opts.statePath, this.backend);
        await this.refresh();
      } else if (/^\d+$/.test(cmd)) {
        const item = this.items()[Number(cmd) - 1];
        if (item && (await (item.kind === "pod" ? this.podMenu(item.pod) : this.localMenu(item.agent))) === "quit") return 0;
      }
    }
  }

  private renderList(): void {
    const { t, backend } = this;
    t.clear();
    t.line(ANSI.bold("  brain-stack agents"));
    t.line(
      `  Kubernetes: ${backend.enabled ? ANSI.green("on") : ANSI.dim("off")}${backend.enabled ? ` (${backend.namespaces.length > 0 ? `namespaces ${backend.namespaces.join(", ")}` : "current namespace"})` : ""}` +
        `   hub: ${this.opts.hub ?? ANSI.dim("none (--agentihub-dir or SERVICE_HUB_PATH)")}`,
    );
    t.line(RULE);
    const items = this.items();
    if (this.podError) t.line(`  ${ANSI.red(this.podError)}`);
    if (items.length === 0) t.line(`  ${ANSI.dim("no agents found")}`);
    items.forEach((item, i) => {
      const n = ANSI.green(`[${i + 1}]`.padEnd(5));
      if (item.kind === "pod") {
        const p = item.pod;
        const kind = p.agent ? `agent ${p.agent}` : "orchestrator";
        const phase = p.phase === "Running" ? ANSI.green(p.phase) : ANSI.yellow(p.phase);
        t.line(
          `  ${n}${p.name.padEnd(32)} ${kind.padEnd(24)} ${phase}${p.ready ? "" : ANSI.dim(" (not ready)")}  ${ANSI.yellow("K8S")} ${ANSI.dim(p.namespace)}`,
        );
      } else {
        const a = item.agent;
        t.line(`  ${n}${a.name.padEnd(32)} ${(a.model ?? "").padEnd(24)} ${ANSI.dim(a.description.slice(0, 40))}  ${ANSI.cyan("LOCAL")}`);
      }
    });
    t.line(RULE);
    t.line(ANSI.dim("  1-N open · r refresh · k Kubernetes on/off · q quit"));
  }

  private header(title: string, sub: string): void {
    this.t.clear();
    this.t.line(`  ${ANSI.green("▶")} ${ANSI.bold(title)}  ${sub}`);
    this.t.line(RULE);
  }

  private async pause(): Promise<"back" | "quit"> {
    return (await this.t.readLine(ANSI.dim("  (Enter to go back) "))) === null ? "quit" : "back";
  }

  private async localMenu(agent: LocalAgentDetail): Promise<"back" | "quit"> {
    const url = connection().baseUrl;
    for (;;) {
      this.header(agent.name, `${ANSI.cyan("LOCAL")} ${ANSI.dim(agent.description)}`);
      this.t.line(`  service: ${url} ${ANSI.dim("(SERVICE_HOST/SERVICE_PORT; `service-cli agent --run` starts it there)")}`);
      this.t.line();
      this.t.line(`  ${ANSI.green("[1]")} Chat       ${ANSI.dim("POST /completions")}`);
      this.t.line(`  ${ANSI.green("[2]")} Health     ${ANSI.dim("GET /health")}`);
      this.t.line(`  ${ANSI.green("[3]")} agent.yml  ${ANSI.dim(agent.agent_yml)}`);
      this.t.line(`  ${ANSI.dim("[b] back  [q] quit")}`);
      const choice = await this.t.readLine(`${ANSI.green("›")} `);
      if (choice === null || choice.trim() === "q") return "quit";
      const c = choice.trim();
      if (c === "b" || c === "") return "back";
      if (c === "1" && (await this.chat(agent.name, (input) => localAction("chat", input))) === "quit") return "quit";
      if (c === "2" && (await this.health(agent.name, localAction("health", { wait: true }))) === "quit") return "quit";
      if (c === "3") {
        this.t.line();
        for (const l of readFileSync(agent.agent_yml, "utf8").trimEnd().split("\n")) this.t.line(`  ${ANSI.dim(l)}`);
        if ((await this.pause()) === "quit") return "quit";
      }
    }
  }

  private async podMenu(pod: Pod): Promise<"back" | "quit"> {
    const ref = `${pod.namespace}/${pod.name}`;
    for (;;) {
      this.header(pod.name, `${ANSI.yellow("K8S")} ${ANSI.dim(`${pod.namespace} · ${pod.agent ? `agent ${pod.agent}` : "orchestrator"} · ${pod.phase}`)}`);
      this.t.line(`  ${ANSI.green("[1]")} ${pod.agent ? "Chat        " : "Submit job  "}${ANSI.dim(pod.agent ? "POST /completions" : "POST /jobs")}`);
      this.t.line(`  ${ANSI.green("[2]")} Health      ${ANSI.dim("GET /health")}`);
      this.t.line(`  ${ANSI.green("[3]")} Sync repos  ${ANSI.dim("POST /admin/sync")}`);
      this.t.line(`  ${ANSI.green("[4]")} Logs        ${ANSI.dim("kubectl logs --tail 50")}`);
      this.t.line(`  ${ANSI.dim("[b] back  [q] quit")}`);
      const choice = await this.t.readLine(`${ANSI.green("›")} `);
      if (choice === null || choice.trim() === "q") return "quit";
      const c = choice.trim();
      let next: "back" | "quit" | undefined;
      if (c === "b" || c === "") return "back";
      if (c === "1") next = pod.agent ? await this.chat(pod.name, (input) => podAction(this.backend, ref, "chat", input, this.pods)) : await this.job(ref);
      if (c === "2") next = await this.health(pod.name, podAction(this.backend, ref, "health", { wait: true }, this.pods));
      if (c === "3") next = await this.sync(ref);
      if (c === "4") next = await this.logs(pod);
      if (next === "quit") return "quit";
    }
  }

  private async chat(name: string, send: (input: { message: string; conversationId?: string; wait: boolean }) => Promise<Outcome>): Promise<"back" | "quit"> {
    this.header(`chat with ${name}`, ANSI.dim("an empty line goes back"));
    let conversationId: string | undefined;
    for (;;) {
      const message = await this.t.readLine(`  ${ANSI.bold("you")} › `);
      if (message === null) return "quit";
      if (message.trim() === "") return "back";
      const out = await this.t.busy(`  ${name} is thinking`, send({ message, conversationId, wait: true }));
      if (out.error) {
        this.t.line(`  ${ANSI.red(`error: ${out.error.message}`)}`);
        continue;
      }
      const reply = out.json as CompletionResult;
      conversationId = reply.conversation_id;
      const [first, ...rest] = reply.reply.split("\n");
      this.t.line(`  ${ANSI.cyan(name)} › ${first}`);
      for (const l of rest) this.t.line(`    ${l}`);
    }
  }

  private async health(name: string, call: Promise<Outcome>): Promise<"back" | "quit"> {
    const out = await this.t.busy(`  checking ${name}`, call);
    this.t.line();
    if (out.error) this.t.line(`  ${ANSI.red(`error: ${out.error.message}`)}`);
    else for (const [k, v] of Object.entries(out.json as Health & { url: string })) this.t.line(`  ${`${k}:`.padEnd(10)}${v}`);
    return this.pause();
  }

  private async job(ref: string): Promise<"back" | "quit"> {
    const task = await this.t.readLine(`  task › `);
    if (task === null) return "quit";
    if (!task.trim()) return "back";
    const repo = await this.t.readLine(`  repository URL ${ANSI.dim("(empty: none)")} › `);
    if (repo === null) return "quit";
    const out = await this.t.busy("  submitting", podAction(this.backend, ref, "job", { task, repo: repo.trim() || undefined, wait: false }, this.pods));
    if (out.error) this.t.line(`  ${ANSI.red(`error: ${out.error.message}`)}`);
    else this.t.line(`  ${ANSI.green("submitted")} ${(out.json as Job).id} (${(out.json as Job).status})`);
    return this.pause();
  }

  private async sync(ref: string): Promise<"back" | "quit"> {
    const out = await this.t.busy("  syncing", podAction(this.backend, ref, "sync", { wait: true }, this.pods));
    if (out.error) this.t.line(`  ${ANSI.red(`error: ${out.error.message}`)}`);
    else for (const r of (out.json as SyncResult).results) this.t.line(`  ${r.target.padEnd(12)} ${r.status.padEnd(8)} ${ANSI.dim(r.detail)}`);
    return this.pause();
  }

  private async logs(pod: Pod): Promise<"back" | "quit"> {
    const r = await this.t.busy("  reading logs", kubectl(["logs", "-n", pod.namespace, pod.name, "-c", pod.container, "--tail", "50"]));
    this.t.line();
    for (const l of (r.code === 0 ? r.stdout : r.stderr).trimEnd().split("\n")) this.t.line(`  ${r.code === 0 ? l : ANSI.red(l)}`);
    return this.pause();
  }
}
