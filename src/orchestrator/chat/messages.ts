// The messages of a chat request, as OpenAI-compatible clients send them: content as a string
// or as parts, of which the text ones count.
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
