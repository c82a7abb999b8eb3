// Ships a finished job's session transcript to the tracing backend (a Langfuse-compatible
// public ingestion API): one trace per job, one generation per assistant message.
// spec: Standard mode, "the session transcript is shipped to the tracing backend". Never
// throws and never waits long: a dead or slow backend must not slow or fail a job.
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { log } from "../../common/logger";
import type { OrchestratorConfig } from "../config";

const logger = log("tracing");

export type TranscriptConfig = Pick<OrchestratorConfig, "tracingHost" | "tracingPublicKey" | "tracingSecretKey" | "claudeHomeDir" | "claudeConfigDir">;

const DEFAULT_SHIP_TIMEOUT_MS = 10_000;
const MAX_FIELD_CHARS = 20_000;
const MAX_BATCH_BYTES = 2 * 1024 * 1024;

/** Claude Code's project directory name for a cwd: every non-alphanumeric character becomes '-'. */
export const encodeProjectDir = (cwd: string): string => cwd.replace(/[^a-zA-Z0-9]/g, "-");

/** Where the agent CLI keeps its config and projects/: CLAUDE_CONFIG_DIR, else <home>/.claude. */
export const claudeDir = (config: Pick<OrchestratorConfig, "claudeHomeDir" | "claudeConfigDir">): string =>
  config.claudeConfigDir ?? join(config.claudeHomeDir, ".claude");

export const transcriptPath = (config: Pick<OrchestratorConfig, "claudeHomeDir" | "claudeConfigDir">, cwd: string, sessionId: string): string =>
  join(claudeDir(config), "projects", encodeProjectDir(cwd), `${sessionId}.jsonl`);

export const tracingEnabled = (config: TranscriptConfig): boolean => Boolean(config.tracingPublicKey && config.tracingSecretKey);

export interface TraceInfo {
  /** The trace id: the job id. */
  id: string;
  name: string;
  input?: string;
  output?: string;
  metadata?: Record<string, unknown>;
  tags?: string[];
}

export interface ShipTranscriptInput {
  config: TranscriptConfig;
  cwd: string;
  sessionId: string;
  trace: TraceInfo;
  /** Bytes of the transcript that an earlier run wrote (a resumed session): not shipped again. */
  fromOffset?: number;
  timeoutMs?: number;
}

export interface ShipResult {
  shipped: boolean;
  events: number;
  reason?: string;
}

interface IngestionEvent {
  id: string;
  timestamp: string;
  type: "trace-create" | "generation-create";
  body: Record<string, unknown>;
}

export async function shipTranscript(input: ShipTranscriptInput): Promise<ShipResult> {
  const { config } = input;
  if (!tracingEnabled(config)) return { shipped: false, events: 0, reason: "tracing keys are not set" };
  const path = transcriptPath(config, input.cwd, input.sessionId);
  try {
    let text: string;
    try {
      text = (await readFile(path)).subarray(input.fromOffset ?? 0).toString("utf8");
    } catch {
      logger.warn(`job ${input.trace.id}: no transcript at ${path}; nothing shipped`);
      return { shipped: false, events: 0, reason: "no transcript" };
    }
    const events = transcriptEvents(text, input.trace, input.sessionId);
    const auth = Buffer.from(`${config.tracingPublicKey}:${config.tracingSecretKey}`).toString("base64");
    const url = `${config.tracingHost.replace(/\/+$/, "")}/api/public/ingestion`;
    for (const batch of batches(events)) {
      const res = await fetch(url, {
        method: "POST",
        headers: { authorization: `Basic ${auth}`, "content-type": "application/json" },
        body: JSON.stringify({ batch }),
        signal: AbortSignal.timeout(input.timeoutMs ?? DEFAULT_SHIP_TIMEOUT_MS),
      });
      const body = await res.text();
      if (!res.ok) throw new Error(`${url} answered ${res.status}: ${body.slice(0, 300)}`);
      const rejected = multiStatusErrors(body);
      if (rejected > 0) logger.warn(`job ${input.trace.id}: the tracing backend rejected ${rejected} of ${batch.length} events`);
    }
    logger.debug(`job ${input.trace.id}: transcript shipped (${events.length} events)`);
    return { shipped: true, events: events.length };
  } catch (err) {
    logger.warn(`job ${input.trace.id}: transcript not shipped: ${(err as Error).message}`);
    return { shipped: false, events: 0, reason: (err as Error).message };
  }
}

