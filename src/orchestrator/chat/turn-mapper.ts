// Claude Code's stream-json lines → canonical turn events, one line at a time as it arrives
// (spec: Events, "SSE chunks"; issue 5 part 3).
//
// - thinking deltas pass through token by token;
// - tool_use input is assembled per block (per thread: sub-agents number their blocks from 0
//   too) and the call is emitted once, at content_block_stop;
// - text is held: a closed text block waits until the next block of its thread starts (then it
//   was narration) or the turn ends (then it is the final answer), so every piece of text
//   reaches the client exactly once, and a turn ending on a tool call has no final;
// - tool results come from `user` lines; `is_error` is present only on failures;
// - `assistant` frames repeat finished blocks and are never re-emitted, except for their
//   `error` member (e.g. authentication_failed);
// - failure is decided by the result line's is_error, not by its subtype; a rejected
//   rate_limit_event is an error; an api_retry system line is a status (the agent waits to
//   retry the model API); other system lines, message_* events and signatures are ignored;
// - events with a parent_tool_use_id belong to a sub-agent: labelled, never narration or final
//   of the main thread.
import { apiRetryOf, isUnrecoverable, retryText } from "../agent/api-retry";
import type { AgentOutcome } from "../agent/outcome";
import type { AgentEvent, ContentBlock, ResultEvent } from "../agent/stream-json";
import type { ParentToolUseId, TurnEvent } from "./turn-events";
import { chatUsage, ZERO_USAGE } from "./usage";

type Block = { kind: "text"; parts: string[] } | { kind: "tool_use"; id: string; name: string; json: string; input: unknown } | { kind: "other" };

interface Thread {
  blocks: Map<number, Block>;
}

const MAIN = "";

export class TurnMapper {
  private readonly threads = new Map<string, Thread>();
  /** The main thread's last closed text block, not yet known to be narration or final. */
  private held: string | undefined;
  private finalSent = false;
  private resultSeen = false;
  private usageSent = false;
  /** A stream_event line was seen: blocks come as deltas, and assistant frames only repeat them. */
  private streamed = false;
  private readonly errors = new Set<string>();

  /**
   * live: main-thread text deltas also go out as text_delta events as they arrive.
   * frames: map whole assistant frames when no partial messages come (background jobs run
   * without --include-partial-messages). Off for the chat stream, whose spec keeps the result
   * text as legacy assistant text then.
   */
  constructor(private readonly opts: { live?: boolean; frames?: boolean } = {}) {}

  /** The events one agent line maps to (often none), appended to `out` when given. */
  push(ev: AgentEvent, out: TurnEvent[] = []): TurnEvent[] {
    switch (ev.type) {
      case "stream_event":
        this.streamed = true;
        this.onStreamEvent(ev.event, ev.parent_tool_use_id, out);
        break;
      case "user":
        this.onUser(ev.message.content, ev.parent_tool_use_id, out);
        break;
      case "assistant":
        // The frame's content was streamed already (stream_event); only an API error is news.
        if (typeof ev.error === "string" && ev.error !== "") {
          const text = ev.message.content
            .filter((b) => b.type === "text" && typeof b.text === "string")
            .map((b) => b.text as string)
            .join("\n")
            .trim();
          this.error(ev.error, text || `the model API answered with an error (${ev.error})`, out);
        } else if (this.opts.frames && !this.streamed) {
          // Without --include-partial-messages (background jobs) the frames are all there is.
          this.onFrame(ev.message.content, ev.parent_tool_use_id, out);
        }
        break;
      case "rate_limit_event":
        this.onRateLimit(ev, out);
        break;
      case "result":
        this.onResult(ev, out);
        break;
      case "system": {
        const retry = apiRetryOf(ev);
        // One that retrying cannot fix stops the run (agent/process.ts): its error comes at the end.
        if (retry && !isUnrecoverable(retry)) out.push({ type: "status", code: "api_retry", message: retryText(retry), retry });
        break;
      }
      default:
        // unknown types: nothing for the client (other system lines: init, status, hook_*, thinking_tokens).
        break;
    }
    return out;
  }

  /**
   * After the last line, with how the process ended: flushes held text and reports a turn that
   * did not end with a successful result line (crash, non-zero exit, garbage, timeout).
   */
  end(
    outcome: Pick<AgentOutcome, "failed" | "error" | "errorCode" | "exitCode" | "signal" | "garbageLines" | "cancelled" | "timedOut"> | undefined,
  ): TurnEvent[] {
    const out: TurnEvent[] = [];
    if (!this.resultSeen) {
      // The turn never finished: whatever text was held was narration, not an answer.
      this.flushHeld("narration", out);
      this.error(endCode(outcome), endMessage(outcome), out);
    } else if (outcome?.failed && this.errors.size === 0) {
      this.error(endCode(outcome), outcome.error ?? "the agent failed", out);
    }
    if (!this.usageSent) {
      this.usageSent = true;
      out.push({ type: "usage", usage: ZERO_USAGE });
    }
    return out;
  }

