// Canonical turn events → chat.completion.chunk objects, exactly per the spec's table (Events,
// "SSE chunks of /v1/chat/completions"), every chunk filtered by the visibility config. Tool
// calls are fenced content, not tool_calls deltas, so clients never try to run them.
//
// Issue 15: a narration chunk ends with a paragraph break (clients that concatenate content
// never glue two blocks); with live text the main thread's text goes out as legacy text chunks
// as it arrives, each block after the first opening with a paragraph break; with
// stream_options.include_usage the usage comes in its own chunk (choices: []) and every other
// chunk carries usage: null, as OpenAI sends it.
import type { TurnEvent } from "./turn-events";
import type { ChatUsage } from "./usage";
import type { Visibility } from "./visibility";

export interface ChunkContext {
  id: string;
  created: number;
  model: string;
  /** stream_options.include_usage: usage in its own last chunk, usage: null on the others. */
  includeUsage?: boolean;
  /** Live text: whether text went out already (the next block then opens with a paragraph break). */
  textSent?: boolean;
}

export interface Chunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: Array<{ index: 0; delta: Record<string, unknown>; finish_reason: string | null; [extra: string]: unknown }>;
  usage?: ChatUsage | null;
  /** Only on the error chunk: OpenAI SDKs raise it as an APIError. */
  error?: { message: string; type: string; param: null; code: string };
  [extra: string]: unknown;
}

export function newChunkContext(model: string, opts: { includeUsage?: boolean } = {}): ChunkContext {
  return { id: `chatcmpl-${crypto.randomUUID()}`, created: Math.floor(Date.now() / 1000), model, includeUsage: opts.includeUsage === true };
}

const chunk = (ctx: ChunkContext, delta: Record<string, unknown>, extra?: Record<string, unknown>, finish: string | null = null): Chunk => {
  const c: Chunk = {
    id: ctx.id,
    object: "chat.completion.chunk",
    created: ctx.created,
    model: ctx.model,
    choices: [{ index: 0, delta, finish_reason: finish, ...extra }],
  };
  if (ctx.includeUsage) c.usage = null;
  return c;
};

/** Text that ends with a paragraph break, so what follows it starts a new paragraph. */
export const withParagraphEnd = (text: string): string => (text.endsWith("\n\n") ? text : text.endsWith("\n") ? `${text}\n` : `${text}\n\n`);

