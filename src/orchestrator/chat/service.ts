// One chat request in agent mode, whatever the surface (/v1/chat/completions streaming or not,
// /completions): slash tokens and the visibility config, conversation resolution, the busy
// rule, the session (--session-id on a first turn, --resume with only the last message later),
// the spawn, and the canonical events of the turn. Renders nothing: routes do.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { DomainError } from "../../common/domain-error";
import { log } from "../../common/logger";
import type { AgentArgs } from "../agent/argv";
import { buildAgentEnv } from "../agent/env";
import type { AgentOutcome } from "../agent/outcome";
import { type AgentRun, AgentSpawnError, startAgent } from "../agent/process";
import type { OrchestratorConfig } from "../config";
import { hookFailure, recallForTask, writeLoopSettings } from "../loop/job-loop";
import { telemetryEnv } from "../telemetry/otel-env";
import { transcriptPath } from "../telemetry/transcript";
import { clientTask, TASK_SYSTEM_PROMPT } from "./client-tasks";
import { type ChatMessage, firstTurnPrompt, messageText } from "./messages";
import { type Conversation, requestUser, resolveConversation } from "./resolution";
import type { SessionStore } from "./sessions";
import { applySlashTokens, parseSlashTokens } from "./slash-tokens";
import type { TurnEvent } from "./turn-events";
import { TurnLocks } from "./turn-locks";
import { TurnMapper } from "./turn-mapper";
import { userScope, type Visibility, type VisibilityStore } from "./visibility";

export type { ChatMessage } from "./messages";

const logger = log("chat");

/** Seconds a client is told to wait (Retry-After) when its conversation has a turn running. */
const BUSY_RETRY_AFTER_SECONDS = 5;
/** The agent's environment variable holding the non-streaming path's correlation id (hooks relay). */
export const CORRELATION_ENV = "SERVICE_CORRELATION_ID";

/** What a turn is spawned with: the agent package's identity. */
export interface ChatAgent {
  agentId: string;
  model: string;
  maxTurns: number;
  permissionMode: string;
  /** The agent's cwd. */
  packageDir: string;
  systemPrompt: string;
}

export type ChatConfig = Pick<
  OrchestratorConfig,
  | "claudeBinary"
  | "claudeTimeout"
  | "convHashFallback"
  | "modelOauthToken"
  | "modelAuthToken"
  | "modelBaseUrl"
  | "agentEnv"
  | "claudeHomeDir"
  | "home"
  | "claudeConfigDir"
  | "otelEnabled"
  | "otelEndpoint"
  | "otelProtocol"
  | "otelLogPrompts"
  | "otelLogToolDetails"
  | "tracingBasicAuth"
  | "podName"
  | "stateDir"
  | "taskModel"
> &
  // The loop (issue 16): set, turns run with brain-stack's hooks (loop/job-loop.ts).
  Partial<Pick<OrchestratorConfig, "routerUrl" | "routerToken" | "routerCli" | "recallMaxChars">>;

export interface ChatServiceDeps {
  agent: ChatAgent;
  config: ChatConfig;
  sessions: SessionStore;
  visibility: VisibilityStore;
  /** What the agent inherits (the service's secrets are removed); read at every spawn. */
  env: Record<string, string | undefined>;
  /** Between SIGTERM and SIGKILL when a turn is cancelled. */
  killGraceMs?: number;
  /** Runs before each turn's agent starts (the hooks package's MCP whitelist render); a failure fails the turn. */
  beforeTurn?: () => Promise<void>;
}

export interface ChatRequest {
  messages: ChatMessage[];
  metadata?: Record<string, unknown> | null;
  user?: string | null;
  /** Lower-case header name → value. */
  header(name: string): string | undefined;
  /** Set on the non-streaming path: handed to the agent as SERVICE_CORRELATION_ID for the hooks relay. */
  correlationId?: string;
  /**
   * Whose visibility config this request reads and its slash tokens change; default the agent id.
   * Team chat scopes it per conversation (spec: Stream visibility config).
   */
  visibilityScope?: string;
  /** A conversation named another way than headers and body ids (the Responses API's response chain): tier "response". */
  conversationId?: string;
}

export interface TurnInfo {
  conversation: Conversation;
  sessionId: string;
  resumed: boolean;
  correlationId?: string;
  /** A chat client's background task (e.g. Open WebUI's title request), answered one-shot outside the conversation. */
  task?: string;
}

/** What a client task sees: the answer only, as final text. */
const TASK_VISIBILITY: Readonly<Visibility> = Object.freeze({
  show_thinking: false,
  show_tools: false,
  show_text: true,
  show_narration: false,
  show_final: true,
  live_text: false,
});

