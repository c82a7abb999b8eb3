// One run's agent events → the job's event log and running totals (issue 18, parts 1 and 2).
// The mapping is the chat stream's (TurnMapper); the running usage is summed per model message
// (frames of one message repeat its usage) until the result lines give the final figures: the
// sum of their usage and turns (a follow-up turn after a background sub-agent has its own
// result), the last one's cost (the CLI's total_cost_usd is the run's running total).

import { log } from "../../../common/logger";
import type { AgentEvent } from "../../agent/stream-json";
import { TurnMapper } from "../../chat/turn-mapper";
import { fromTurnEvent, type JobEvent, jsonOf, type RunningUsage } from "./schema";
import type { JobEventStore } from "./store";

const logger = log("job-events");

/** What the job record carries while the job runs. */
export interface JobProgress {
  usage: RunningUsage;
  total_cost_usd: number | null;
  num_turns: number;
  duration_ms: number;
  session_id?: string;
}

export interface RecorderOptions {
  store: JobEventStore;
  jobId: string;
  /** The log's size bound: past it, text, thinking and tool events are dropped (with one `cut` event). */
  maxBytes: number;
  /** Called with the running totals (and a `usage` event logged), at most every progressMs and once at the end. */
  onProgress: (p: JobProgress) => void;
  progressMs?: number;
  /** How long events gather before they are appended (default 2 ms). */
  writeTickMs?: number;
  now?: () => number;
}

const WRITE_TICK_MS = 2;

/** How the run ended, as far as the mapper needs to know it. */
export interface RunEnd {
  status: "succeeded" | "failed" | "cancelled";
  exit_code: number | null;
  error?: string;
  timed_out?: boolean;
}

const KEPT_AFTER_CUT = new Set<JobEvent["type"]>(["status", "usage", "error"]);
const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);

export class RunRecorder {
  private readonly mapper = new TurnMapper({ frames: true });
  private readonly started: number;
  private readonly now: () => number;
  private readonly seenMessages = new Set<string>();
  private usage: RunningUsage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  private cost: number | null = null;
  private turns = 0;
  /** The result lines so far, summed. */
  private results: { usage: RunningUsage; turns: number } | undefined;
  private finalDuration: number | undefined;
  private sessionId: string | undefined;
  private bytes = 0;
  private cut = false;
  private pending: JobEvent[] = [];
  /** The pending events' JSON, made once here (to measure each) and handed to the store. */
  private pendingJson: string[] = [];
  private writing: Promise<void> = Promise.resolve();
  private lastProgress = 0;
  private failures = 0;

  constructor(private readonly opts: RecorderOptions) {
    this.now = opts.now ?? Date.now;
    this.started = this.now();
  }

  /** One agent line, as it arrives. Never throws. */
  /** The last event's time as text: a burst's lines share a millisecond, and one string. */
  private atMs = -1;
  private atText = "";

