// RouterClient: the thin client library of the knowledge router. One method per endpoint;
// request and response types are the routes' own zod schemas (type-only imports, so no
// server code comes along). Errors: ApiError (status + code) or ConnectionError.
import type { z } from "@hono/zod-openapi";
import { createParser } from "eventsource-parser";
import { ApiError, type ClientOptions, ConnectionError, HttpClient } from "../common/client/http-client";
import type { Health } from "../common/health";
import type { BriefRequest } from "./brief/schema";
import type { IngestRequest } from "./ingest/schema";
import type { MarkerRequest } from "./markers/schema";
import type { BriefResponse } from "./routes/brief";
import type { DispatchRequest, DispatchResponse } from "./routes/dispatch";
import type { Feed } from "./routes/feed";
import type { DeepReport, PipelineReport } from "./routes/health-reports";
import type { IngestBatchResponse, IngestResponse } from "./routes/ingest";
import type { MarkerRecord } from "./routes/marker";
import type { Note, NoteContext, NotesBatchRequest, NotesBatchResponse, RecentNotes } from "./routes/notes";
import type { SearchResponse } from "./routes/search";
import type { TickRecord } from "./routes/tick";
import type { SearchRequest } from "./search/schema";
import type { SEVERITIES } from "./signals/signal-files";
import type { TickRequest } from "./tick/schema";

// The response types named as in the OpenAPI document, straight from the routes' schemas.
export type { DeepReport, Feed, Health, MarkerRecord, Note, NoteContext, PipelineReport, RecentNotes, TickRecord };
export { ApiError, ConnectionError };
export type IngestInput = z.input<typeof IngestRequest>;
export type IngestResult = z.infer<typeof IngestResponse>;
export type IngestBatchResult = z.infer<typeof IngestBatchResponse>;
export type SearchInput = z.input<typeof SearchRequest>;
export type SearchResult = z.infer<typeof SearchResponse>;
export type BriefInput = Omit<z.input<typeof BriefRequest>, "stream">;
export type BriefResult = z.infer<typeof BriefResponse>;
export type DispatchInput = z.input<typeof DispatchRequest>;
export type DispatchResult = z.infer<typeof DispatchResponse>;
export type MarkerInput = z.input<typeof MarkerRequest>;
export type TickInput = z.input<typeof TickRequest>;
export type NotesBatchInput = z.input<typeof NotesBatchRequest>;
export type NotesBatch = z.infer<typeof NotesBatchResponse>;
export interface NoteOptions {
  /** Body lines "START-END", "START-" or "START" (1 = the first line after the frontmatter). */
  lines?: string;
  maxChars?: number;
}
export interface RecentInput {
  /** A Date or an ISO 8601 string. */
  since?: Date | string;
  producer?: string;
  tag?: string;
  prefix?: string;
  limit?: number;
  cursor?: string;
}

export type Severity = (typeof SEVERITIES)[number];
/** One event of GET /signal: a recorded signal, or a `gap` when the resume point was no longer kept. */
export type SignalEvent =
  | {
      event: "signal";
      id: string;
      data: {
        marker_id: string;
        path: string;
        severity: Severity;
        source: string;
        session_id: string | null;
        title: string;
        content: string;
        ts: string;
        count: number;
        repeat: boolean;
      };
    }
  | { event: "gap"; id?: string; data: { last_event_id: number; oldest_kept: number } };
export type SignalRecorded = Extract<SignalEvent, { event: "signal" }>;
export interface SignalOptions {
  /** Resume after this event id (sent as Last-Event-ID): what was missed comes first. */
  lastEventId?: string | number;
  minSeverity?: Severity;
  /** Aborting it closes the stream (so does leaving the for-await loop). */
  signal?: AbortSignal;
}

export interface RouterClientOptions extends ClientOptions {}

async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => "");
  let e: { code?: string; message?: string; details?: unknown } | undefined;
  try {
    e = (JSON.parse(text) as { error?: typeof e }).error;
  } catch {
    e = undefined;
  }
  return new ApiError(res.status, e?.code ?? `http_${res.status}`, e?.message ?? (text.slice(0, 200) || res.statusText), e?.details);
}