export type ChatOpening =
  /** /stream-status, or a message of tokens only: answered with the config, nothing spawned. */
  | { kind: "config"; visibility: Visibility }
  | {
      kind: "turn";
      visibility: Visibility;
      info: TurnInfo;
      /** Iterate to the end (the lock is released and the session stored when it ends). */
      events: AsyncGenerator<TurnEvent>;
      /**
       * The same events, a read of the agent's output at a time (never empty): for writers that
       * send a burst as one write. Iterate either this or `events`, not both.
       */
      batches: AsyncGenerator<TurnEvent[]>;
      /** Stops the agent (client gone); events() then ends with a cancelled error. */
      cancel(): void;
    };

/** X-Caller-Agent (the calling agent's id, spec: Conversation resolution), safe for one log line. */
function callerAgent(value: string | undefined): string | undefined {
  const v = value?.replace(/[^\x21-\x7e]/g, "").slice(0, 128);
  return v ? v : undefined;
}

export class ChatService {
  private readonly locks = new TurnLocks();
  private readonly runs = new Set<AgentRun>();

  constructor(private readonly deps: ChatServiceDeps) {}

  get agentId(): string {
    return this.deps.agent.agentId;
  }

  /** Turns running now. */
  get running(): number {
    return this.runs.size;
  }

  async open(req: ChatRequest): Promise<ChatOpening> {
    const { agent } = this.deps;
    const last = req.messages[req.messages.length - 1];
    if (last?.role !== "user") {
      throw new DomainError("invalid", "invalid_request", "messages: the last message must have role user (the message the agent answers)");
    }
    if (req.messages.some((m) => messageText(m.content).includes("\0"))) {
      // The prompt goes to the agent CLI, where a NUL ends it.
      throw new DomainError("invalid", "invalid_request", "messages: a message contains a NUL character");
    }
    // Before slash tokens: a task prompt embeds the chat history, tokens included, which are not the user's toggles now.
    const task = req.visibilityScope === undefined ? clientTask(req.messages, req.metadata) : undefined;
    if (task !== undefined) return this.startTask(req, task);

    const lastRaw = messageText(last.content);
    const parsed = parseSlashTokens(lastRaw);

    // spec: Slash tokens. Toggles are sticky per agent, per user of the agent when the request
    // names one (issue 15 part 3: the agent's config is the user's default), or per scope (team
    // chat), and apply to this very answer.
    const user = requestUser(req.header, req.user);
    const scope = req.visibilityScope ?? (user !== undefined ? userScope(agent.agentId, user) : agent.agentId);
    let visibility =
      req.visibilityScope === undefined && user !== undefined
        ? ((await this.deps.visibility.find(scope)) ?? (await this.deps.visibility.get(agent.agentId)))
        : await this.deps.visibility.get(scope);
    if (parsed.tokens.length > 0) {
      const next = applySlashTokens(visibility, parsed.tokens);
      if (JSON.stringify(next) !== JSON.stringify(visibility)) await this.deps.visibility.set(scope, next);
      visibility = next;
      if (parsed.tokens.includes("/stream-status") || parsed.text === "") return { kind: "config", visibility };
    }
    if (parsed.text.trim() === "") throw new DomainError("invalid", "invalid_request", "messages: the last user message is empty");

    const conversation = resolveConversation({
      agentId: agent.agentId,
      header: req.header,
      metadata: req.metadata,
      user: req.user,
      system: req.messages
        .filter((m) => m.role === "system" || m.role === "developer")
        .map((m) => messageText(m.content))
        .join("\n"),
      firstUserMessage: messageText(req.messages.find((m) => m.role === "user")?.content),
      hashFallback: this.deps.config.convHashFallback,
      explicit: req.conversationId,
    });
    // Issue 15 part 1: a content-hash key from a conversation's opening message names every chat
    // that opens the same way ("hi"), across users without an id: it starts a new session (the
    // key is re-mapped when it ends) and never resumes, nor waits for another chat's turn.
    const opening = conversation.tier === "content_hash" && req.messages.filter((m) => m.role === "user").length === 1;

    const release = conversation.stateless || opening ? () => {} : this.locks.tryAcquire(conversation.convKey);
    if (!release) {
      throw new DomainError(
        "busy",
        "conversation_busy",
        `a turn of this conversation is still running; send the next message when it has answered (retry after ${BUSY_RETRY_AFTER_SECONDS} s)`,
        { retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS },
      );
    }
    try {
      return await this.startTurn(req, conversation, parsed.text, visibility, release, opening);
    } catch (err) {
      release();
      throw err;
    }
  }