  private thread(parent: ParentToolUseId): Thread {
    const key = parent ?? MAIN;
    let t = this.threads.get(key);
    if (!t) {
      t = { blocks: new Map() };
      this.threads.set(key, t);
    }
    return t;
  }

  private onStreamEvent(e: { type: string; [k: string]: unknown }, parent: ParentToolUseId, out: TurnEvent[]): void {
    if (this.resultSeen) return;
    const index = typeof e.index === "number" ? e.index : 0;
    switch (e.type) {
      case "content_block_start": {
        if (parent === null) this.flushHeld("narration", out);
        const cb = (e.content_block ?? {}) as ContentBlock;
        const block: Block =
          cb.type === "text"
            ? { kind: "text", parts: typeof cb.text === "string" && cb.text !== "" ? [cb.text] : [] }
            : cb.type === "tool_use" || cb.type === "server_tool_use" || cb.type === "mcp_tool_use"
              ? { kind: "tool_use", id: String(cb.id ?? ""), name: String(cb.name ?? "tool"), json: "", input: cb.input }
              : { kind: "other" };
        this.thread(parent).blocks.set(index, block);
        if (this.opts.live && parent === null && block.kind === "text" && block.parts.length > 0) {
          out.push({ type: "text_delta", text: block.parts[0]!, blockStart: true });
        }
        if (cb.type === "thinking" && typeof cb.thinking === "string" && cb.thinking !== "") {
          out.push({ type: "thinking", text: cb.thinking, parentToolUseId: parent });
        }
        break;
      }
      case "content_block_delta": {
        const d = (e.delta ?? {}) as { type?: string; [k: string]: unknown };
        const block = this.thread(parent).blocks.get(index);
        if (d.type === "thinking_delta") {
          if (typeof d.thinking === "string" && d.thinking !== "") out.push({ type: "thinking", text: d.thinking, parentToolUseId: parent });
        } else if (d.type === "text_delta") {
          if (block?.kind === "text" && typeof d.text === "string") {
            if (this.opts.live && parent === null && d.text !== "") out.push({ type: "text_delta", text: d.text, blockStart: block.parts.length === 0 });
            block.parts.push(d.text);
          }
        } else if (d.type === "input_json_delta") {
          if (block?.kind === "tool_use" && typeof d.partial_json === "string") block.json += d.partial_json;
        }
        // signature_delta, citations_delta, …: nothing to show.
        break;
      }
      case "content_block_stop": {
        const t = this.thread(parent);
        const block = t.blocks.get(index);
        t.blocks.delete(index);
        if (!block) break;
        if (block.kind === "text") {
          const text = block.parts.join("");
          if (text === "") break;
          if (parent === null) {
            this.flushHeld("narration", out);
            this.held = text;
          } else {
            out.push({ type: "narration", text, parentToolUseId: parent });
          }
        } else if (block.kind === "tool_use") {
          out.push({ type: "tool_call", id: block.id, name: block.name, input: parseInput(block), parentToolUseId: parent });
        }
        break;
      }
      default:
        // message_start, message_delta, message_stop, ping, …
        break;
    }
  }

  /** A whole block per assistant frame: the same events the deltas would have made, a block at a time. */
  private onFrame(content: ContentBlock[], parent: ParentToolUseId, out: TurnEvent[]): void {
    if (this.resultSeen) return;
    for (const b of content) {
      if (parent === null) this.flushHeld("narration", out);
      if (b.type === "thinking" && typeof b.thinking === "string" && b.thinking !== "") {
        out.push({ type: "thinking", text: b.thinking, parentToolUseId: parent });
      } else if (b.type === "text" && typeof b.text === "string" && b.text !== "") {
        if (parent === null) this.held = b.text;
        else out.push({ type: "narration", text: b.text, parentToolUseId: parent });
      } else if (b.type === "tool_use" || b.type === "server_tool_use" || b.type === "mcp_tool_use") {
        out.push({ type: "tool_call", id: String(b.id ?? ""), name: String(b.name ?? "tool"), input: b.input ?? {}, parentToolUseId: parent });
      }
    }
  }

