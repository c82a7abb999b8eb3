// Canonical turn events → the OpenAI Responses API (issue 15 part 6): the typed stream events
// (response.created, response.in_progress, output_item.added/done, content_part.added/done,
// output_text.delta/done, reasoning_summary_* when thinking is visible, response.completed with
// usage, or response.failed) and the response object they add up to. The same visibility config
// as chat completions decides what is shown; each block is its own output item:
// - thinking → a reasoning item whose summary text streams token by token;
// - narration → a message item with phase "commentary" (ending with a paragraph break, since
//   SDKs join all output_text into one string), final → phase "final_answer";
// - tool calls and results, when tools are visible → commentary items holding the same fenced
//   blocks as chat completions (never function_call items: clients would try to run them);
// - live text → a message item per text block, its deltas as they arrive.
import { fenced, pretty, visible, withParagraphEnd } from "./openai-chunks";
import type { TurnEvent } from "./turn-events";
import { type ChatUsage, responsesUsage, ZERO_USAGE } from "./usage";
import type { Visibility } from "./visibility";

export interface ResponseContext {
  /** resp_<hex> */
  id: string;
  /** The hex of the id: item ids are msg_<hex>_<n> and rs_<hex>_<n>, so an item names its response. */
  hex: string;
  createdAt: number;
  model: string;
  instructions: string | null;
  previousResponseId: string | null;
  metadata: Record<string, string>;
  user: string | null;
}

type Phase = "commentary" | "final_answer";
type MessageItem = {
  id: string;
  type: "message";
  status: "in_progress" | "completed";
  role: "assistant";
  content: Array<{ type: "output_text"; text: string; annotations: never[]; logprobs: never[] }>;
  phase?: Phase;
};
type ReasoningItem = { id: string; type: "reasoning"; status: "in_progress" | "completed"; summary: Array<{ type: "summary_text"; text: string }> };
export type OutputItem = MessageItem | ReasoningItem;

export type ResponseStreamEvent = { type: string; sequence_number: number; [k: string]: unknown };

interface Open {
  item: OutputItem;
  index: number;
  text: string;
  /** A message of live text (deltas appended as they come). */
  live: boolean;
  /** SSE text sink: the item's delta event up to its sequence number, and from there to the delta (made at the first delta). */
  deltaHead?: string;
  deltaMid?: string;
}

/**
 * Where stream events go: each event as an object, or (the stream's hot path) as SSE text
 * (`event: <type>\ndata: <json>\n\n`), where a delta event is the item's precomputed JSON around the
 * sequence number and the delta's string: byte for byte what JSON.stringify of the object gives.
 */
export type ResponseSink = ((ev: ResponseStreamEvent) => void) | { sse: (text: string) => void };

export class ResponseBuilder {
  private seq = 0;
  private readonly output: OutputItem[] = [];
  private current: Open | undefined;
  private usage: ChatUsage = ZERO_USAGE;
  private textSent = false;
  failure: { code: string; message: string } | undefined;

  constructor(
    private readonly ctx: ResponseContext,
    private readonly visibility: Visibility,
    /** Where stream events go; undefined on the non-streaming path. */
    private readonly sink?: ResponseSink,
  ) {}

  private send(type: string, body: Record<string, unknown>): void {
    const sink = this.sink;
    if (!sink) return;
    const ev = { type, sequence_number: this.seq++, ...body };
    if (typeof sink === "function") sink(ev);
    else sink.sse(`event: ${type}\ndata: ${JSON.stringify(ev)}\n\n`);
  }

  /**
   * A reasoning_summary_text.delta or output_text.delta of the open item, the per-token event:
   * as SSE text, the item's JSON is made once and only the sequence number and delta change.
   */
  private sendDelta(cur: Open, delta: string): void {
    const sink = this.sink;
    if (!sink) return;
    const reasoning = cur.item.type === "reasoning";
    const type = reasoning ? "response.reasoning_summary_text.delta" : "response.output_text.delta";
    if (typeof sink === "function") {
      const seq = this.seq++;
      sink(
        reasoning
          ? { type, sequence_number: seq, item_id: cur.item.id, output_index: cur.index, summary_index: 0, delta }
          : { type, sequence_number: seq, item_id: cur.item.id, output_index: cur.index, content_index: 0, delta, logprobs: [] },
      );
      return;
    }
    if (cur.deltaHead === undefined) {
      cur.deltaHead = `event: ${type}\ndata: {"type":"${type}","sequence_number":`;
      cur.deltaMid = `,"item_id":${JSON.stringify(cur.item.id)},"output_index":${cur.index},${reasoning ? '"summary_index"' : '"content_index"'}:0,"delta":`;
    }
    sink.sse(`${cur.deltaHead}${this.seq++}${cur.deltaMid}${JSON.stringify(delta)}${reasoning ? "}\n\n" : ',"logprobs":[]}\n\n'}`);
  }

  start(): void {
    const r = this.response("in_progress");
    this.send("response.created", { response: r });
    this.send("response.in_progress", { response: r });
  }