/**
 * A vault path in a URL: each segment encoded, the slashes kept — or, when it holds "." or ".."
 * segments, as one encoded segment, so the URL parser does not resolve them away and the server
 * judges the path as given.
 */
const notePathSegment = (path: string) =>
  path.split("/").some((s) => s === "." || s === "..") ? encodeURIComponent(path) : path.split("/").map(encodeURIComponent).join("/");

export class RouterClient {
  protected readonly http: HttpClient;

  constructor(opts: RouterClientOptions) {
    this.http = new HttpClient(opts);
  }

  get baseUrl(): string {
    return this.http.baseUrl;
  }

  health(): Promise<Health> {
    return this.http.json("GET", "/health");
  }

  ingest(input: IngestInput): Promise<IngestResult> {
    return this.http.json("POST", "/ingest", { tags: [], ...input });
  }

  /** POST /ingest/batch: every item's outcome in item order (a bad item fails alone, in its result). */
  ingestBatch(items: IngestInput[]): Promise<IngestBatchResult> {
    return this.http.json("POST", "/ingest/batch", { items: items.map((i) => ({ tags: [], ...i })) });
  }

  search(input: SearchInput | string): Promise<SearchResult> {
    return this.http.json("POST", "/search", typeof input === "string" ? { query: input } : input);
  }

  brief(input: BriefInput | string): Promise<BriefResult> {
    return this.http.json("POST", "/brief", typeof input === "string" ? { query: input } : input);
  }

  dispatch(input: DispatchInput): Promise<DispatchResult> {
    return this.http.json("POST", "/dispatch", input);
  }

  /** Records a marker; `created` is false when the idempotency key (or body hash) was seen before. */
  async marker(input: MarkerInput, opts: { idempotencyKey?: string } = {}): Promise<{ created: boolean; record: MarkerRecord }> {
    const res = await this.http.raw("POST", "/marker", input, { headers: opts.idempotencyKey ? { "x-idempotency-key": opts.idempotencyKey } : {} });
    if (!res.ok) throw await errorOf(res);
    return { created: res.status === 201, record: (await res.json()) as MarkerRecord };
  }

  /** Enqueues a tick (202 queued; with `wait`, the finished record when it finishes in time). */
  tick(input: TickInput = {}): Promise<TickRecord> {
    return this.http.json("POST", "/tick", input, { timeoutMs: input.wait ? 10 * 60_000 : undefined });
  }

  getTick(id: string): Promise<TickRecord> {
    return this.http.json("GET", `/tick/${encodeURIComponent(id)}`);
  }

  /** One note by vault path (GET /notes/{path}). */
  note(path: string, opts: NoteOptions = {}): Promise<Note> {
    return this.http.json("GET", `/notes/${notePathSegment(path)}`, undefined, { query: { lines: opts.lines, max_chars: opts.maxChars } });
  }

  /** The note unless its ETag is still `etag` (a previous note's hash): then null (304). */
  async noteIfChanged(path: string, etag: string, opts: NoteOptions = {}): Promise<Note | null> {
    const res = await this.http.raw("GET", `/notes/${notePathSegment(path)}`, undefined, {
      query: { lines: opts.lines, max_chars: opts.maxChars },
      headers: { "if-none-match": etag.startsWith('"') ? etag : `"${etag}"` },
    });
    if (res.status === 304) return null;
    if (!res.ok) throw await errorOf(res);
    return (await res.json()) as Note;
  }

  /** Several notes in one call, by paths or a glob (POST /notes/batch). */
  notes(input: NotesBatchInput): Promise<NotesBatch> {
    return this.http.json("POST", "/notes/batch", input);
  }

  /** Notes changed since a time, newest first; follow next_cursor for more (GET /notes). */
  recent(input: RecentInput = {}): Promise<RecentNotes> {
    const since = input.since instanceof Date ? input.since.toISOString() : input.since;
    return this.http.json("GET", "/notes", undefined, { query: { ...input, since } });
  }

  /** A note with the notes it links to and that link to it (GET /notes/{path}/context). */
  context(path: string, opts: { depth?: number; maxChars?: number } = {}): Promise<NoteContext> {
    return this.http.json("GET", `/notes/${notePathSegment(path)}/context`, undefined, { query: { depth: opts.depth, max_chars: opts.maxChars } });
  }

