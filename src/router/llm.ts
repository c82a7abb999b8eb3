// OpenAI-compatible gateway client for the router: chat completions (buffered or streamed),
// the one-token probe, and embeddings. Gateway failures are upstream errors (with the
// gateway's status in the message and details), timeouts are timeout errors; a call never
// hangs past its timeout.
import { EventSourceParserStream } from "eventsource-parser/stream";
import { DomainError } from "../common/domain-error";

export interface ChatEndpoint {
  /** Base URL ending in /v1 (LLM_API_BASE, or INFERENCE_URL + /v1). */
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
}

export interface EmbeddingsEndpoint {
  url: string;
  apiKey?: string;
  model: string;
  dim: number;
  timeoutMs: number;
}

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface ChatResult {
  text: string;
  model: string;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

const trimSlash = (s: string) => s.replace(/\/+$/, "");

/** LLM_API_BASE as given (OpenAI style, …/v1); INFERENCE_URL (Ollama style) gets /v1 added. */
export function chatBaseUrl(opts: { llmApiBase?: string; inferenceUrl?: string }): string | undefined {
  if (opts.llmApiBase) return trimSlash(opts.llmApiBase);
  if (opts.inferenceUrl) {
    const base = trimSlash(opts.inferenceUrl);
    return base.endsWith("/v1") ? base : `${base}/v1`;
  }
  return undefined;
}

/** EMBEDDINGS_URL may name the service, its /v1, or the /v1/embeddings route itself. */
export function embeddingsRoute(url: string): string {
  const base = trimSlash(url);
  if (base.endsWith("/embeddings")) return base;
  return base.endsWith("/v1") ? `${base}/embeddings` : `${base}/v1/embeddings`;
}

async function call(what: string, url: string, init: RequestInit & { timeoutMs: number }): Promise<Response> {
  const signal = AbortSignal.timeout(init.timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal });
  } catch (err) {
    if (signal.aborted) throw new DomainError("timeout", "gateway_timeout", `${what} did not answer within ${init.timeoutMs} ms`);
    throw new DomainError("upstream", "gateway_unreachable", `${what} is unreachable at ${new URL(url).origin}: ${(err as Error).message}`);
  }
  if (!res.ok) {
    const text = (await res.text().catch(() => "")).slice(0, 300);
    throw new DomainError("upstream", "gateway_error", `${what} answered ${res.status}${text ? `: ${text}` : ""}`, { details: { gateway_status: res.status } });
  }
  return res;
}

const headers = (apiKey?: string): Record<string, string> => ({
  "content-type": "application/json",
  ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
});

export async function chat(ep: ChatEndpoint, messages: ChatMessage[], opts: { maxTokens?: number } = {}): Promise<ChatResult> {
  const res = await call("the language model gateway", `${ep.baseUrl}/chat/completions`, {
    method: "POST",
    headers: headers(ep.apiKey),
    body: JSON.stringify({ model: ep.model, messages, stream: false, ...(opts.maxTokens ? { max_tokens: opts.maxTokens } : {}) }),
    timeoutMs: ep.timeoutMs,
  });
  const body = (await res.json().catch(() => null)) as {
    model?: string;
    choices?: Array<{ message?: { content?: string | null } }>;
    usage?: ChatResult["usage"];
  } | null;
  const text = body?.choices?.[0]?.message?.content;
  if (typeof text !== "string") throw new DomainError("upstream", "gateway_error", "the language model gateway answered without choices[0].message.content");
  return { text, model: body?.model ?? ep.model, usage: body?.usage };
}

/**
 * Streams content deltas as the gateway sends them (SSE `data:` chunks, ended by [DONE]).
 * The timeout bounds the whole answer, as it does for the buffered call.
 */
export async function* chatStream(ep: ChatEndpoint, messages: ChatMessage[]): AsyncGenerator<string> {
  const res = await call("the language model gateway", `${ep.baseUrl}/chat/completions`, {
    method: "POST",
    headers: headers(ep.apiKey),
    body: JSON.stringify({ model: ep.model, messages, stream: true }),
    timeoutMs: ep.timeoutMs,
  });
  if (!res.body) throw new DomainError("upstream", "gateway_error", "the language model gateway sent no stream");
  const reader = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (err) {
        const name = (err as Error).name;
        if (name === "TimeoutError" || name === "AbortError") {
          throw new DomainError("timeout", "gateway_timeout", `the language model gateway did not finish within ${ep.timeoutMs} ms`);
        }
        throw new DomainError("upstream", "gateway_error", `the language model gateway stream broke: ${(err as Error).message}`);
      }
      if (next.done || next.value.data === "[DONE]") return;
      let chunk: { choices?: Array<{ delta?: { content?: string | null } }>; error?: { message?: string } };
      try {
        chunk = JSON.parse(next.value.data);
      } catch {
        throw new DomainError("upstream", "gateway_error", "the language model gateway sent a chunk that is not JSON");
      }
      if (chunk.error)
        throw new DomainError("upstream", "gateway_error", `the language model gateway failed mid-stream: ${chunk.error.message ?? "unknown error"}`);
      const delta = chunk.choices?.[0]?.delta?.content;
      if (delta) yield delta;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

export async function embed(ep: EmbeddingsEndpoint, input: string[]): Promise<number[][]> {
  if (input.length === 0) return [];
  const res = await call("the embeddings service", embeddingsRoute(ep.url), {
    method: "POST",
    headers: headers(ep.apiKey),
    body: JSON.stringify({ model: ep.model, input }),
    timeoutMs: ep.timeoutMs,
  });
  const body = (await res.json().catch(() => null)) as { data?: Array<{ index?: number; embedding?: number[] }> } | null;
  const data = body?.data;
  if (!Array.isArray(data) || data.length !== input.length) {
    throw new DomainError("upstream", "gateway_error", `the embeddings service returned ${data?.length ?? "no"} vectors for ${input.length} inputs`);
  }
  const vectors = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((d) => d.embedding ?? []);
  const wrong = vectors.find((v) => v.length !== ep.dim);
  if (wrong) {
    throw new DomainError(
      "upstream",
      "embedding_dimension_mismatch",
      `the embeddings model ${ep.model} returned ${wrong.length} dimensions; EMBEDDINGS_DIM is ${ep.dim}`,
    );
  }
  return vectors;
}
