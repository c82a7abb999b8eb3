// Team-chat history (spec: Limits, "team chat"): the last TEAMCHAT_MAX_MESSAGES messages of a
// conversation (the user's and the agent's final answers), kept TEAMCHAT_CONVERSATION_TTL
// seconds after the last one, in the key-value store (Redis or files). The agent session holds
// the real context; the history is what a first turn is given when there is no session to
// resume (expired mapping, another pod), as /v1/chat/completions clients send theirs.
import type { KeyValueStore } from "../../common/kv/store";
import { log } from "../../common/logger";

const logger = log("teamchat");

export interface HistoryEntry {
  role: "user" | "assistant";
  text: string;
  at: string;
}

export interface HistoryOptions {
  agentId: string;
  maxMessages: number;
  ttlSeconds: number;
}

export class TeamChatHistory {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly opts: HistoryOptions,
  ) {}

  key(conversationId: string): string {
    return `teamchat:history:${this.opts.agentId}:${conversationId}`;
  }

  /** Oldest first; empty when the store fails (logged: the turn goes on without it). */
  async get(conversationId: string): Promise<HistoryEntry[]> {
    try {
      const raw = await this.kv.listRange(this.key(conversationId));
      return raw.flatMap((r) => {
        try {
          const e = JSON.parse(r) as HistoryEntry;
          return (e.role === "user" || e.role === "assistant") && typeof e.text === "string" ? [e] : [];
        } catch {
          return [];
        }
      });
    } catch (err) {
      logger.warn(`team-chat history of ${conversationId}: ${(err as Error).message}; answering without it`);
      return [];
    }
  }

  async append(conversationId: string, role: HistoryEntry["role"], text: string): Promise<void> {
    if (text.trim() === "") return;
    const entry: HistoryEntry = { role, text, at: new Date().toISOString() };
    try {
      await this.kv.listPush(this.key(conversationId), JSON.stringify(entry), { max: this.opts.maxMessages, ttlSeconds: this.opts.ttlSeconds });
    } catch (err) {
      logger.warn(`team-chat history of ${conversationId}: could not store a message: ${(err as Error).message}`);
    }
  }
}