  /** The feed; `maxChars` bounds its inject_blocks (GET /feed?max_chars=). */
  feed(opts: { maxChars?: number } = {}): Promise<Feed> {
    return this.http.json("GET", "/feed", undefined, { query: { max_chars: opts.maxChars } });
  }

  healthDeep(): Promise<DeepReport> {
    return this.http.json("GET", "/health/deep", undefined, { timeoutMs: 60_000 });
  }

  healthPipeline(): Promise<PipelineReport> {
    return this.http.json("GET", "/health/pipeline", undefined, { timeoutMs: 60_000 });
  }

  /**
   * GET /signal as an async iterable of events; the stream stays open until the caller
   * leaves the loop or aborts `opts.signal`. A refused subscription throws ApiError.
   */
  async *signals(opts: SignalOptions = {}): AsyncGenerator<SignalEvent> {
    const ctrl = new AbortController();
    const stop = () => ctrl.abort();
    opts.signal?.addEventListener("abort", stop, { once: true });
    try {
      const res = await this.http.raw("GET", "/signal", undefined, {
        query: { min_severity: opts.minSeverity },
        headers: { accept: "text/event-stream", ...(opts.lastEventId !== undefined ? { "last-event-id": String(opts.lastEventId) } : {}) },
        signal: ctrl.signal,
      });
      if (!res.ok || !res.body) throw await errorOf(res);
      const ready: SignalEvent[] = [];
      const parser = createParser({ onEvent: (e) => ready.push({ event: e.event ?? "message", id: e.id, data: JSON.parse(e.data) } as SignalEvent) });
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body) {
          parser.feed(decoder.decode(chunk, { stream: true }));
          while (ready.length > 0) yield ready.shift()!;
        }
      } catch (err) {
        if (!ctrl.signal.aborted) throw new ConnectionError(this.baseUrl, err);
      }
    } catch (err) {
      if (ctrl.signal.aborted && !(err instanceof ApiError)) return;
      throw err;
    } finally {
      opts.signal?.removeEventListener("abort", stop);
      ctrl.abort();
    }
  }

  /**
   * The signals recorded after `lastEventId` (sent as Last-Event-ID), read up to the newest
   * event the router had when asked (its X-Last-Event-Id header), then the stream is closed.
   * The answer's `lastEventId` is where to resume next time. Without `lastEventId`: no events,
   * and the newest id (start looking from now). A catch-up for callers that poll, such as the
   * prompt hook; `signals()` is the live stream.
   */
  async signalsSince(lastEventId?: number): Promise<{ events: SignalRecorded[]; lastEventId: number }> {
    const res = await this.http.raw("GET", "/signal", undefined, {
      headers: { accept: "text/event-stream", ...(lastEventId !== undefined ? { "last-event-id": String(lastEventId) } : {}) },
    });
    try {
      if (!res.ok || !res.body) throw await errorOf(res);
      const newest = Number(res.headers.get("x-last-event-id"));
      if (!Number.isInteger(newest)) throw new ApiError(res.status, "no_last_event_id", "GET /signal sent no X-Last-Event-Id header");
      if (lastEventId === undefined || lastEventId >= newest)
        return { events: [], lastEventId: lastEventId === undefined ? newest : Math.max(lastEventId, newest) };
      const events: SignalRecorded[] = [];
      let seen = lastEventId;
      const parser = createParser({
        onEvent: (e) => {
          const id = Number(e.id);
          if (Number.isInteger(id)) seen = Math.max(seen, id);
          if (e.event !== "signal") return;
          try {
            events.push({ event: "signal", id: e.id ?? String(id), data: JSON.parse(e.data) as SignalRecorded["data"] });
          } catch {
            // a malformed event is skipped
          }
        },
      });
      const decoder = new TextDecoder();
      const reader = res.body.getReader();
      try {
        while (seen < newest) {
          const { done, value } = await reader.read();
          if (done) break;
          parser.feed(decoder.decode(value, { stream: true }));
        }
      } catch (err) {
        throw new ConnectionError(this.baseUrl, err);
      } finally {
        await reader.cancel().catch(() => {});
      }
      return { events, lastEventId: seen };
    } finally {
      // Hang up: the stream would stay open for live events.
      if (res.body && !res.body.locked) await res.body.cancel().catch(() => {});
    }
  }
}
