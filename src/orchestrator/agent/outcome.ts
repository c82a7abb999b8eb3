// What one agent run came to: folded from its events as they pass, then closed with how the
// process ended. Failure is decided by the result line's `is_error` (the subtype is only
// informative: an auth failure arrives as subtype "success" with is_error true), by a missing
// result line, by the exit status, and by cancel or timeout.
import { type ApiRetry, apiRetryOf, isUnrecoverable, nonEmpty, unrecoverableText } from "./api-retry";
import { ROOT_REFUSAL, ROOT_WITHOUT_SANDBOX } from "./root-sandbox";
import type { AgentEvent, ContentBlock, Usage } from "./stream-json";

/** OpenAI-style counts: prompt = input + cache creation + cache read; completion = output. */
export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface AgentOutcome {
  exitCode: number | null;
  /** The signal that ended the process (e.g. "SIGKILL"), else null. */
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  /** From the result or init line; else the one the run was started with. */
  sessionId?: string;
  /** True when the run did not succeed, for whatever reason; `error` says why. */
  failed: boolean;
  error?: string;
  /** Machine-readable kind of a model API failure (authentication_failed, …), when there was one. */
  errorCode?: string;
  /** The last api_retry line, when the CLI retried the model API. */
  lastRetry?: ApiRetry;
  /** The result line's text. */
  resultText?: string;
  /** The last text block of the main thread (sub-agents excluded): an output when there is no result text. */
  lastAssistantText?: string;
  isError: boolean;
  subtype?: string;
  errors: string[];
  usage?: TokenUsage;
  costUsd?: number;
  numTurns?: number;
  /** Last bytes of stderr (raw: redact before showing it to anyone). */
  stderrTail: string;
  /** Lines that were not JSON objects with a type (logged, otherwise ignored). */
  garbageLines: number;
}

function toTokenUsage(u: Usage | undefined): TokenUsage | undefined {
  if (!u) return undefined;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  const prompt = n(u.input_tokens) + n(u.cache_creation_input_tokens) + n(u.cache_read_input_tokens);
  const completion = n(u.output_tokens);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

const USAGE_KEYS = ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"] as const;

/** Two result lines' usage, added up (the token counts; other members are not summed). */
export function addUsage(a: Usage | undefined, b: Usage): Usage {
  const sum: Usage = {};
  for (const k of USAGE_KEYS) {
    const x = a?.[k];
    const y = b[k];
    const add = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
    if (typeof x === "number" || typeof y === "number") sum[k] = add(x) + add(y);
  }
  return sum;
}

const textOf = (content: ContentBlock[]): string | undefined => {
  const texts = content.flatMap((b) => (b.type === "text" && typeof b.text === "string" ? [b.text] : []));
  return texts.length > 0 ? texts[texts.length - 1] : undefined;
};

export interface ProcessEnd {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  timeoutMs?: number;
  cancelled: boolean;
  stderrTail: string;
}

export class OutcomeCollector {
  private sessionId: string | undefined;
  /** The last result line: a run with a background sub-agent has one more, for its follow-up turn. */
  private result: Extract<AgentEvent, { type: "result" }> | undefined;
  /** Usage and turns summed over the result lines (each counts its own turn). */
  private usage: Usage | undefined;
  private turns: number | undefined;
  private lastText: string | undefined;
  private apiError: string | undefined;
  private lastRetry: ApiRetry | undefined;
  /** Set by an api_retry line that retrying cannot fix: the run must be stopped now. */
  unrecoverable: ApiRetry | undefined;
  garbageLines = 0;

  constructor(startSessionId?: string) {
    this.sessionId = startSessionId;
  }

  add(ev: AgentEvent): void {
    switch (ev.type) {
      case "system": {
        if (ev.subtype === "init" && typeof ev.session_id === "string") this.sessionId = ev.session_id;
        const retry = apiRetryOf(ev);
        if (retry) {
          this.lastRetry = retry;
          if (isUnrecoverable(retry)) this.unrecoverable ??= retry;
        }
        break;
      }
      case "assistant":
        this.apiError ??= nonEmpty(ev.error);
        if (ev.parent_tool_use_id === null) this.lastText = textOf(ev.message.content) ?? this.lastText;
        break;
      case "result":
        this.result = ev;
        if (ev.usage) this.usage = addUsage(this.usage, ev.usage);
        if (ev.num_turns !== undefined) this.turns = (this.turns ?? 0) + ev.num_turns;
        if (typeof ev.session_id === "string") this.sessionId = ev.session_id;
        break;
    }
  }

  finish(end: ProcessEnd): AgentOutcome {
    const r = this.result;
    const base = {
      exitCode: end.exitCode,
      signal: end.signal,
      timedOut: end.timedOut,
      cancelled: end.cancelled,
      sessionId: this.sessionId,
      resultText: r?.result,
      lastAssistantText: this.lastText,
      isError: r?.is_error ?? false,
      subtype: r?.subtype,
      errors: r?.errors ?? [],
      usage: toTokenUsage(this.usage),
      // The CLI's total_cost_usd is the run's running total: the last one is the run's cost.
      costUsd: r?.total_cost_usd,
      numTurns: this.turns,
      stderrTail: end.stderrTail,
      garbageLines: this.garbageLines,
    };
    const error = this.failure(end);
    const errorCode = this.unrecoverable?.error ?? this.apiError;
    return {
      ...base,
      failed: error !== undefined,
      error,
      ...(error !== undefined && errorCode && { errorCode }),
      ...(this.lastRetry && { lastRetry: this.lastRetry }),
    };
  }

  private failure(end: ProcessEnd): string | undefined {
    const r = this.result;
    // Stopped by us on a refusal no retry can fix (before cancel: that is how it was stopped).
    if (this.unrecoverable) return unrecoverableText(this.unrecoverable);
    if (end.cancelled) return "cancelled";
    if (ROOT_REFUSAL.test(end.stderrTail))
      return `${ROOT_WITHOUT_SANDBOX} (the CLI said: ${end.stderrTail
        .split("\n")
        .find((l) => ROOT_REFUSAL.test(l))
        ?.trim()})`;
    if (end.timedOut) return `the agent ran past its timeout (${Math.round((end.timeoutMs ?? 0) / 1000)} s) and was killed`;
    // A limit reached is never a success, whatever is_error says (older CLIs sent false with error_max_turns).
    const limit = r?.subtype ? LIMIT_REACHED[r.subtype] : undefined;
    if (r && limit) return `${limit} (${r.subtype})${r.errors && r.errors.length > 0 ? `: ${r.errors.join("; ")}` : ""}`;
    if (r?.is_error) {
      if (r.errors && r.errors.length > 0) return r.errors.join("; ");
      if (r.result) return r.result;
      return `the agent stopped with an error (${r.subtype})`;
    }
    const how = end.signal ? `was killed by ${end.signal}` : `exited with code ${end.exitCode}`;
    const stderr = lastLine(end.stderrTail);
    if (!r) return `the agent ${end.exitCode === 0 ? "exited without a result line" : how}${stderr ? `: ${stderr}` : ""}`;
    if (end.exitCode !== 0) return `the agent ${how}${stderr ? `: ${stderr}` : ""}`;
    return undefined;
  }
}

/** Result subtypes that mean the run hit one of its limits, named after the setting that sets it. */
const LIMIT_REACHED: Record<string, string> = {
  error_max_turns: "the turn limit (max_turns) was reached before the agent finished",
  error_max_budget_usd: "the spending limit (max_budget_usd) was reached before the agent finished",
};

const lastLine = (text: string) =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.length > 0)
    .pop();
