// Which conversation a chat request continues (spec: "Conversation resolution (4 tiers)"):
// 1 a header, 2 the body, 3 a hash of its opening, 4 none (ephemeral). The key is scoped by
// agent and by end user, so the same conversation id from two users, or sent to two agents,
// names two sessions.
import { createHash, randomUUID } from "node:crypto";

export type Tier = "header" | "body" | "response" | "content_hash" | "ephemeral";

/** Tier 1, in order of precedence (lower-case): ours, LibreChat's, Open WebUI's (both spellings). */
export const CONVERSATION_HEADERS = ["x-conversation-id", "x-librechat-conversation-id", "x-openwebui-chat-id", "x-open-webui-chat-id"] as const;
/** End-user identity for key scoping: ours, then Open WebUI's forwarded user id. */
const USER_HEADERS = ["x-user-id", "x-openwebui-user-id", "x-open-webui-user-id"] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Longest conversation or user id, in characters (longer ones are cut to it). */
export const MAX_ID = 256;

export interface ResolutionInput {
  agentId: string;
  /** Lower-case header name → value. */
  header(name: string): string | undefined;
  metadata?: Record<string, unknown> | null;
  user?: string | null;
  /** The client's system messages, joined. */
  system: string;
  /** The raw text of the first user message. */
  firstUserMessage: string;
  hashFallback: boolean;
  /**
   * A conversation the request names another way, taken after the headers and before the body's
   * ids: the Responses API's previous_response_id (or a new response chain), tier "response".
   */
  explicit?: string;
}

export interface Conversation {
  tier: Tier;
  /** The conversation's own id (tier 1/2), the 16-hex hash (3), or a random UUID (4). */
  key: string;
  userHint: string;
  /** `conv:{agent_id}:{user_hint}:{key}`. */
  convKey: string;
  /** Tier 4: nothing is stored, every request is a new session. */
  stateless: boolean;
}

const clean = (v: unknown): string | undefined => {
  if (typeof v !== "string") return undefined;
  const t = v.trim();
  if (t === "") return undefined;
  // Cut to MAX_ID, never between the halves of a surrogate pair.
  const end = t.length > MAX_ID && /[\uD800-\uDBFF]/.test(t[MAX_ID - 1]!) ? MAX_ID - 1 : MAX_ID;
  return t.slice(0, end);
};

/** A key segment: ':' and control characters escaped so segments never run into each other. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it escapes
export const segment = (s: string) => s.replace(/[%:\s\u0000-\u001f]/g, (ch) => `%${ch.charCodeAt(0).toString(16).padStart(2, "0").toUpperCase()}`);

export function conversationKey(agentId: string, userHint: string, key: string): string {
  return `conv:${segment(agentId)}:${segment(userHint)}:${segment(key)}`;
}

export function contentHash(system: string, firstUserMessage: string): string {
  return createHash("sha256").update(`${system}\n${firstUserMessage}`).digest("hex").slice(0, 16);
}

/**
 * The end user a request names: X-User-Id, X-OpenWebUI-User-Id, else a non-UUID `user` (OpenAI's
 * end-user id, LibreChat's user id; a UUID-shaped one is a conversation id, tier 2); undefined
 * when it names none.
 */
export function requestUser(header: (name: string) => string | undefined, bodyUser: string | null | undefined): string | undefined {
  const user = clean(bodyUser);
  return USER_HEADERS.map((h) => clean(header(h))).find((v) => v !== undefined) ?? (user !== undefined && !UUID.test(user) ? user : undefined);
}

export function resolveConversation(input: ResolutionInput): Conversation {
  const user = clean(input.user);
  const userIsUuid = user !== undefined && UUID.test(user);
  const userHint = requestUser(input.header, input.user) ?? "anonymous";

  let tier: Tier;
  const fromHeader = CONVERSATION_HEADERS.map((h) => clean(input.header(h))).find((v) => v !== undefined);
  const explicit = clean(input.explicit);
  const inBody = clean(input.metadata?.conversation_id);
  let key: string;
  if (fromHeader !== undefined) {
    tier = "header";
    key = fromHeader;
  } else if (explicit !== undefined) {
    tier = "response";
    key = explicit;
  } else if (inBody !== undefined) {
    tier = "body";
    key = inBody;
  } else if (userIsUuid) {
    tier = "body";
    key = user.toLowerCase();
  } else if (input.hashFallback && input.firstUserMessage.trim() !== "") {
    tier = "content_hash";
    key = contentHash(input.system, input.firstUserMessage);
  } else {
    tier = "ephemeral";
    key = randomUUID();
  }
  return { tier, key, userHint, convKey: conversationKey(input.agentId, userHint, key), stateless: tier === "ephemeral" };
}
