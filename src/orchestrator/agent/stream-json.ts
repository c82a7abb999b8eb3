// Claude Code's `--output-format stream-json` lines, as typed events. General on purpose:
// jobs read the result and usage, the chat stream (a later module) maps stream_event deltas
// to chunks; neither mapping lives here. Unknown types and garbage never throw.

import type {
  SDKAssistantMessage,
  SDKMessage,
  SDKPartialAssistantMessage,
  SDKRateLimitEvent,
  SDKResultMessage,
  SDKUserMessage,
} from "@anthropic-ai/claude-agent-sdk";

// The lines are typed with the Agent SDK's message types (the CLI prints exactly those), read
// leniently: the parser checks only what it needs (the type, a message's content list, a stream
// event's type) and normalises the result line's numbers, so members may still be absent.

/** Token counts of a result line or a message; any of them may be missing from a line. */
export type Usage = Partial<SDKResultMessage["usage"]>;

/** text, thinking, tool_use, … of an assistant message. */
export type ContentBlock = SDKAssistantMessage["message"]["content"][number];

/** init, status, api_retry, task_*, hook_*, … (the CLI adds subtypes over time: match on subtype). */
export type SystemEvent = Extract<SDKMessage, { type: "system" }>;

/** Where a cut stream's message_stop says the CLI threw the blocks away (not in the SDK's types yet). */
export interface AbandonedBlocks {
  api_message_id?: string;
  /** The first abandoned block: it and every later block of the message. */
  from_block_index: number;
}

/** One raw Messages-API streaming event (only with --include-partial-messages). */
export type StreamEventLine = SDKPartialAssistantMessage & {
  /** Set when the event belongs to a sub-agent started by the Agent/Task tool. */
  parent_tool_use_id: string | null;
  /** On the message_stop that ends a message cut mid-stream (Claude Code 2.1.33x). */
  abandoned_blocks?: AbandonedBlocks;
};

export type AssistantEvent = SDKAssistantMessage;

export type UserEvent = SDKUserMessage;

type ResultFields = "result" | "errors" | "usage" | "total_cost_usd" | "num_turns" | "duration_ms";
/** A result line as the parser leaves it: its numbers checked, each member absent when the line had none. */
type NormalisedResult<T> = T extends unknown
  ? Omit<T, ResultFields> & {
      result?: string;
      errors?: string[];
      usage?: Usage;
      total_cost_usd?: number;
      num_turns?: number;
      duration_ms?: number;
    }
  : never;

/** success, error_max_turns, error_during_execution, … — failure is `is_error`, the subtype only informs. */
export type ResultEvent = NormalisedResult<SDKResultMessage>;

export type RateLimitEvent = SDKRateLimitEvent;

/** A JSON object whose `type` we do not know, or a known type in a shape we do not expect. */
export interface UnknownEvent {
  type: "unknown";
  original_type: string;
  raw: Record<string, unknown>;
}

export type AgentEvent = SystemEvent | StreamEventLine | AssistantEvent | UserEvent | ResultEvent | RateLimitEvent | UnknownEvent;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** The object was parsed from this line and is nobody else's: normalised in place, not copied (the hot path). */
const withParent = (o: Record<string, unknown>) => {
  if (o.parent_tool_use_id !== null && typeof o.parent_tool_use_id !== "string") o.parent_tool_use_id = null;
  return o;
};

/** One stdout line → an event; undefined for blank lines and anything that is not a JSON object with a type. */
export function parseAgentLine(line: string): AgentEvent | undefined {
  const text = line.trim();
  if (text === "" || text[0] !== "{") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value) || typeof value.type !== "string") return undefined;
  return toEvent(value, value.type);
}

/** A finite, non-negative number rounded to a whole one; anything else is absent. */
const count = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.round(v) : undefined);

function toEvent(o: Record<string, unknown>, type: string): AgentEvent {
  const unknown: UnknownEvent = { type: "unknown", original_type: type, raw: o };
  switch (type) {
    case "system":
      return typeof o.subtype === "string" ? (o as unknown as SystemEvent) : unknown;
    case "stream_event":
      return isObject(o.event) && typeof o.event.type === "string" ? (withParent(o) as unknown as StreamEventLine) : unknown;
    case "assistant":
      return isObject(o.message) && Array.isArray(o.message.content) ? (withParent(o) as unknown as AssistantEvent) : unknown;
    case "user":
      return isObject(o.message) && (typeof o.message.content === "string" || Array.isArray(o.message.content))
        ? (withParent(o) as unknown as UserEvent)
        : unknown;
    case "result": {
      if (typeof o.subtype !== "string") return unknown;
      const errors = Array.isArray(o.errors) ? o.errors.map(String) : undefined;
      return {
        ...o,
        is_error: o.is_error === true,
        result: typeof o.result === "string" ? o.result : undefined,
        errors,
        usage: isObject(o.usage) ? (o.usage as Usage) : undefined,
        total_cost_usd: typeof o.total_cost_usd === "number" ? o.total_cost_usd : undefined,
        // Counts as whole numbers, whatever the line says: a job record holds integers, and one
        // odd field must not make the record unreadable (a `wait` would never see it finish).
        num_turns: count(o.num_turns),
        duration_ms: count(o.duration_ms),
      } as unknown as ResultEvent;
    }
    case "rate_limit_event":
      return o as unknown as RateLimitEvent;
    default:
      return unknown;
  }
}

/**
 * Splits a byte stream into lines as the bytes arrive (a line is yielded the moment its
 * newline is read; a last line without one is yielded at the end). Handles CRLF and
 * multi-byte characters cut across reads.
 */
export async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  for await (const batch of readLineBatches(stream)) yield* batch;
}

/**
 * readLines a read at a time: every whole line one read of the stream completed, in order (a
 * burst of output costs one hop through the async machinery, not one per line).
 *
 * gatherMs: after a read under 8 KiB (a reader keeping up with a fast writer gets a line
 * or two at a time), wait this long before the next read, so the burst gathers in the pipe and is
 * read, mapped and written on in one go instead of a wake-up, a read and a write per line. After
 * a big read the next one follows at once (the pipe may be full: the writer must not stall). A
 * line waits at most gatherMs; the first line after a quiet spell is read at once.
 */
const GATHER_BELOW_BYTES = 8 * 1024;
export async function* readLineBatches(stream: ReadableStream<Uint8Array>, opts: { gatherMs?: number } = {}): AsyncGenerator<string[]> {
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  const gatherMs = opts.gatherMs ?? 0;
  let rest = "";
  let small = false;
  try {
    for (;;) {
      if (small && gatherMs > 0) await Bun.sleep(gatherMs);
      const { value, done } = await reader.read();
      // A big read means more is waiting (the pipe was full): read on at once, never stall the writer.
      small = value !== undefined && value.byteLength < GATHER_BELOW_BYTES;
      if (done) break;
      const text = rest + decoder.decode(value, { stream: true });
      const batch: string[] = [];
      let start = 0;
      for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
        batch.push(text.charCodeAt(nl - 1) === 13 && nl > start ? text.slice(start, nl - 1) : text.slice(start, nl));
        start = nl + 1;
      }
      rest = start === 0 ? text : text.slice(start);
      if (batch.length > 0) yield batch;
    }
    rest += decoder.decode();
    if (rest.length > 0) yield [rest];
  } finally {
    reader.releaseLock();
  }
}
