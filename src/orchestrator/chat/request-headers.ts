// What a chat request's headers select beyond conversation resolution (resolution.ts): the
// correlation id of a non-streaming turn, and the headers a POST /completions turn (the agents
// TUI) reads, whose body names the conversation and the user.
import { randomUUID } from "node:crypto";
import { CONVERSATION_HEADERS } from "./resolution";
import type { ChatRequest } from "./service";

/** What a correlation id may be: letters, digits, . _ : -, at most 128 (it names relay keys and env values). */
export const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The correlation id a turn runs under (handed to the agent for the hooks relay): the client's
 * X-Correlation-Id when it is a plausible id, else a new UUID. Streaming turns carry none: the
 * stream itself is the relay.
 */
export function correlationIdOf(header: (name: string) => string | undefined, opts?: { stream?: false }): string;
export function correlationIdOf(header: (name: string) => string | undefined, opts: { stream?: boolean }): string | undefined;
export function correlationIdOf(header: (name: string) => string | undefined, opts: { stream?: boolean } = {}): string | undefined {
  if (opts.stream) return undefined;
  const given = header("x-correlation-id");
  return given && CORRELATION_ID.test(given) ? given : randomUUID();
}

/** A POST /completions body: one message, in a conversation it names or a new one. */
export interface CompletionInput {
  message: string;
  conversation_id?: string;
  user?: string;
}

/**
 * The chat request a POST /completions message becomes, and its conversation id (a new UUID when
 * the body names none). The body's id is the conversation (tier 2), so conversation headers are
 * not consulted; the body's user stands for X-User-Id.
 */
export function completionRequest(body: CompletionInput, header: (name: string) => string | undefined): { conversationId: string; request: ChatRequest } {
  const conversationId = body.conversation_id ?? randomUUID();
  const skipped = new Set<string>(CONVERSATION_HEADERS);
  return {
    conversationId,
    request: {
      messages: [{ role: "user", content: body.message }],
      metadata: { conversation_id: conversationId },
      header: (name) => (name === "x-user-id" ? (body.user ?? header(name)) : skipped.has(name) ? undefined : header(name)),
    },
  };
}