  /**
   * A client's background task: one turn of the task model with no tools (no MCP servers either),
   * no session (nothing stored, nothing resumed), in an empty directory so the agent package's
   * instructions and hooks stay out, the answer shown as final text only.
   */
  private async startTask(req: ChatRequest, task: string): Promise<ChatOpening & { kind: "turn" }> {
    const { config } = this.deps;
    const prompt = messageText(req.messages[req.messages.length - 1]!.content).trim();
    const cwd = join(config.stateDir, "client-tasks");
    await mkdir(cwd, { recursive: true });
    const conversation: Conversation = {
      tier: "ephemeral",
      key: randomUUID(),
      userHint: requestUser(req.header, req.user) ?? "anonymous",
      convKey: "",
      stateless: true,
    };
    logger.info(`client task ${task} agent=${this.deps.agent.agentId} model=${config.taskModel} (no session, no tools)`);
    return this.spawnTurn({
      info: { conversation, sessionId: conversation.key, resumed: false, task },
      visibility: TASK_VISIBILITY,
      cwd,
      args: {
        prompt,
        model: config.taskModel,
        maxTurns: 1,
        systemPrompt: TASK_SYSTEM_PROMPT,
        // No tools, no MCP servers, nothing written to the session store on disk.
        extraArgs: ["--tools", "", "--strict-mcp-config", "--no-session-persistence"],
      },
      correlationId: req.correlationId,
      release: () => {},
      storeSession: undefined,
    });
  }

  private async startTurn(
    req: ChatRequest,
    conversation: Conversation,
    lastText: string,
    visibility: Visibility,
    release: () => void,
    opening: boolean,
  ): Promise<ChatOpening & { kind: "turn" }> {
    const { agent, config } = this.deps;
    let known = conversation.stateless || opening ? undefined : await this.deps.sessions.get(conversation.convKey);
    if (known && !existsSync(transcriptPath(config, agent.packageDir, known))) {
      // The mapping outlived the transcript (another pod, a wiped home): start over with the whole conversation.
      logger.warn(`session ${known} of ${conversation.convKey} has no transcript here; starting a new session`);
      known = undefined;
    }
    const sessionId = known ?? randomUUID();
    const resumed = known !== undefined;
    const prompt = resumed ? lastText : firstTurnPrompt(req.messages, lastText);
    const info: TurnInfo = { conversation, sessionId, resumed, correlationId: req.correlationId };

    const caller = callerAgent(req.header("x-caller-agent"));
    logger.info(
      `chat turn conv_key=${conversation.convKey} tier=${conversation.tier} agent=${agent.agentId} stateless=${conversation.stateless} ` +
        `session=${sessionId} ${resumed ? "resume" : opening ? "new (opening message)" : "new"}${req.correlationId ? ` correlation=${req.correlationId}` : ""}` +
        `${caller ? ` caller=${caller}` : ""}`,
    );
    // A conversation's first turn also carries the vault's notes that bear on its opening message.
    const loop = await this.loopSettings(resumed ? undefined : lastText);
    if (this.deps.beforeTurn) {
      try {
        await this.deps.beforeTurn();
      } catch (err) {
        void loop?.remove().catch(() => {});
        throw new DomainError("upstream", "hooks_init_failed", `the hooks package's init failed before the turn: ${(err as Error).message}`);
      }
    }
    return this.spawnTurn({
      info,
      visibility,
      cwd: agent.packageDir,
      args: {
        prompt,
        model: agent.model,
        maxTurns: agent.maxTurns,
        permissionMode: agent.permissionMode,
        appendSystemPrompt: agent.systemPrompt || undefined,
        ...(resumed ? { resume: sessionId } : { sessionId }),
        ...(loop && { extraArgs: ["--settings", loop.path] }),
      },
      correlationId: req.correlationId,
      // The turn's settings (and its scoped token) go with the turn.
      release: () => {
        release();
        void loop?.remove().catch(() => {});
      },
      storeSession: conversation.stateless ? undefined : conversation.convKey,
    });
  }

