// Claude Code's stream-json lines → canonical turn events, one line at a time as it arrives
// (spec: Events, "SSE chunks"; issue 5 part 3).
//
// - thinking deltas pass through token by token;
// - tool_use input is assembled per block (per thread: sub-agents number their blocks from 0
//   too) and the call is emitted once, when the block is known complete;
// - a closed block is known complete when its assistant frame arrives (the CLI prints one per
//   completed block), a later block of its message starts, or its message ends normally; a
//   block the CLI abandons (a cut stream: `message_stop` with `abandoned_blocks`, then a retry
//   or a resume) is dropped, so a half answer never reaches a client (issue 36 part 3);
// - text is held: a complete text block waits until the next block of its thread starts (then it
//   was narration) or the turn ends (then it is the final answer), so every piece of text
//   reaches the client exactly once, and a turn ending on a tool call has no final;
// - a turn ends when the agent process ends, not at a `result` line: after a background
//   sub-agent the CLI runs a follow-up turn with its own result (issue 36 part 1). The last
//   result decides success; usage is summed over the results, the cost is the last one's (the
//   CLI's total_cost_usd is the run's running total);
// - tool results come from `user` lines; `is_error` is present only on failures;
// - `assistant` frames repeat finished blocks and are never re-emitted, except for their
//   `error` member (e.g. authentication_failed);
// - failure is decided by the result line's is_error, not by its subtype; a rejected
//   rate_limit_event is an error; an api_retry system line is a status (the agent waits to
//   retry the model API); other system lines, message_* events and signatures are ignored;
// - events with a parent_tool_use_id belong to a sub-agent: labelled, never narration or final
//   of the main thread; a sub-agent at work after the main thread's last text means the turn
//   goes on (a background sub-agent's follow-up turn comes), so that text was narration. The
//   CLI prints a sub-agent's work as whole assistant/user frames (no stream events): those
//   frames are mapped a block at a time;
// - a tool_result whose tool_use was never emitted is dropped (a client could not place it).
import { apiRetryOf, isUnrecoverable, nonEmpty, retryText } from "../agent/api-retry";
import { type AgentOutcome, addUsage } from "../agent/outcome";
import type { AbandonedBlocks, AgentEvent, ContentBlock, ResultEvent, StreamEventLine, Usage, UserEvent } from "../agent/stream-json";
import type { ParentToolUseId, TurnEvent } from "./turn-events";
import { chatUsage, ZERO_USAGE } from "./usage";

type Block = { kind: "text"; parts: string[] } | { kind: "tool_use"; id: string; name: string; json: string; input: unknown } | { kind: "other" };

/** A block of the message being streamed, with whether it is known complete. */
interface OpenBlock {
  block: Block;
  complete: boolean;
}

interface Thread {
  /** Started, not yet stopped. */
  blocks: Map<number, OpenBlock>;
  /** The message being streamed (message_start); frames of another message are not its repeats. */
  messageId: string | undefined;
  /** Assistant frames seen for that message: each repeats one completed block, in order. */
  frames: number;
  /** stream_event lines came for this thread: its assistant frames only repeat streamed blocks. */
  streamed: boolean;
}

/** A closed block not yet known complete: it is emitted once it is, dropped if it was abandoned. */
interface Pending {
  parent: ParentToolUseId;
  index: number;
  messageId: string | undefined;
  block: Block;
}

const MAIN = "";
const key = (parent: ParentToolUseId) => parent ?? MAIN;

export class TurnMapper {
  private readonly threads = new Map<string, Thread>();
  /** Closed blocks, in the order they closed, waiting to be known complete. */
  private pending: Pending[] = [];
  /** The main thread's last complete text block, not yet known to be narration or final. */
  private held: string | undefined;
  private finalSent = false;
  /** Any block was seen, streamed or framed. */
  private sawBlocks = false;
  private readonly results: ResultEvent[] = [];
  private ended = false;
  /** tool_use ids emitted: a tool_result is shown only after its call. */
  private readonly calls = new Set<string>();
  private readonly errors = new Set<string>();

