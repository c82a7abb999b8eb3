// Everything the agent-mode routes need, built once at start-up from the config and the
// key-value store the runtime already opened: the loaded agent package, the session and
// visibility stores (Redis when the store is Redis, with their ~/.service files), and the chat
// service that runs turns. close() stops running turns on shutdown.
import type { KeyValueStore } from "../../common/kv/store";
import { log } from "../../common/logger";
import { DEFAULT_KEEP_ALIVE_MS } from "../chat/completion-stream";
import { ResponseLinks } from "../chat/responses";
import { ChatService } from "../chat/service";
import { createSessionStore } from "../chat/sessions";
import { createVisibilityStore } from "../chat/visibility";
import type { OrchestratorConfig } from "../config";
import { runHooksInit } from "../hooks-package/hooks-package";
import { openEventRelay } from "../relay/open";
import type { EventRelay } from "../relay/relay";
import { gitHead } from "./git-head";
import { type AgentMode, loadAgentMode } from "./load";

const logger = log("agent-mode");

export interface AgentModeDeps {
  agent: AgentMode;
  chat: ChatService;
  /** Takes up the hub again without a restart: package copied, runners re-run, system prompt reloaded. */
  reload?: () => Promise<void>;
  /** Where non-streaming turns' events go for GET /v1/relay/{correlation_id}. */
  relay?: EventRelay;
  /** The Responses API's response id → conversation map. */
  responseLinks: ResponseLinks;
  /** SERVICE_CONV_HASH_FALLBACK. */
  hashFallback: boolean;
  /** SSE keep-alive comment interval while the agent is silent. */
  keepAliveMs: number;
  close(): Promise<void>;
}

export interface AgentModeOptions {
  /** What agents (and runners) inherit; default process.env. Read at every spawn. */
  env?: Record<string, string | undefined>;
  /** An agent loaded already (tests, or a caller that loaded it itself); else loadAgentMode(config). */
  agent?: AgentMode;
  keepAliveMs?: number;
  /** Between SIGTERM and SIGKILL when a turn is cancelled (default 5 s). */
  killGraceMs?: number;
}

/** undefined when the config does not ask for agent mode; throws (naming the file) on a broken hub or package. */
export async function createAgentModeDeps(
  config: OrchestratorConfig,
  kv: KeyValueStore | undefined,
  opts: AgentModeOptions = {},
): Promise<AgentModeDeps | undefined> {
  const env = opts.env ?? process.env;
  const agent = opts.agent ?? (await loadAgentMode(config, { env }));
  if (!agent) return undefined;
  const chatAgent = {
    agentId: agent.agentId,
    model: agent.manifest.model,
    maxTurns: agent.manifest.max_turns,
    permissionMode: agent.manifest.permission_mode,
    packageDir: agent.packageDir,
    systemPrompt: agent.systemPrompt,
  };
  let mcpCategories = agent.manifest.mcp_categories;
  let loadedHead = await gitHead(agent.hubDir);
  let reloading: Promise<void> | undefined;
  async function reload(): Promise<void> {
    const head = await gitHead(agent!.hubDir);
    const next = await loadAgentMode(config, { env });
    loadedHead = head;
    if (!next) return;
    Object.assign(chatAgent, {
      model: next.manifest.model,
      maxTurns: next.manifest.max_turns,
      permissionMode: next.manifest.permission_mode,
      packageDir: next.packageDir,
      systemPrompt: next.systemPrompt,
    });
    mcpCategories = next.manifest.mcp_categories;
  }
  /** A hub moved on disk behind the service's back (`service-cli hooks sync`) is taken up before the next turn. */
  async function takeUpMovedHub(): Promise<void> {
    const head = await gitHead(agent!.hubDir);
    if (!head || !loadedHead || head === loadedHead) return;
    reloading ??= reload()
      .then(() => logger.info(`hub moved to ${head.slice(0, 12)}: agent package reloaded (copied, runners re-run, system prompt read)`))
      .catch((err) => {
        loadedHead = head; // not again every turn: the next sync or restart tries again
        logger.error(`hub moved to ${head.slice(0, 12)} but the reload failed; the agent keeps its previous package: ${(err as Error).message}`);
      })
      .finally(() => (reloading = undefined));
    await reloading;
  }
  const chat = new ChatService({
    agent: chatAgent,
    // spec: "in agent mode the MCP whitelist render reruns hooks init before every completion".
    beforeTurn: async () => {
      await takeUpMovedHub();
      await runHooksInit(config, { mcpCategories, target: chatAgent.packageDir, env });
    },
    config,
    sessions: createSessionStore({ kv, stateDir: config.stateDir, ttlSeconds: config.sessionTtl }),
    visibility: createVisibilityStore({ kv, stateDir: config.stateDir, defaults: { live_text: config.streamText === "live" } }),
    env,
    killGraceMs: opts.killGraceMs,
  });
  // A Redis not answering at start-up (the job store runs on files meanwhile) leaves the relay on files too.
  const relay = await openEventRelay(config, kv?.kind === "redis" && (await kv.ping()));
  return {
    agent,
    chat,
    relay,
    reload,
    responseLinks: new ResponseLinks(
      createSessionStore({ kv, stateDir: config.stateDir, ttlSeconds: config.sessionTtl, fileName: "response_links.json" }),
      agent.agentId,
    ),
    hashFallback: config.convHashFallback,
    keepAliveMs: opts.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS,
    async close() {
      await chat.close();
      await relay.close();
    },
  };
}
