// Recording a marker (POST /marker, the MCP marker tool, and the tick's inline harvest all
// come here): idempotent by key, routed into the vault by kind (vault/records.ts), journalled,
// and, for signals, published to GET /signal. The ledger entry that makes a key known is
// written last, under a lock on the key, so concurrent duplicates record exactly once.
import { mkdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { DomainError } from "../../common/domain-error";
import { hashContent } from "../index/document";
import type { SignalHub } from "../signals/hub";
import { writeSignalsMdNow } from "../signals/signals-md";
import { SIGNALS_FILE } from "../tick/feed-entries";
import { appendLesson, appendMilestone, type RecordInput, type RecordWrite, writeDecision, writeSignal } from "../vault/records";
import { slugify } from "../vault/slug";
import { withVaultLock } from "../vault/vault-lock";
import { appendJournal } from "./journal";
import { MARKER_MAX_CHARS, type MarkerInput, type MarkerOrigin, type MarkerRecord, type MarkerType, markerType } from "./types";

export interface MarkerDeps {
  vault: string;
  dataDir: string;
  /** Where signal events go (GET /signal). */
  signals?: SignalHub;
  /** Told about every vault file a marker wrote; the response waits for what it returns (the index). */
  written?: (path: string) => void | Promise<void>;
  /** Set: signals.md is rewritten as each signal is recorded (SIGNAL_TTL_HOURS). */
  signalTtlHours?: number;
  now?: () => Date;
}

export interface MarkerKey {
  /** The idempotency key: X-Idempotency-Key, else the body's sha256. */
  key: string;
  source: MarkerRecord["key_source"];
}

export interface MarkerResult {
  record: MarkerRecord;
  /** True when the key was seen before: the stored record, nothing written. */
  replayed: boolean;
}

export const markerId = (key: string) => `mk_${hashContent(key).slice(0, 16)}`;

/**
 * A marker's idempotency key: the client's own key when it sent one (X-Idempotency-Key, the MCP
 * tool's idempotency_key), else the sha256 of the marker as sent, so the same marker twice is
 * one marker. `sent` is what the client sent, as parsed: its whitespace does not make a new key.
 */
export function markerKey(clientKey: string | undefined, sent: unknown): MarkerKey {
  return clientKey ? { key: `header:${clientKey}`, source: "header" } : { key: `body:${hashContent(JSON.stringify(sent))}`, source: "body" };
}

/** A marker type as a client sent it ("@lesson", "Lesson"); an unknown one is refused. */
export function requireMarkerType(value: string): MarkerType {
  const type = markerType(value);
  if (!type) throw new DomainError("invalid", "invalid_request", `type: unknown marker type ${JSON.stringify(value)}`);
  return type;
}

/** attrs.ts: ISO 8601, or epoch seconds (< 10^11) / milliseconds. */
export function markerTime(ts: unknown, fallback: Date): Date {
  if (ts === undefined || ts === null || ts === "") return fallback;
  let d: Date | undefined;
  if (typeof ts === "number" || (typeof ts === "string" && /^\d+(\.\d+)?$/.test(ts.trim()))) {
    const n = Number(ts);
    d = new Date(n < 1e11 ? n * 1000 : n);
  } else if (typeof ts === "string") {
    d = new Date(ts);
  }
  if (!d || Number.isNaN(d.getTime())) {
    throw new DomainError("invalid", "invalid_request", `attrs.ts: ${JSON.stringify(ts)} is not a time (ISO 8601, or epoch seconds or milliseconds)`, {
      details: [{ path: "attrs.ts", message: "not a time" }],
    });
  }
  return d;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it folds to spaces
const LINE_BREAKING = /[\u0000-\u001f\u007f\u0085\u2028\u2029]+/g;

/**
 * An attribute as one line: line breaks and other control characters become spaces, so a
 * source, session id or title can never start a forged entry or heading in a vault file.
 */
const str = (v: unknown): string | undefined => {
  if (typeof v === "number") return String(v);
  if (typeof v !== "string") return undefined;
  const line = v.replace(LINE_BREAKING, " ").replace(/ {2,}/g, " ").trim().slice(0, 500);
  return line || undefined;
};

export async function recordMarker(
  deps: MarkerDeps,
  input: MarkerInput,
  key: MarkerKey,
  opts: { origin: MarkerOrigin; receivedAt?: Date; defaultSource?: string; fallbackTs?: Date },
): Promise<MarkerResult> {
  const chars = [...input.content].length;
  if (chars > MARKER_MAX_CHARS) {
    throw new DomainError("too_large", "content_too_large", `content is ${chars} characters; a marker holds at most ${MARKER_MAX_CHARS}`);
  }
  if (input.content.trim().length === 0)
    throw new DomainError("invalid", "invalid_request", "content is empty", { details: [{ path: "content", message: "empty" }] });
  const receivedAt = opts.receivedAt ?? (deps.now ?? (() => new Date()))();
  const ts = markerTime(input.attrs.ts, opts.fallbackTs ?? receivedAt);
  const id = markerId(key.key);
  const ledger = join(deps.dataDir, "markers", id.slice(3, 5), `${id}.json`);
  await mkdir(dirname(ledger), { recursive: true });

  return withVaultLock(ledger, async () => {
    const seen = await readFile(ledger, "utf8").then(
      (t) => JSON.parse(t) as MarkerRecord,
      () => null,
    );
    if (seen) return { record: seen, replayed: true };

    const a = input.attrs;
    const source = str(a.source) ?? opts.defaultSource ?? opts.origin;
    const r: RecordInput = {
      content: input.content,
      title: str(a.title),
      source,
      session_id: str(a.session_id),
      severity: str(a.severity)?.toLowerCase(),
      scope: str(a.scope),
      status: input.type === "decision" ? str(a.status)?.toLowerCase() : undefined,
      ts,
    };
    const write = await route(deps.vault, input.type, r);
    const record: MarkerRecord = {
      id,
      type: input.type,
      content: input.content,
      attrs: input.attrs,
      ts: ts.toISOString(),
      received_at: receivedAt.toISOString(),
      source,
      session_id: r.session_id ?? null,
      path: write.path,
      written: write.written,
      origin: opts.origin,
      key_source: key.source,
    };
    await appendJournal(deps.vault, record);
    await writeFileAtomic(ledger, JSON.stringify(record));
    await deps.written?.(write.path);
    if (input.type === "signal" && deps.signalTtlHours !== undefined) {
      await writeSignalsMdNow(deps.vault, deps.signalTtlHours, receivedAt);
      await deps.written?.(SIGNALS_FILE);
    }
    if (input.type === "signal" && deps.signals) {
      deps.signals.publish("signal", {
        marker_id: id,
        path: write.path,
        severity: slugify(r.severity ?? "medium", "medium"),
        source,
        session_id: record.session_id,
        title: r.title ?? input.content.trim().split("\n")[0]!.slice(0, 80),
        content: input.content,
        ts: record.ts,
        count: write.count ?? 1,
        repeat: !write.written,
      });
    }
    return { record, replayed: false };
  });
}

function route(vault: string, type: MarkerInput["type"], r: RecordInput): Promise<RecordWrite> {
  switch (type) {
    case "lesson":
      return appendLesson(vault, r);
    case "milestone":
      return appendMilestone(vault, r);
    case "signal":
      return writeSignal(vault, r);
    case "decision":
      return writeDecision(vault, r);
  }
}