/** A fenced block whose fence is longer than any backtick run inside it (CommonMark). */
export function fenced(label: string, body: string): string {
  let longest = 0;
  for (const m of body.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `\n${fence}${label}\n${body}\n${fence}\n`;
}

export const pretty = (input: unknown) => (typeof input === "string" ? input : JSON.stringify(input, null, 2));

export function roleChunk(ctx: ChunkContext): Chunk {
  return chunk(ctx, { role: "assistant" });
}

/** The stop chunk: with the usage (spec), or usage: null when it comes in its own chunk (include_usage). */
export function stopChunk(ctx: ChunkContext, usage: ChatUsage): Chunk {
  return ctx.includeUsage ? chunk(ctx, {}, undefined, "stop") : { ...chunk(ctx, {}, undefined, "stop"), usage };
}

/** include_usage: the last chunk before [DONE], no choices, the usage. */
export function usageChunk(ctx: ChunkContext, usage: ChatUsage): Chunk {
  return { id: ctx.id, object: "chat.completion.chunk", created: ctx.created, model: ctx.model, choices: [], usage };
}

export function streamConfigChunk(ctx: ChunkContext, v: Visibility): Chunk {
  return chunk(ctx, { content: JSON.stringify(v) }, { x_service_event_type: "stream_config" });
}

export function errorChunk(ctx: ChunkContext, code: string, message: string): Chunk {
  return {
    ...chunk(ctx, { content: `\n\n**Error:** ${message}\n` }, { x_service_event_type: "error", x_service_error_code: code }),
    error: { message, type: "agent_error", param: null, code },
  };
}

/** Whether a kind of event is shown; sub-agent events are inside a tool call, so they need show_tools too. */
export function visible(ev: TurnEvent, v: Visibility): boolean {
  const sub = "parentToolUseId" in ev && ev.parentToolUseId !== null;
  if (sub && !v.show_tools) return false;
  switch (ev.type) {
    case "thinking":
      return v.show_thinking;
    case "tool_call":
    case "tool_result":
      return v.show_tools;
    case "text_delta":
      return v.show_text && v.live_text;
    case "narration":
      // Live text: the main thread's blocks went out as deltas already.
      return v.show_text && v.show_narration && (sub || !v.live_text);
    case "final":
      return v.show_text && v.show_final && (ev.legacy === true || !v.live_text);
    case "status":
      // Progress the service reports (the agent retrying the model API): shown with narration.
      return v.show_text && v.show_narration;
    case "error":
      return true;
    case "usage":
      return false;
  }
}

/** The chunk for one event, or undefined when it is hidden or not a chunk (usage feeds the stop chunk). */
export function renderChunk(ctx: ChunkContext, ev: TurnEvent, v: Visibility): Chunk | undefined {
  if (!visible(ev, v)) return undefined;
  const label = "parentToolUseId" in ev && ev.parentToolUseId !== null ? { x_service_parent_tool_use_id: ev.parentToolUseId } : undefined;
  switch (ev.type) {
    case "thinking":
      return chunk(ctx, { reasoning_content: ev.text }, { x_service_event_type: "thinking", ...label });
    case "tool_call":
      return chunk(
        ctx,
        { content: fenced(`tool_use:${ev.name}`, pretty(ev.input)) },
        { x_service_event_type: "tool_use", x_service_tool_name: ev.name, x_service_tool_use_id: ev.id, ...label },
      );
    case "tool_result":
      return chunk(
        ctx,
        { content: fenced(ev.isError ? "tool_result:error" : "tool_result", ev.content) },
        { x_service_event_type: "tool_result", x_service_tool_use_id: ev.toolUseId, x_service_is_error: ev.isError, ...label },
      );
    case "text_delta": {
      const text = ev.blockStart && ctx.textSent ? `\n\n${ev.text}` : ev.text;
      ctx.textSent = true;
      return chunk(ctx, { content: text });
    }
    case "narration":
      return chunk(ctx, { content: withParagraphEnd(ev.text) }, { x_service_event_type: "narration", ...label });
    case "final":
      // Legacy assistant text (the result line's text, nothing streamed) carries no type member.
      return ev.legacy ? chunk(ctx, { content: ev.text }) : chunk(ctx, { content: ev.text }, { x_service_event_type: "final" });
    case "status":
      return chunk(ctx, { content: `\n_${ev.message}_\n\n` }, { x_service_event_type: "status", x_service_status: ev.code, x_service_retry: ev.retry });
    case "error":
      return errorChunk(ctx, ev.code, ev.message);
    case "usage":
      return undefined;
  }
}

/**
 * renderChunk as SSE text (`data: <json>\n\n`), for the stream's hot path: a thinking or live
 * text delta is the one field that changes between chunks, so the JSON around it is made once
 * per stream and only the delta's string is serialised. The text is byte for byte what
 * JSON.stringify(renderChunk(…)) gives (the tests compare them); other events go through it.
 */
export function chunkRenderer(ctx: ChunkContext): (ev: TurnEvent, v: Visibility) => string | undefined {
  const head = `data: {"id":${JSON.stringify(ctx.id)},"object":"chat.completion.chunk","created":${JSON.stringify(ctx.created)},"model":${JSON.stringify(ctx.model)},"choices":[{"index":0,"delta":{`;
  const tail = ctx.includeUsage ? `],"usage":null}\n\n` : "]}\n\n";
  const thinkingHead = `${head}"reasoning_content":`;
  const thinkingTail = `},"finish_reason":null,"x_service_event_type":"thinking"}${tail}`;
  const contentHead = `${head}"content":`;
  const contentTail = `},"finish_reason":null}${tail}`;
  return (ev, v) => {
    if (ev.type === "thinking") {
      if (!visible(ev, v)) return undefined;
      if (ev.parentToolUseId === null) return thinkingHead + JSON.stringify(ev.text) + thinkingTail;
    } else if (ev.type === "text_delta") {
      if (!visible(ev, v)) return undefined;
      const text = ev.blockStart && ctx.textSent ? `\n\n${ev.text}` : ev.text;
      ctx.textSent = true;
      return contentHead + JSON.stringify(text) + contentTail;
    }
    const c = renderChunk(ctx, ev, v);
    return c && `data: ${JSON.stringify(c)}\n\n`;
  };
}
