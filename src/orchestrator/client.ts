// ServiceClient: the thin client library of the job orchestrator. One method per REST endpoint;
// request and response types are the routes' own zod schemas (type-only imports, so no server
// code comes along). Errors: ApiError (status + code) or ConnectionError.
import type { z } from "@hono/zod-openapi";
import { createParser } from "eventsource-parser";
import { ApiError, type ClientOptions, ConnectionError, HttpClient } from "../common/client/http-client";
import type { Health } from "../common/health";
import type { JobList as JobListSchema, Job as JobSchema, JobStatus, JobSubmission } from "./jobs/schema";
import type { ProfileList as ProfileListSchema } from "./profiles/listing";
import type { DrainResponse, SyncResponse } from "./routes/admin";
import type { ChatCompletionRequest } from "./routes/chat";
import type { CompletionRequest, CompletionResponse } from "./routes/completions";

export type { Health };
export { ApiError, ConnectionError };
export type Job = z.infer<typeof JobSchema>;
export type { JobStatus };
export type JobList = z.infer<typeof JobListSchema>;
/** What a caller may leave out: the server fills in profile (auto) and wait (false). */
export type JobInput = z.input<typeof JobSubmission>;
export interface JobListOptions {
  /** 1–1000; the server's default is 20. */
  limit?: number;
  status?: JobStatus;
  /** Only jobs created at or after this time (ISO 8601). */
  since?: string;
  /** By created time: desc (default) or asc. */
  order?: "asc" | "desc";
}
/** One event of GET /jobs/{id}/events: its id (for resuming), its type and its fields. */
export interface JobStreamEvent {
  id: number;
  type: "status" | "text" | "thinking" | "tool_use" | "tool_result" | "usage" | "error" | "cut";
  data: Record<string, unknown> & { at: string };
}
export type ProfileList = z.infer<typeof ProfileListSchema>;
export type SyncTarget = "all" | "agentihooks" | "bundle" | "agentihub";
export type SyncResult = z.infer<typeof SyncResponse>;
export type DrainResult = z.infer<typeof DrainResponse>;
export type CompletionInput = z.input<typeof CompletionRequest>;
export type CompletionResult = z.infer<typeof CompletionResponse>;
export type ChatCompletionInput = Omit<z.input<typeof ChatCompletionRequest>, "stream">;
/** The non-streaming answer of POST /v1/chat/completions (OpenAI's chat.completion object). */
export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: Array<{ index: number; message: { role: "assistant"; content: string }; finish_reason: string }>;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}
export interface ModelList {
  object: "list";
  data: Array<{ id: string; object: "model"; created: number; owned_by: string }>;
}

export interface ServiceClientOptions extends ClientOptions {}

/** A minute on top of the server's own bound, for calls that wait server-side. */
const WAIT_MARGIN_MS = 60_000;

export class ServiceClient {
  protected readonly http: HttpClient;

  constructor(opts: ServiceClientOptions) {
    this.http = new HttpClient(opts);
  }

  get baseUrl(): string {
    return this.http.baseUrl;
  }

  /** GET /health (no key needed). */
  health(init: { timeoutMs?: number } = {}): Promise<Health> {
    return this.http.json("GET", "/health", undefined, init);
  }

  /**
   * POST /jobs. Answers at once with the queued job; with wait: true, when the job has finished
   * (or with the job as it is once the server's job timeout has passed), so pass waitTimeoutMs.
   */
  submitJob(input: JobInput, init: { waitTimeoutMs?: number } = {}): Promise<Job> {
    return this.http.json("POST", "/jobs", input, input.wait ? { timeoutMs: (init.waitTimeoutMs ?? 3600_000) + WAIT_MARGIN_MS } : {});
  }

  /** GET /jobs: newest first. */
  listJobs(opts: JobListOptions = {}): Promise<JobList> {
    return this.http.json("GET", "/jobs", undefined, { query: { limit: opts.limit, status: opts.status, since: opts.since, order: opts.order } });
  }