  push(ev: TurnEvent): void {
    const v = this.visibility;
    if (ev.type === "usage") {
      this.usage = ev.usage;
      return;
    }
    // Live text: the block's kind is known only when it closes; it names the item's phase then.
    if ((ev.type === "narration" || ev.type === "final") && this.current?.live && (ev.type === "final" || ev.parentToolUseId === null)) {
      (this.current.item as MessageItem).phase = ev.type === "final" ? "final_answer" : "commentary";
    }
    if (!visible(ev, v)) return;
    switch (ev.type) {
      case "thinking":
        if (this.current?.item.type !== "reasoning") this.openReasoning();
        this.current!.text += ev.text;
        this.sendDelta(this.current!, ev.text);
        break;
      case "text_delta": {
        if (ev.blockStart || !this.current?.live) this.openMessage(undefined, true);
        const text = ev.blockStart && this.textSent ? `\n\n${ev.text}` : ev.text;
        this.textSent = true;
        this.delta(text);
        break;
      }
      case "narration":
        this.whole(withParagraphEnd(ev.text), "commentary");
        break;
      case "final":
        this.whole(ev.text, "final_answer");
        break;
      case "tool_call":
        this.whole(fenced(`tool_use:${ev.name}`, pretty(ev.input)), "commentary");
        break;
      case "tool_result":
        this.whole(fenced(ev.isError ? "tool_result:error" : "tool_result", ev.content), "commentary");
        break;
      case "status":
        // The agent retrying the model API: a commentary line, as on chat completions.
        this.whole(`_${ev.message}_\n\n`, "commentary");
        break;
      case "error":
        this.close();
        this.failure ??= { code: ev.code, message: ev.message };
        break;
    }
  }

  /** A message of fixed text (the /stream-status reply). */
  text(text: string): void {
    this.whole(text, "final_answer");
  }

  /** The service itself failed mid-stream: an `error` event now, response.failed at finish(). */
  fail(code: string, message: string): void {
    this.close();
    this.send("error", { code, message, param: null });
    this.failure ??= { code, message };
  }

  /** Closes the stream with response.completed or response.failed; the response object. */
  finish() {
    this.close();
    if (this.failure) {
      const r = this.response("failed");
      this.send("response.failed", { response: r });
      return r;
    }
    const r = this.response("completed");
    this.send("response.completed", { response: r });
    return r;
  }

  response(status: "in_progress" | "completed" | "failed") {
    const c = this.ctx;
    return {
      id: c.id,
      object: "response" as const,
      created_at: c.createdAt,
      status,
      error: status === "failed" && this.failure ? { code: this.failure.code, message: this.failure.message } : null,
      incomplete_details: null,
      instructions: c.instructions,
      max_output_tokens: null,
      model: c.model,
      output: status === "in_progress" ? [] : this.output,
      parallel_tool_calls: false,
      previous_response_id: c.previousResponseId,
      reasoning: { effort: null, summary: null },
      store: true,
      temperature: null,
      text: { format: { type: "text" as const } },
      tool_choice: "none" as const,
      tools: [],
      top_p: null,
      truncation: "disabled" as const,
      usage: status === "in_progress" ? null : responsesUsage(this.usage),
      user: c.user,
      metadata: c.metadata,
    };
  }

  private whole(text: string, phase: Phase): void {
    this.openMessage(phase, false);
    this.delta(text);
    this.close();
  }

  private delta(text: string): void {
    const cur = this.current!;
    cur.text += text;
    this.sendDelta(cur, text);
  }

  private openMessage(phase: Phase | undefined, live: boolean): void {
    this.close();
    const index = this.output.length;
    const item: MessageItem = {
      id: `msg_${this.ctx.hex}_${index}`,
      type: "message",
      status: "in_progress",
      role: "assistant",
      content: [],
      ...(phase ? { phase } : {}),
    };
    this.output.push(item);
    this.current = { item, index, text: "", live };
    this.send("response.output_item.added", { output_index: index, item: { ...item, content: [] } });
    this.send("response.content_part.added", {
      item_id: item.id,
      output_index: index,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [], logprobs: [] },
    });
  }

  private openReasoning(): void {
    this.close();
    const index = this.output.length;
    const item: ReasoningItem = { id: `rs_${this.ctx.hex}_${index}`, type: "reasoning", status: "in_progress", summary: [] };
    this.output.push(item);
    this.current = { item, index, text: "", live: false };
    this.send("response.output_item.added", { output_index: index, item: { ...item, summary: [] } });
    this.send("response.reasoning_summary_part.added", { item_id: item.id, output_index: index, summary_index: 0, part: { type: "summary_text", text: "" } });
  }

  private close(): void {
    const cur = this.current;
    if (!cur) return;
    this.current = undefined;
    const { item, index, text } = cur;
    item.status = "completed";
    if (item.type === "message") {
      const part = { type: "output_text" as const, text, annotations: [] as never[], logprobs: [] as never[] };
      item.content = [part];
      this.send("response.output_text.done", { item_id: item.id, output_index: index, content_index: 0, text, logprobs: [] });
      this.send("response.content_part.done", { item_id: item.id, output_index: index, content_index: 0, part });
    } else {
      const part = { type: "summary_text" as const, text };
      item.summary = [part];
      this.send("response.reasoning_summary_text.done", { item_id: item.id, output_index: index, summary_index: 0, text });
      this.send("response.reasoning_summary_part.done", { item_id: item.id, output_index: index, summary_index: 0, part });
    }
    this.send("response.output_item.done", { output_index: index, item });
  }
}