  /**
   * live: main-thread text deltas also go out as text_delta events as they arrive.
   * frames: map whole assistant frames of the main thread when no partial messages come
   * (background jobs run without --include-partial-messages). Off for the chat stream, whose
   * spec keeps the result text as legacy assistant text then. A sub-agent's frames are mapped
   * either way (the CLI streams no events for them).
   */
  constructor(private readonly opts: { live?: boolean; frames?: boolean } = {}) {}

  /** The events one agent line maps to (often none), appended to `out` when given. */
  push(ev: AgentEvent, out: TurnEvent[] = []): TurnEvent[] {
    switch (ev.type) {
      case "stream_event":
        this.onStreamEvent(ev.event, ev.parent_tool_use_id, ev.abandoned_blocks, out);
        break;
      case "user":
        // The thread went on to tool results: its message is over, whatever it streamed is complete.
        this.commitPending(out, (p) => p.parent === ev.parent_tool_use_id);
        this.onUser(ev.message.content, ev.parent_tool_use_id, out);
        break;
      case "assistant": {
        const apiError = nonEmpty(ev.error);
        if (apiError !== undefined) {
          const text = ev.message.content
            .flatMap((b) => (b.type === "text" && typeof b.text === "string" ? [b.text] : []))
            .join("\n")
            .trim();
          this.error(apiError, text || `the model API answered with an error (${apiError})`, out);
        } else if (this.thread(ev.parent_tool_use_id).streamed) {
          // The frame repeats a block that was streamed: it says the block is complete.
          this.onRepeatFrame(ev.message.id, ev.message.content.length, ev.parent_tool_use_id, out);
        } else if (ev.parent_tool_use_id !== null || this.opts.frames) {
          // A sub-agent's work, or a run without --include-partial-messages: the frames are all there is.
          this.onFrame(ev.message.content, ev.parent_tool_use_id, out);
        }
        break;
      }
      case "rate_limit_event":
        this.onRateLimit(ev, out);
        break;
      case "result":
        // Not the end of the turn: a follow-up turn (after a background sub-agent) may come.
        this.commitPending(out);
        this.results.push(ev);
        break;
      case "system": {
        const retry = apiRetryOf(ev);
        // One that retrying cannot fix stops the run (agent/process.ts): its error comes at the end.
        if (retry && !isUnrecoverable(retry)) out.push({ type: "status", code: "api_retry", message: retryText(retry), retry });
        break;
      }
      default:
        // unknown types: nothing for the client (other system lines: init, status, hook_*, task_*).
        break;
    }
    return out;
  }

  /**
   * After the last line, with how the process ended: the turn's answer (the held text, final
   * when the last result line says success), and its failure when it did not end with one
   * (crash, non-zero exit, garbage, timeout); then the usage. Once.
   */
  end(
    outcome: Pick<AgentOutcome, "failed" | "error" | "errorCode" | "exitCode" | "signal" | "garbageLines" | "cancelled" | "timedOut"> | undefined,
  ): TurnEvent[] {
    const out: TurnEvent[] = [];
    if (this.ended) return out;
    this.ended = true;
    // What closed and was never contradicted: the process is gone, nothing will abandon it now.
    this.commitPending(out);
    const last = this.results.at(-1);
    if (!last) {
      // The turn never finished: whatever text was held was narration, not an answer.
      this.flushHeld("narration", out);
      this.error(endCode(outcome), endMessage(outcome), out);
    } else if (last.is_error) {
      // A failed turn has no answer: what was held is narration, then the reason.
      this.flushHeld("narration", out);
      this.error(last.subtype && last.subtype !== "success" ? last.subtype : "agent_error", resultErrorMessage(last), out);
    } else {
      this.flushHeld("final", out);
      if (!this.finalSent && !this.sawBlocks && last.result) {
        // No block was streamed at all (no --include-partial-messages): the result text is the answer.
        this.finalSent = true;
        out.push({ type: "final", text: last.result, legacy: true });
      }
      if (outcome?.failed && this.errors.size === 0) this.error(endCode(outcome), outcome.error ?? "the agent failed", out);
    }
    out.push(this.usage());
    return out;
  }

