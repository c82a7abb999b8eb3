// A job's canonical events (issue 18, part 1): what GET /jobs/{id}/events streams, what the job's
// event log keeps, and what get_job returns the last of. Agent events are mapped by the chat
// stream's TurnMapper (one mapping for both), then named as a watcher reads them.
import type { TurnEvent } from "../../chat/turn-events";
import type { JobStatus } from "../schema";

export interface RunningUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export type JobEvent =
  | { type: "status"; at: string; status: JobStatus; error?: string | null }
  | { type: "text"; at: string; text: string; final: boolean; parent_tool_use_id: string | null }
  | { type: "thinking"; at: string; text: string; parent_tool_use_id: string | null }
  | { type: "tool_use"; at: string; tool_use_id: string; name: string; input: unknown; parent_tool_use_id: string | null }
  | { type: "tool_result"; at: string; tool_use_id: string; content: string; is_error: boolean; parent_tool_use_id: string | null }
  | { type: "usage"; at: string; usage: RunningUsage; total_cost_usd: number | null; num_turns: number; duration_ms: number }
  | { type: "error"; at: string; code: string; message: string }
  /** The log reached its size limit: later text, thinking and tool events were not kept. */
  | { type: "cut"; at: string; message: string; limit_bytes: number };

export type JobEventType = JobEvent["type"];

/**
 * One event as kept: its id is its position in the job's log (1, 2, …), the SSE id; `json` is its
 * text as the log keeps it, which the stream sends as it is.
 */
export interface StoredJobEvent {
  id: number;
  event: JobEvent;
  json: string;
}

/**
 * An event's JSON. It is made once per event: the recorder makes it (to measure the event against
 * the log's bound) and hands it to the store with the event, the store writes it and keeps it
 * beside the event, and the stream sends it. It travels with the event, not in a WeakMap keyed by
 * it: a WeakMap's set and get cost more than the JSON.stringify itself, and leave weak entries
 * for the collector to clear.
 */
export const jsonOf = (e: JobEvent): string => JSON.stringify(e);

/** An event read back from a store: its stored text is its JSON. Throws on a damaged row. */
export function parseStored(id: number, json: string): StoredJobEvent {
  return { id, event: JSON.parse(json) as JobEvent, json };
}

/** Tool results and texts can be huge (a file read); the log keeps the start of each. */
const MAX_FIELD_CHARS = 8_000;
const clip = (s: string) => (s.length <= MAX_FIELD_CHARS ? s : `${s.slice(0, MAX_FIELD_CHARS)}…[${s.length - MAX_FIELD_CHARS} more characters]`);

/** A turn event as a job event; usage is reported by the recorder itself (running totals). */
export function fromTurnEvent(ev: TurnEvent, at: string): JobEvent | undefined {
  switch (ev.type) {
    case "thinking":
      return { type: "thinking", at, text: clip(ev.text), parent_tool_use_id: ev.parentToolUseId };
    case "narration":
      return { type: "text", at, text: clip(ev.text), final: false, parent_tool_use_id: ev.parentToolUseId };
    case "final":
      return { type: "text", at, text: clip(ev.text), final: true, parent_tool_use_id: null };
    case "tool_call":
      return { type: "tool_use", at, tool_use_id: ev.id, name: ev.name, input: ev.input, parent_tool_use_id: ev.parentToolUseId };
    case "tool_result":
      return { type: "tool_result", at, tool_use_id: ev.toolUseId, content: clip(ev.content), is_error: ev.isError, parent_tool_use_id: ev.parentToolUseId };
    case "error":
      return { type: "error", at, code: ev.code, message: ev.message };
    case "usage":
      return undefined;
  }
}

export const flatten = (e: StoredJobEvent) => ({ id: e.id, ...e.event });
