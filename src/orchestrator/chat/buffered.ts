// A chat opening read to its end, for the non-streaming surfaces: the chat.completion object of
// /v1/chat/completions (stream false) and the reply of /completions. A failed turn is a
// DomainError (upstream, code from the agent: authentication_failed, error_max_turns, agent_exit, …)
// rather than a normal-looking answer.
import { DomainError } from "../../common/domain-error";
import type { ChatOpening } from "./service";
import { type ChatUsage, ZERO_USAGE } from "./usage";

export interface BufferedReply {
  /** The final answer (or, for a slash-token reply, the visibility config as JSON text). */
  content: string;
  usage: ChatUsage;
  costUsd?: number;
}

/** `relay`, when given, receives every event as it comes (the non-streaming event relay). */
export async function bufferReply(opening: ChatOpening, relay?: (event: string, data: unknown) => void): Promise<BufferedReply> {
  if (opening.kind === "config") return { content: JSON.stringify(opening.visibility), usage: ZERO_USAGE };
  let final: string | undefined;
  let usage: ChatUsage = ZERO_USAGE;
  let costUsd: number | undefined;
  let error: { code: string; message: string } | undefined;
  for await (const ev of opening.events) {
    relay?.(ev.type, ev);
    if (ev.type === "final") final = ev.text;
    else if (ev.type === "usage") {
      usage = ev.usage;
      costUsd = ev.costUsd;
    } else if (ev.type === "error") error ??= { code: ev.code, message: ev.message };
  }
  if (error) throw new DomainError("upstream", error.code, `the agent failed: ${error.message}`);
  return { content: final ?? "", usage, costUsd };
}

export function chatCompletion(id: string, model: string, reply: BufferedReply) {
  return {
    id,
    object: "chat.completion" as const,
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: "assistant" as const, content: reply.content, refusal: null }, finish_reason: "stop" as const, logprobs: null }],
    usage: reply.usage,
  };
}
