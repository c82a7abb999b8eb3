// Canonical turn events → team-chat messages (spec: Events, "Team-chat rendering"), filtered by
// the conversation's visibility config like the chunks of /v1/chat/completions:
//
// | narration   | the text as-is                                           |
// | thinking    | **Reasoning:** then the text                             |
// | tool_call   | **Tool call:** <name> and a fenced preview of its input  |
// | tool_result | **Tool result[ (error)]:** and a fenced, truncated body  |
// | final       | the answer as its own message(s)                         |
// | status      | **Retrying:** <what failed, attempt n of m, in s>        |
// | error       | **Error:** <message>                                     |
//
// Thinking arrives token by token: deltas are coalesced into one message per block, sent when
// the block ends (any other event, visible or not, is a block boundary) or once the buffer
// passes flushChars, so the chat never gets one message per token. Narration arrives as whole
// blocks already: one message each. A message longer than the platform takes is split.
import { fenced, visible } from "../chat/openai-chunks";
import type { TurnEvent } from "../chat/turn-events";
import type { Visibility } from "../chat/visibility";

/** Characters of a tool call's input or a tool result shown; the rest is cut with a note. */
const PREVIEW_CHARS = 1500;
/** UTF-8 bytes per message: the platform refuses activities much above ~28 KB. */
const MAX_MESSAGE_BYTES = 20_000;

export interface RenderOptions {
  flushChars: number;
  previewChars?: number;
  maxMessageBytes?: number;
}

const pretty = (input: unknown) => (typeof input === "string" ? input : JSON.stringify(input, null, 2));

function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n… (${text.length - max} more characters)`;
}

const fence = (label: string, body: string) => fenced(label, body).replace(/^\n/, "").replace(/\n$/, "");

/** Splits at paragraph, line or word boundaries so each piece fits in maxBytes of UTF-8. */
export function splitMessage(text: string, maxBytes = MAX_MESSAGE_BYTES): string[] {
  const enc = new TextEncoder();
  if (enc.encode(text).length <= maxBytes) return [text];
  const out: string[] = [];
  let rest = text;
  while (enc.encode(rest).length > maxBytes) {
    // Longest prefix under the budget (chars ≤ bytes, so start from maxBytes chars and shrink).
    let end = Math.min(rest.length, maxBytes);
    while (end > 0 && enc.encode(rest.slice(0, end)).length > maxBytes) end = Math.floor(end * 0.9);
    const head = rest.slice(0, end);
    // A paragraph break, else a line break, else a space, in the second half of the piece; else a hard cut.
    const at = [head.lastIndexOf("\n\n"), head.lastIndexOf("\n"), head.lastIndexOf(" ")].find((c) => c > end / 2) ?? end;
    out.push(rest.slice(0, at).trimEnd());
    rest = rest.slice(at).replace(/^\s+/, "");
  }
  if (rest !== "") out.push(rest);
  return out;
}

export class TeamChatRenderer {
  private buffer: { parent: string | null; text: string } | undefined;
  private readonly previewChars: number;
  private readonly maxBytes: number;

  private readonly visibility: Visibility;

  constructor(
    visibility: Visibility,
    private readonly opts: RenderOptions,
  ) {
    // Team chat sends whole messages per block: live text (a chat-completions option) does not apply.
    this.visibility = { ...visibility, live_text: false };
    this.previewChars = opts.previewChars ?? PREVIEW_CHARS;
    this.maxBytes = opts.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  }

  /** Messages ready to send after this event, in order (often none). */
  push(ev: TurnEvent): string[] {
    const out: string[] = [];
    if (ev.type === "thinking") {
      if (this.buffer && this.buffer.parent !== ev.parentToolUseId) this.flush(out);
      if (!visible(ev, this.visibility)) return out;
      this.buffer ??= { parent: ev.parentToolUseId, text: "" };
      this.buffer.text += ev.text;
      if (this.buffer.text.length >= this.opts.flushChars) this.flush(out);
      return out;
    }
    this.flush(out);
    if (!visible(ev, this.visibility)) return out;
    const sub = "parentToolUseId" in ev && ev.parentToolUseId !== null ? " _(sub-agent)_" : "";
    switch (ev.type) {
      case "narration":
        this.emit(ev.text, out);
        break;
      case "final":
        this.emit(ev.text, out);
        break;
      case "tool_call":
        this.emit(`**Tool call:** ${ev.name}${sub}\n\n${fence("json", truncate(pretty(ev.input), this.previewChars))}`, out);
        break;
      case "tool_result":
        this.emit(`**Tool result${ev.isError ? " (error)" : ""}:**${sub}\n\n${fence("", truncate(ev.content, this.previewChars))}`, out);
        break;
      case "status":
        this.emit(`**Retrying:** ${ev.message}`, out);
        break;
      case "error":
        this.emit(`**Error:** ${ev.message}`, out);
        break;
      case "usage":
        break;
    }
    return out;
  }

  /** What is still buffered, at the end of the turn. */
  end(): string[] {
    const out: string[] = [];
    this.flush(out);
    return out;
  }

  private flush(out: string[]): void {
    const b = this.buffer;
    this.buffer = undefined;
    if (!b || b.text.trim() === "") return;
    const sub = b.parent !== null ? " _(sub-agent)_" : "";
    this.emit(`**Reasoning:**${sub}\n\n${b.text.trim()}`, out);
  }

  private emit(text: string, out: string[]): void {
    if (text.trim() === "") return;
    for (const piece of splitMessage(text, this.maxBytes)) out.push(piece);
  }
}

/** The reply to /stream-status (or a message of slash tokens only). */
export function renderVisibility(v: Visibility): string {
  const on = (b: boolean) => (b ? "on" : "off");
  return (
    `**Stream settings for this chat:** thinking ${on(v.show_thinking)} · tools ${on(v.show_tools)} · ` +
    `narration ${on(v.show_text && v.show_narration)} · final ${on(v.show_text && v.show_final)}\n\n\`${JSON.stringify({ ...v, live_text: undefined })}\``
  );
}