  /** The turn's usage: summed over its result lines (each counts its own turn); cost and session from the last. */
  private usage(): TurnEvent {
    const last = this.results.at(-1);
    if (!last) return { type: "usage", usage: ZERO_USAGE };
    return {
      type: "usage",
      usage: chatUsage(this.results.reduce<Usage | undefined>((sum, r) => (r.usage ? addUsage(sum, r.usage) : sum), undefined)),
      costUsd: last.total_cost_usd,
      sessionId: typeof last.session_id === "string" ? last.session_id : undefined,
      numTurns: this.results.some((r) => typeof r.num_turns === "number") ? this.results.reduce((n, r) => n + (r.num_turns ?? 0), 0) : undefined,
    };
  }

  private thread(parent: ParentToolUseId): Thread {
    const k = key(parent);
    let t = this.threads.get(k);
    if (!t) {
      t = { blocks: new Map(), messageId: undefined, frames: 0, streamed: false };
      this.threads.set(k, t);
    }
    return t;
  }

  private onStreamEvent(e: StreamEventLine["event"], parent: ParentToolUseId, abandoned: AbandonedBlocks | undefined, out: TurnEvent[]): void {
    const t = this.thread(parent);
    t.streamed = true;
    // Typed by the SDK, but only `type` was checked when the line was read.
    const index = "index" in e && typeof e.index === "number" ? e.index : 0;
    switch (e.type) {
      case "message_start":
        t.messageId = typeof e.message?.id === "string" ? e.message.id : undefined;
        t.frames = 0;
        t.blocks.clear();
        break;
      case "content_block_start": {
        // Blocks stream one after another: the ones before this of its message are complete.
        for (const [i, b] of t.blocks) if (i < index) b.complete = true;
        this.commitPending(out, (p) => p.parent === parent && p.messageId === t.messageId && p.index < index);
        if (parent === null) this.flushHeld("narration", out);
        this.sawBlocks = true;
        const cb: Partial<ContentBlock> = e.content_block ?? {};
        const block: Block =
          cb.type === "text"
            ? { kind: "text", parts: typeof cb.text === "string" && cb.text !== "" ? [cb.text] : [] }
            : cb.type === "tool_use" || cb.type === "server_tool_use" || cb.type === "mcp_tool_use"
              ? { kind: "tool_use", id: String(cb.id ?? ""), name: String(cb.name ?? "tool"), json: "", input: cb.input }
              : { kind: "other" };
        t.blocks.set(index, { block, complete: index < t.frames });
        if (this.opts.live && parent === null && block.kind === "text" && block.parts.length > 0) {
          out.push({ type: "text_delta", text: block.parts[0]!, blockStart: true });
        }
        if (cb.type === "thinking" && typeof cb.thinking === "string" && cb.thinking !== "") {
          out.push({ type: "thinking", text: cb.thinking, parentToolUseId: parent });
        }
        break;
      }
      case "content_block_delta": {
        const d: Partial<typeof e.delta> = e.delta ?? {};
        const block = t.blocks.get(index)?.block;
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
        const open = t.blocks.get(index);
        t.blocks.delete(index);
        if (!open) break;
        const p: Pending = { parent, index, messageId: t.messageId, block: open.block };
        if (open.complete) this.commit(p, out);
        else this.pending.push(p);
        break;
      }
      case "message_delta":
        // The API finished the message (its stop reason): every block of it is complete.
        this.commitPending(out, (p) => p.parent === parent && p.messageId === t.messageId);
        break;
      case "message_stop": {
        const from = abandonedFrom(abandoned);
        if (from !== undefined) {
          // A cut stream: the blocks from `from` on are thrown away by the CLI, and so here.
          this.pending = this.pending.filter((p) => !(p.parent === parent && p.messageId === t.messageId && p.index >= from));
        }
        this.commitPending(out, (p) => p.parent === parent && p.messageId === t.messageId);
        t.blocks.clear();
        break;
      }
      default:
        // ping and whatever the API adds.
        break;
    }
  }

