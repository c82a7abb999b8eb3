// The messages of a chat request, as OpenAI-compatible clients send them (content as a string
// or as parts, of which the text ones count), and the prompt a new session starts with.
import { parseSlashTokens } from "./slash-tokens";

export interface ChatMessage {
  role: string;
  content?: string | Array<{ type: string; text?: string; [k: string]: unknown }> | null;
}

export function messageText(content: ChatMessage["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((p) => p && (p.type === "text" || p.type === "input_text" || p.type === "output_text") && typeof p.text === "string")
    .map((p) => p.text as string)
    .join("\n");
}

/**
 * A first turn carries the conversation so far (a client may have history this service never
 * saw: a new pod, an expired mapping); later turns resume the session and send only the last
 * message (spec: Conversation resolution).
 */
export function firstTurnPrompt(messages: ChatMessage[], lastText: string): string {
  const earlier = messages.slice(0, -1);
  const system = earlier
    .filter((m) => m.role === "system" || m.role === "developer")
    .map((m) => messageText(m.content).trim())
    .filter((t) => t !== "");
  const history = earlier
    .filter((m) => m.role === "user" || m.role === "assistant")
    .map((m) => ({ role: m.role, text: (m.role === "user" ? parseSlashTokens(messageText(m.content)).text : messageText(m.content)).trim() }))
    .filter((m) => m.text !== "");
  if (system.length === 0 && history.length === 0) return lastText;
  const parts: string[] = [];
  if (system.length > 0) parts.push(`<client_instructions>\n${system.join("\n\n")}\n</client_instructions>`);
  if (history.length > 0) {
    parts.push(`<conversation_so_far>\n${history.map((m) => `${m.role === "user" ? "User" : "Assistant"}: ${m.text}`).join("\n\n")}\n</conversation_so_far>`);
  }
  parts.push(lastText);
  return parts.join("\n\n");
}