const multiStatusErrors = (body: string): number => {
  try {
    const parsed = JSON.parse(body) as { errors?: unknown[] };
    return Array.isArray(parsed.errors) ? parsed.errors.length : 0;
  } catch {
    return 0;
  }
};

const clip = (v: unknown): unknown => {
  if (typeof v === "string") return v.length > MAX_FIELD_CHARS ? `${v.slice(0, MAX_FIELD_CHARS)}… [truncated]` : v;
  if (Array.isArray(v)) return v.map(clip);
  if (typeof v === "object" && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clip(x)]));
  return v;
};

interface TranscriptLine {
  type?: string;
  timestamp?: string;
  uuid?: string;
  isSidechain?: boolean;
  message?: { id?: string; model?: string; role?: string; content?: unknown; usage?: Record<string, unknown> };
}

/** Transcript lines → ingestion events: the trace, then a generation per assistant message. */
function transcriptEvents(text: string, trace: TraceInfo, sessionId: string): IngestionEvent[] {
  const lines: TranscriptLine[] = [];
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue;
    try {
      const v = JSON.parse(raw) as unknown;
      if (typeof v === "object" && v !== null) lines.push(v as TranscriptLine);
    } catch {
      // a torn last line (the CLI was killed mid-write) is skipped
    }
  }
  const now = new Date().toISOString();
  const first = lines.find((l) => l.timestamp)?.timestamp ?? now;
  const out: IngestionEvent[] = [
    {
      id: randomUUID(),
      timestamp: now,
      type: "trace-create",
      body: clip({
        id: trace.id,
        timestamp: first,
        name: trace.name,
        sessionId,
        input: trace.input,
        output: trace.output,
        metadata: trace.metadata,
        tags: trace.tags,
      }) as Record<string, unknown>,
    },
  ];

  // An assistant message is written as several lines (one per content block) sharing its id.
  let lastInput: unknown;
  let lastInputAt: string | undefined;
  const generations = new Map<
    string,
    { start?: string; end?: string; model?: string; input: unknown; content: unknown[]; usage?: Record<string, unknown>; sidechain: boolean }
  >();
  for (const l of lines) {
    if (l.type === "user" && l.message) {
      lastInput = l.message.content;
      lastInputAt = l.timestamp;
    } else if (l.type === "assistant" && l.message) {
      const id = l.message.id ?? l.uuid ?? randomUUID();
      const g = generations.get(id) ?? {
        start: lastInputAt ?? l.timestamp,
        model: l.message.model,
        input: lastInput,
        content: [],
        sidechain: l.isSidechain === true,
      };
      if (Array.isArray(l.message.content)) g.content.push(...l.message.content);
      g.end = l.timestamp ?? g.end;
      g.usage = l.message.usage ?? g.usage;
      generations.set(id, g);
    }
  }
  for (const [id, g] of generations) {
    const n = (k: string) => (typeof g.usage?.[k] === "number" ? (g.usage[k] as number) : 0);
    const input = n("input_tokens") + n("cache_creation_input_tokens") + n("cache_read_input_tokens");
    const output = n("output_tokens");
    out.push({
      id: randomUUID(),
      timestamp: g.end ?? now,
      type: "generation-create",
      body: clip({
        id: `${trace.id}-${id}`,
        traceId: trace.id,
        name: g.sidechain ? "sub-agent" : "assistant",
        startTime: g.start,
        endTime: g.end,
        model: g.model,
        input: g.input,
        output: g.content,
        usage: g.usage ? { input, output, total: input + output, unit: "TOKENS" } : undefined,
      }) as Record<string, unknown>,
    });
  }
  return out;
}

function* batches(events: IngestionEvent[]): Generator<IngestionEvent[]> {
  let batch: IngestionEvent[] = [];
  let bytes = 0;
  for (const ev of events) {
    const size = JSON.stringify(ev).length;
    if (batch.length > 0 && bytes + size > MAX_BATCH_BYTES) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(ev);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}