  /**
   * The turn's hooks settings, with a token minted for this turn (undefined when no router is
   * known, or when they could not be written: the turn then runs without the hooks).
   */
  private async loopSettings(task?: string): Promise<{ path: string; remove: () => Promise<void> } | undefined> {
    const { routerUrl, routerToken, routerCli, recallMaxChars, stateDir, claudeTimeout } = this.deps.config;
    if (!routerUrl || !routerToken || !stateDir) return undefined;
    const turn = randomUUID();
    const loop = { routerUrl, routerToken, routerCli, recallMaxChars, stateDir };
    const recalled = task ? await recallForTask(loop, { task, what: `agent ${this.deps.agent.agentId} first turn` }) : {};
    return writeLoopSettings(
      loop,
      `agent-${this.deps.agent.agentId}-${turn}`,
      { sub: `turn:${this.deps.agent.agentId}:${turn}`, timeoutSeconds: claudeTimeout },
      recalled,
    ).catch((err) => {
      logger.warn(`the loop's settings were not written (the turn runs without the hooks): ${(err as Error).message}`);
      return undefined;
    });
  }

  private spawnTurn(t: {
    info: TurnInfo;
    visibility: Visibility;
    cwd: string;
    args: Omit<AgentArgs, "includePartialMessages">;
    correlationId?: string;
    release: () => void;
    /** Where the session is mapped when the CLI reports one; undefined: nothing is stored. */
    storeSession: string | undefined;
  }): ChatOpening & { kind: "turn" } {
    const { config } = this.deps;
    let run: AgentRun;
    try {
      run = startAgent({
        binary: config.claudeBinary,
        cwd: t.cwd,
        args: { ...t.args, includePartialMessages: true },
        env: buildAgentEnv({
          base: this.deps.env,
          config,
          extra: {
            ...telemetryEnv(config, { podName: config.podName }, this.deps.env.OTEL_RESOURCE_ATTRIBUTES),
            ...(t.correlationId ? { [CORRELATION_ENV]: t.correlationId } : {}),
          },
        }),
        timeoutMs: config.claudeTimeout * 1000,
        killGraceMs: this.deps.killGraceMs,
      });
    } catch (err) {
      if (err instanceof AgentSpawnError) throw new DomainError("upstream", "agent_unavailable", err.message);
      throw err;
    }
    this.runs.add(run);

    const sessions = this.deps.sessions;
    const runs = this.runs;
    const { info, release, storeSession } = t;
    const live = t.visibility.live_text && t.visibility.show_text;
    // A result line means the CLI has the session: it is mapped at once, so the next turn resumes it.
    let stored: Promise<void> | undefined;
    const store = (sessionId: string) => {
      if (storeSession === undefined || stored) return;
      stored = sessions.set(storeSession, sessionId).catch((err: Error) => {
        logger.error(`could not store the session of ${storeSession}: ${err.message}`);
      });
    };
    // Issue 36 part 4: the conversation is free the moment its agent has exited, not when the
    // response has been written out (a client that stopped reading, or aborted and resends at
    // once, must not meet a turn that is over). Its session is stored first.
    void run.exited.then(async () => {
      await stored;
      release();
    });
    const batches = (async function* (): AsyncGenerator<TurnEvent[]> {
      const mapper = new TurnMapper({ live });
      let outcome: AgentOutcome | undefined;
      try {
        for await (const lines of run.batches()) {
          const out: TurnEvent[] = [];
          for (const ev of lines) {
            if (ev.type === "result") store(typeof ev.session_id === "string" ? ev.session_id : info.sessionId);
            const failed = hookFailure(ev);
            if (failed) logger.warn(`chat turn session=${info.sessionId}: ${failed}`);
            mapper.push(ev, out);
          }
          if (out.length > 0) yield out;
        }
        outcome = await run.wait();
        if (outcome.subtype !== undefined) store(outcome.sessionId ?? info.sessionId);
        await stored;
        const last = mapper.end(outcome);
        if (last.length > 0) yield last;
      } finally {
        if (!outcome) {
          // Stopped early (the consumer returned): the process must not outlive the turn.
          run.cancel();
          await run.wait().catch(() => undefined);
        }
        runs.delete(run);
        await stored;
        release();
        if (outcome?.failed)
          logger.warn(`chat turn ${info.task ? `(client task ${info.task})` : `conv_key=${info.conversation.convKey}`} failed: ${outcome.error}`);
      }
    })();
    const events = (async function* (): AsyncGenerator<TurnEvent> {
      for await (const batch of batches) yield* batch;
    })();
    return { kind: "turn", visibility: t.visibility, info, events, batches, cancel: () => run.cancel() };
  }

  /** Stops every running turn (shutdown). */
  async close(): Promise<void> {
    const all = [...this.runs];
    for (const r of all) r.cancel();
    await Promise.allSettled(all.map((r) => r.wait()));
  }
}
