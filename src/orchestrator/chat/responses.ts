// The OpenAI Responses API in agent mode (issue 15 part 6): a /v1/responses request mapped onto
// the same chat turn as /v1/chat/completions (auth, visibility, the busy rule and slash tokens
// are the chat service's), and a response id mapped to the conversation it belongs to.
//
// Conversations: headers first (tier 1, as for chat completions); then previous_response_id
// (the conversation of that response; invalid previous_response_not_found when unknown or expired),
// or an `item_reference` to one of our output items (what @ai-sdk/openai sends for earlier
// answers); then metadata.conversation_id; a request without any of these starts a new
// conversation named by its own response id, except one that carries earlier turns itself
// (the content-hash tier then finds it, as for chat completions).
import { DomainError } from "../../common/domain-error";
import type { ChatMessage } from "./messages";
import type { ChatOpening, ChatRequest, ChatService } from "./service";
import type { SessionStore } from "./sessions";

type Part = { type: string; text?: string; [k: string]: unknown };
export interface ResponseInputItem {
  type?: string;
  role?: string;
  content?: string | Part[] | null;
  id?: string;
  [k: string]: unknown;
}

export interface ResponsesRequest {
  input: string | ResponseInputItem[];
  instructions?: string | null;
  previous_response_id?: string | null;
  metadata?: Record<string, string> | null;
  user?: string | null;
}

const ROLES = new Set(["user", "assistant", "system", "developer"]);
const ITEM_ID = /^(?:resp|msg|rs)_([0-9a-f]{32})(?:_\d+)?$/;

export function newResponseId(): { id: string; hex: string } {
  const hex = crypto.randomUUID().replaceAll("-", "");
  return { id: `resp_${hex}`, hex };
}

/** The response an id of ours belongs to (resp_<hex>, msg_<hex>_<n>, rs_<hex>_<n>), else undefined. */
function responseOf(id: string): string | undefined {
  const m = ITEM_ID.exec(id);
  return m ? `resp_${m[1]}` : undefined;
}

/** instructions → a system message; message items (typed or not) → chat messages; other items are not conversation text. */
function chatMessages(req: ResponsesRequest): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (req.instructions && req.instructions.trim() !== "") out.push({ role: "system", content: req.instructions });
  if (typeof req.input === "string") {
    out.push({ role: "user", content: req.input });
    return out;
  }
  for (const item of req.input) {
    if ((item.type === undefined || item.type === "message") && typeof item.role === "string" && ROLES.has(item.role)) {
      out.push({ role: item.role, content: item.content ?? "" });
    }
  }
  return out;
}

/** Response id → the conversation key it continues; in Redis and ~/.service/response_links.json, with the session TTL. */
export class ResponseLinks {
  constructor(
    private readonly store: SessionStore,
    private readonly agentId: string,
  ) {}

  get(responseId: string): Promise<string | undefined> {
    return this.store.get(this.key(responseId));
  }

  set(responseId: string, conversationKey: string): Promise<void> {
    return this.store.set(this.key(responseId), conversationKey);
  }

  private key(responseId: string): string {
    return `resp:${this.agentId}:${responseId}`;
  }
}

export interface ResponsesOpening {
  opening: ChatOpening;
  messages: ChatMessage[];
}

export async function openResponse(
  deps: { chat: ChatService; links: ResponseLinks; hashFallback: boolean },
  req: ResponsesRequest,
  responseId: string,
  transport: Pick<ChatRequest, "header" | "correlationId">,
): Promise<ChatOpening> {
  const messages = chatMessages(req);
  let conversationId: string | undefined;
  if (req.previous_response_id) {
    conversationId = await deps.links.get(req.previous_response_id);
    if (conversationId === undefined) {
      throw new DomainError(
        "invalid",
        "previous_response_not_found",
        `previous_response_id: no response ${JSON.stringify(req.previous_response_id)} here (unknown, or older than AGENT_MODE_SESSION_TTL)`,
        { details: [{ path: "previous_response_id", message: "unknown response id" }] },
      );
    }
  } else if (Array.isArray(req.input)) {
    for (const item of req.input) {
      const ref = item.type === "item_reference" && typeof item.id === "string" ? responseOf(item.id) : undefined;
      if (!ref) continue;
      conversationId = await deps.links.get(ref);
      if (conversationId !== undefined) break;
    }
  }
  const userTurns = messages.filter((m) => m.role === "user").length;
  if (conversationId === undefined && typeof req.metadata?.conversation_id !== "string" && (userTurns <= 1 || !deps.hashFallback)) {
    conversationId = responseId;
  }
  const opening = await deps.chat.open({
    messages,
    metadata: req.metadata,
    user: req.user,
    conversationId,
    ...transport,
  });
  if (opening.kind === "turn" && !opening.info.conversation.stateless && opening.info.task === undefined) {
    await deps.links.set(responseId, opening.info.conversation.key);
  }
  return opening;
}