  /**
   * GET /jobs/{id}/events: the job's events from the start (or after lastEventId), then live,
   * until the job has finished. Ends early if the connection drops: resume with the last id seen.
   */
  async *jobEvents(id: string, opts: { lastEventId?: number; signal?: AbortSignal } = {}): AsyncGenerator<JobStreamEvent> {
    const signal = opts.signal ?? new AbortController().signal;
    const res = await this.http.raw("GET", `/jobs/${encodeURIComponent(id)}/events`, undefined, {
      headers: { accept: "text/event-stream", ...(opts.lastEventId ? { "last-event-id": String(opts.lastEventId) } : {}) },
      signal,
    });
    if (!res.ok) {
      const text = await res.text();
      let err: { code?: string; message?: string; details?: unknown } | undefined;
      try {
        err = (JSON.parse(text) as { error?: typeof err }).error;
      } catch {}
      throw new ApiError(res.status, err?.code ?? `http_${res.status}`, err?.message ?? (text.slice(0, 200) || res.statusText), err?.details);
    }
    if (!res.body) return;
    const queue: JobStreamEvent[] = [];
    const parser = createParser({
      onEvent: (m) => queue.push({ id: Number(m.id), type: (m.event ?? "message") as JobStreamEvent["type"], data: JSON.parse(m.data) }),
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body) {
        parser.feed(decoder.decode(chunk, { stream: true }));
        while (queue.length > 0) yield queue.shift()!;
      }
    } catch (err) {
      if (signal.aborted) return;
      if ((err as Error).name !== "TypeError" && !/closed|terminated|reset|aborted/i.test((err as Error).message)) throw err;
    }
  }

  /** GET /jobs/{id}. */
  getJob(id: string): Promise<Job> {
    return this.http.json("GET", `/jobs/${encodeURIComponent(id)}`);
  }

  /** DELETE /jobs/{id}: the cancelled job (409 job_finished when it had already finished). */
  cancelJob(id: string): Promise<Job> {
    return this.http.json("DELETE", `/jobs/${encodeURIComponent(id)}`);
  }

  /** GET /profiles: usable profiles and the ones that could not be read. */
  profiles(): Promise<ProfileList> {
    return this.http.json("GET", "/profiles");
  }

  /** POST /admin/sync: clone or fetch the companion repos; one result per target. */
  sync(target: SyncTarget = "all"): Promise<SyncResult> {
    return this.http.json("POST", "/admin/sync", undefined, { query: { target }, timeoutMs: 10 * 60_000 });
  }

  /** POST /admin/drain: waits up to timeoutSeconds for this pod's running jobs. */
  drain(timeoutSeconds = 300): Promise<DrainResult> {
    return this.http.json("POST", "/admin/drain", undefined, { query: { timeout: timeoutSeconds }, timeoutMs: timeoutSeconds * 1000 + WAIT_MARGIN_MS });
  }

  /** DELETE /admin/drain: ends a drain now, whoever started it. */
  undrain(): Promise<{ was_draining: boolean }> {
    return this.http.json("DELETE", "/admin/drain");
  }

  /** POST /completions (agent mode): one message, the agent's whole answer. */
  completion(input: CompletionInput, init: { timeoutMs?: number } = {}): Promise<CompletionResult> {
    return this.http.json("POST", "/completions", input, { timeoutMs: init.timeoutMs ?? 3600_000 + WAIT_MARGIN_MS });
  }

  /** POST /v1/chat/completions with stream false (agent mode). Stream with `raw()` and an SSE parser. */
  chatCompletion(input: ChatCompletionInput, init: { headers?: Record<string, string>; timeoutMs?: number } = {}): Promise<ChatCompletion> {
    return this.http.json(
      "POST",
      "/v1/chat/completions",
      { ...input, stream: false },
      { headers: init.headers, timeoutMs: init.timeoutMs ?? 3600_000 + WAIT_MARGIN_MS },
    );
  }

  /** GET /v1/models (agent mode): the agent this service serves. */
  models(): Promise<ModelList> {
    return this.http.json("GET", "/v1/models");
  }

  /** Any request, as a Response (e.g. a streaming /v1/chat/completions). */
  raw(method: "GET" | "POST" | "DELETE", path: string, body?: unknown, init: Parameters<HttpClient["raw"]>[3] = {}): Promise<Response> {
    return this.http.raw(method, path, body, init);
  }
}