  private onUser(content: string | ContentBlock[], parent: ParentToolUseId, out: TurnEvent[]): void {
    if (typeof content === "string") return;
    for (const b of content) {
      if (b.type !== "tool_result") continue;
      out.push({
        type: "tool_result",
        toolUseId: String(b.tool_use_id ?? ""),
        content: toolResultText(b.content),
        isError: b.is_error === true,
        parentToolUseId: parent,
      });
    }
  }

  private onRateLimit(ev: AgentEvent & { type: "rate_limit_event" }, out: TurnEvent[]): void {
    const info = (ev.rate_limit_info ?? {}) as { status?: string; resetsAt?: number; rateLimitType?: string };
    if (info.status !== "rejected") return;
    const which = info.rateLimitType ? ` (${info.rateLimitType})` : "";
    const resets = typeof info.resetsAt === "number" ? `; it resets at ${new Date(info.resetsAt * 1000).toISOString()}` : "";
    this.error("rate_limited", `the model provider's usage limit${which} is reached${resets}`, out);
  }

  private onResult(r: ResultEvent, out: TurnEvent[]): void {
    if (this.resultSeen) return;
    this.resultSeen = true;
    if (r.is_error) {
      // A failed turn has no answer: what was held is narration, then the reason.
      this.flushHeld("narration", out);
      this.error(r.subtype && r.subtype !== "success" ? r.subtype : "agent_error", resultErrorMessage(r), out);
    } else {
      this.flushHeld("final", out);
      if (!this.finalSent && this.threads.size === 0 && r.result) {
        // No block was streamed at all (no --include-partial-messages): the result text is the answer.
        this.finalSent = true;
        out.push({ type: "final", text: r.result, legacy: true });
      }
    }
    this.usageSent = true;
    out.push({
      type: "usage",
      usage: chatUsage(r.usage),
      costUsd: r.total_cost_usd,
      sessionId: typeof r.session_id === "string" ? r.session_id : undefined,
      numTurns: typeof r.num_turns === "number" ? r.num_turns : undefined,
    });
  }

  private flushHeld(as: "narration" | "final", out: TurnEvent[]): void {
    if (this.held === undefined) return;
    const text = this.held;
    this.held = undefined;
    if (as === "final") {
      this.finalSent = true;
      out.push({ type: "final", text });
    } else {
      out.push({ type: "narration", text, parentToolUseId: null });
    }
  }

  /** One error per distinct message: an auth failure arrives on the assistant frame and again on the result. */
  private error(code: string, message: string, out: TurnEvent[]): void {
    if (this.errors.has(message)) return;
    this.errors.add(message);
    out.push({ type: "error", code, message });
  }
}

function parseInput(block: Extract<Block, { kind: "tool_use" }>): unknown {
  if (block.json.trim() === "") return block.input ?? {};
  try {
    return JSON.parse(block.json);
  } catch {
    return block.json;
  }
}

/** A tool_result's content: a string, or a list of parts of which the text ones are shown. */
function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? "" : JSON.stringify(content);
  return content
    .map((p) => {
      if (p && typeof p === "object" && (p as ContentBlock).type === "text" && typeof (p as ContentBlock).text === "string") {
        return (p as ContentBlock).text as string;
      }
      if (p && typeof p === "object" && typeof (p as ContentBlock).type === "string") return `[${(p as ContentBlock).type}]`;
      return typeof p === "string" ? p : JSON.stringify(p);
    })
    .join("\n");
}

const RESULT_REASONS: Record<string, string> = {
  error_max_turns: "the agent reached its turn limit (max_turns) before finishing",
  error_max_budget_usd: "the agent reached its spending limit (max budget) before finishing",
  error_during_execution: "the agent failed during execution",
};

function resultErrorMessage(r: ResultEvent): string {
  if (r.errors && r.errors.length > 0) return r.errors.join("; ");
  if (r.result) return r.result;
  return RESULT_REASONS[r.subtype] ?? `the agent stopped with an error (${r.subtype})`;
}

type EndInfo = Parameters<TurnMapper["end"]>[0];

function endCode(o: EndInfo): string {
  if (!o) return "agent_exit";
  if (o.errorCode) return o.errorCode;
  if (o.cancelled) return "cancelled";
  if (o.timedOut) return "agent_timeout";
  return "agent_exit";
}

function endMessage(o: EndInfo): string {
  if (!o) return "the agent stopped before finishing its turn";
  if (o.cancelled) return "the turn was cancelled";
  const base = o.error ?? "the agent stopped before finishing its turn";
  if (o.garbageLines > 0 && !o.timedOut) {
    return `${base} (it also printed ${o.garbageLines} line(s) that are not stream-json)`;
  }
  return base;
}