  push = (ev: AgentEvent): void => {
    const ms = this.now();
    if (ms !== this.atMs) [this.atMs, this.atText] = [ms, new Date(ms).toISOString()];
    const at = this.atText;
    let usageChanged = false;
    if (ev.type === "system" && ev.subtype === "init" && typeof ev.session_id === "string") this.sessionId = ev.session_id;
    if (ev.type === "assistant") {
      const id = typeof ev.message.id === "string" ? ev.message.id : undefined;
      if (id && !this.seenMessages.has(id)) {
        this.seenMessages.add(id);
        const u = ev.message.usage ?? {};
        this.usage = {
          input_tokens: this.usage.input_tokens + n(u.input_tokens),
          output_tokens: this.usage.output_tokens + n(u.output_tokens),
          cache_creation_input_tokens: this.usage.cache_creation_input_tokens + n(u.cache_creation_input_tokens),
          cache_read_input_tokens: this.usage.cache_read_input_tokens + n(u.cache_read_input_tokens),
        };
        if (ev.parent_tool_use_id === null) this.turns++;
        usageChanged = true;
      }
    }
    if (ev.type === "result") {
      const u = ev.usage ?? {};
      const before = this.results ?? { usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }, turns: 0 };
      this.results = {
        usage: {
          input_tokens: before.usage.input_tokens + n(u.input_tokens),
          output_tokens: before.usage.output_tokens + n(u.output_tokens),
          cache_creation_input_tokens: before.usage.cache_creation_input_tokens + n(u.cache_creation_input_tokens),
          cache_read_input_tokens: before.usage.cache_read_input_tokens + n(u.cache_read_input_tokens),
        },
        turns: before.turns + n(ev.num_turns),
      };
      this.usage = this.results.usage;
      if (typeof ev.total_cost_usd === "number") this.cost = ev.total_cost_usd;
      if (typeof ev.num_turns === "number") this.turns = this.results.turns;
      if (typeof ev.duration_ms === "number") this.finalDuration = (this.finalDuration ?? 0) + ev.duration_ms;
      if (typeof ev.session_id === "string") this.sessionId = ev.session_id;
      usageChanged = true;
    }
    for (const te of this.mapper.push(ev)) {
      const je = fromTurnEvent(te, at);
      if (je) this.add(je);
    }
    if (usageChanged) {
      this.dirty = true;
      this.progress(ev.type === "result");
    }
    // A result line ends a turn: its events go now, not a tick later.
    if (ev.type === "result") this.writeNow();
  };

  /** After the agent has exited: what the mapper still holds, the end's error, the last totals; resolves when written. */
  async finish(end: RunEnd): Promise<JobProgress> {
    const at = new Date(this.now()).toISOString();
    const events = this.mapper.end({
      failed: end.status !== "succeeded",
      error: end.error,
      exitCode: end.exit_code,
      signal: null,
      garbageLines: 0,
      cancelled: end.status === "cancelled",
      timedOut: end.timed_out === true,
    });
    for (const te of events) {
      const je = fromTurnEvent(te, at);
      if (je) {
        this.add(je);
        // The totals close the log, after the answer (known only now the agent has exited).
        if (je.type !== "usage") this.dirty = true;
      }
    }
    this.progress(true);
    await this.flushNow();
    return this.totals();
  }

  totals(): JobProgress {
    return {
      usage: this.usage,
      total_cost_usd: this.cost,
      num_turns: this.turns,
      duration_ms: this.finalDuration ?? this.now() - this.started,
      ...(this.sessionId && { session_id: this.sessionId }),
    };
  }

  private usageEvent(at: string): JobEvent {
    const t = this.totals();
    return { type: "usage", at, usage: t.usage, total_cost_usd: t.total_cost_usd, num_turns: t.num_turns, duration_ms: t.duration_ms };
  }

  /** Reports the totals now, or at the end of the current window (so the last change is never lost). */
  private progressTimer: ReturnType<typeof setTimeout> | undefined;
  private dirty = false;
  private progress(force: boolean): void {
    if (!this.dirty) return;
    const t = this.now();
    const every = this.opts.progressMs ?? 1_000;
    if (!force && t - this.lastProgress < every) {
      this.progressTimer ??= setTimeout(
        () => {
          this.progressTimer = undefined;
          this.progress(true);
        },
        every - (t - this.lastProgress),
      );
      return;
    }
    if (this.progressTimer) clearTimeout(this.progressTimer);
    this.progressTimer = undefined;
    this.lastProgress = t;
    this.dirty = false;
    this.add(this.usageEvent(new Date(t).toISOString()));
    try {
      this.opts.onProgress(this.totals());
    } catch (err) {
      logger.warn(`job ${this.opts.jobId}: recording progress failed: ${(err as Error).message}`);
    }
  }

  private add(e: JobEvent): void {
    if (this.cut && !KEPT_AFTER_CUT.has(e.type)) return;
    const json = jsonOf(e);
    const size = json.length + 1;
    if (!this.cut && this.bytes + size > this.opts.maxBytes && !KEPT_AFTER_CUT.has(e.type)) {
      this.cut = true;
      const cut: JobEvent = {
        type: "cut",
        at: e.at,
        limit_bytes: this.opts.maxBytes,
        message: `the event log reached its limit (${this.opts.maxBytes} bytes): later text, thinking and tool events are not kept; status, usage and errors still are`,
      };
      this.pending.push(cut);
      this.pendingJson.push(jsonOf(cut));
      this.schedule();
      return;
    }
    this.bytes += size;
    this.pending.push(e);
    this.pendingJson.push(json);
    this.schedule();
  }

  /**
   * Appends once per tick (writeTickMs), one in flight at a time: a burst of agent lines is one
   * append and one wake of the watchers, not one per line (each costs file or Redis I/O and a
   * read by every watcher). What arrives while an append is in flight goes in the next one.
   */
  private tick: ReturnType<typeof setTimeout> | undefined;
  private schedule(): void {
    if (this.tick) return;
    this.tick = setTimeout(() => {
      this.tick = undefined;
      this.writing = this.writing.then(() => this.write());
    }, this.opts.writeTickMs ?? WRITE_TICK_MS);
  }

  /** The pending events in the next append, without waiting for the tick. */
  private writeNow(): void {
    if (this.tick) clearTimeout(this.tick);
    this.tick = undefined;
    this.writing = this.writing.then(() => this.write());
  }

  private async write(): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    const json = this.pendingJson;
    this.pending = [];
    this.pendingJson = [];
    try {
      await this.opts.store.append(this.opts.jobId, batch, json);
    } catch (err) {
      if (this.failures++ === 0) logger.warn(`job ${this.opts.jobId}: events not kept: ${(err as Error).message}`);
    }
  }

  private async flushNow(): Promise<void> {
    this.writeNow();
    await this.writing;
  }
}
