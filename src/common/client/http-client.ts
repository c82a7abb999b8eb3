// The thin HTTP core both client libraries (RouterClient, ServiceClient) are built on:
// bearer auth, JSON in and out, and typed errors carrying the status and the error body's
// code. Nothing here imports server code.
export interface ClientOptions {
  baseUrl: string;
  token?: string;
  /** Per-request timeout; default 30 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Ends every call when it aborts (a caller's whole budget, e.g. a hook's), beside the per-request timeout. */
  signal?: AbortSignal;
}

/** A non-2xx answer: status, the error body's code and message, and its details. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** The server did not answer (refused, DNS, timeout). */
export class ConnectionError extends Error {
  constructor(
    readonly baseUrl: string,
    override readonly cause: unknown,
  ) {
    super(`cannot reach ${baseUrl}: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = "ConnectionError";
  }
}

export class HttpClient {
  readonly baseUrl: string;
  private readonly token?: string;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;
  private readonly signal?: AbortSignal;

  constructor(opts: ClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, "");
    this.token = opts.token;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.fetchFn = opts.fetch ?? fetch;
    this.signal = opts.signal;
  }

  /** `signal`, when given, replaces the timeout (for streams meant to stay open). */
  async raw(
    method: string,
    path: string,
    body?: unknown,
    init: { query?: Record<string, string | number | boolean | undefined>; headers?: Record<string, string>; timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<Response> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(init.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: "application/json", ...init.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    try {
      return await this.fetchFn(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: this.withBudget(init.signal ?? AbortSignal.timeout(init.timeoutMs ?? this.timeoutMs)),
      });
    } catch (err) {
      throw new ConnectionError(this.baseUrl, err);
    }
  }

  private withBudget(signal: AbortSignal): AbortSignal {
    return this.signal ? AbortSignal.any([this.signal, signal]) : signal;
  }

  async json<T>(method: string, path: string, body?: unknown, init: Parameters<HttpClient["raw"]>[3] = {}): Promise<T> {
    const res = await this.raw(method, path, body, init);
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const err = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
      throw new ApiError(res.status, err?.code ?? `http_${res.status}`, err?.message ?? (text.slice(0, 200) || res.statusText), err?.details);
    }
    return parsed as T;
  }
}