  /** A frame repeating `count` streamed blocks of the thread's message: those blocks are complete. */
  private onRepeatFrame(messageId: unknown, count: number, parent: ParentToolUseId, out: TurnEvent[]): void {
    const t = this.thread(parent);
    if (messageId !== undefined && t.messageId !== undefined && messageId !== t.messageId) return;
    t.frames += count;
    for (const [i, b] of t.blocks) if (i < t.frames) b.complete = true;
    this.commitPending(out, (p) => p.parent === parent && p.messageId === t.messageId && p.index < t.frames);
  }

  /** Emits the pending blocks that `which` selects (all by default), in the order they closed. */
  private commitPending(out: TurnEvent[], which: (p: Pending) => boolean = () => true): void {
    if (this.pending.length === 0) return;
    const keep: Pending[] = [];
    const go: Pending[] = [];
    for (const p of this.pending) (which(p) ? go : keep).push(p);
    this.pending = keep;
    for (const p of go) this.commit(p, out);
  }

  /** A complete block: main-thread text is held (narration or final is decided later), the rest goes out. */
  private commit(p: Pending, out: TurnEvent[]): void {
    const { block, parent } = p;
    if (block.kind === "text") {
      const text = block.parts.join("");
      if (text === "") return;
      this.flushHeld("narration", out);
      if (parent === null) this.held = text;
      else out.push({ type: "narration", text, parentToolUseId: parent });
    } else if (block.kind === "tool_use") {
      this.flushHeld("narration", out);
      this.calls.add(block.id);
      out.push({ type: "tool_call", id: block.id, name: block.name, input: parseInput(block), parentToolUseId: parent });
    }
  }

  /** A whole block per assistant frame: the same events the deltas would have made, a block at a time. */
  private onFrame(content: ContentBlock[], parent: ParentToolUseId, out: TurnEvent[]): void {
    for (const b of content) {
      this.flushHeld("narration", out);
      this.sawBlocks = true;
      if (b.type === "thinking" && typeof b.thinking === "string" && b.thinking !== "") {
        out.push({ type: "thinking", text: b.thinking, parentToolUseId: parent });
      } else if (b.type === "text" && typeof b.text === "string" && b.text !== "") {
        if (parent === null) this.held = b.text;
        else out.push({ type: "narration", text: b.text, parentToolUseId: parent });
      } else if (b.type === "tool_use" || b.type === "server_tool_use" || b.type === "mcp_tool_use") {
        const id = String(b.id ?? "");
        this.calls.add(id);
        out.push({ type: "tool_call", id, name: String(b.name ?? "tool"), input: b.input ?? {}, parentToolUseId: parent });
      }
    }
  }

  private onUser(content: UserEvent["message"]["content"], parent: ParentToolUseId, out: TurnEvent[]): void {
    if (typeof content === "string") return;
    for (const b of content) {
      if (b.type !== "tool_result") continue;
      const id = String(b.tool_use_id ?? "");
      if (!this.calls.has(id)) continue;
      this.flushHeld("narration", out);
      out.push({
        type: "tool_result",
        toolUseId: id,
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

/** `abandoned_blocks: {from_block_index}` of a message_stop: the first block the CLI threw away. */
function abandonedFrom(v: unknown): number | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const from = (v as { from_block_index?: unknown }).from_block_index;
  return typeof from === "number" && Number.isFinite(from) ? from : 0;
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
      const part = (p && typeof p === "object" ? p : {}) as { type?: unknown; text?: unknown };
      if (part.type === "text" && typeof part.text === "string") return part.text;
      if (typeof part.type === "string") return `[${part.type}]`;
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
