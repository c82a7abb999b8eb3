// The outbound voice adapter (spec: Voice backend contract): POST {VOICE_SERVICE_URL}/stt with a
// multipart `audio` file → {text}; POST /speak {text, voice: {output_format}, store: false} → raw
// audio bytes and their content type. Bearer VOICE_API_KEY, a timeout per call (120 s by
// default). Stateless: one instance serves every caller.
import { VoiceError, VoiceQuotaError, VoiceStatusError, VoiceTimeoutError } from "./errors";

const DEFAULT_STT_MIME = "audio/ogg";
const DEFAULT_OUTPUT_FORMAT = "ogg";

export interface VoiceClientOptions {
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

export interface SpokenAudio {
  audio: Uint8Array;
  contentType: string;
}

/** Statuses that are a quota or billing refusal when the body says so (OpenAI: 429 insufficient_quota; ElevenLabs: 401 quota_exceeded). */
const QUOTA_STATUSES = new Set([401, 403, 429]);
const QUOTA_WORDS = /quota|billing|insufficient[_ ](quota|credits?|funds|balance)|payment|out of credits|credit limit/i;

const EXTENSIONS: Record<string, string> = {
  "audio/ogg": "ogg",
  "audio/opus": "opus",
  "audio/mpeg": "mp3",
  "audio/mp4": "m4a",
  "audio/x-m4a": "m4a",
  "audio/aac": "aac",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/wave": "wav",
  "audio/webm": "webm",
  "audio/flac": "flac",
};

/** A file extension for an audio content type (parameters ignored); "bin" when unknown. */
export function audioExtension(contentType: string): string {
  return EXTENSIONS[contentType.split(";")[0]!.trim().toLowerCase()] ?? "bin";
}

export class VoiceClient {
  private readonly base: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly opts: VoiceClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, "");
    this.fetch = opts.fetch ?? fetch;
  }

  /** Speech to text. `audio` goes as the multipart file field `audio` (default type audio/ogg). */
  async stt(audio: Blob | Uint8Array | ArrayBuffer, opts: { mimeType?: string; filename?: string } = {}): Promise<string> {
    const type = opts.mimeType ?? (audio instanceof Blob && audio.type ? audio.type : DEFAULT_STT_MIME);
    const blob = audio instanceof Blob ? audio.slice(0, audio.size, type) : new Blob([audio], { type });
    const form = new FormData();
    form.append("audio", blob, opts.filename ?? `audio.${audioExtension(type)}`);
    const body = await this.call("/stt", { method: "POST", body: form }, (res) =>
      res.json().catch((err) => {
        if (err instanceof SyntaxError) throw new VoiceError("the voice service's /stt answer is not JSON");
        throw err;
      }),
    );
    const text = (body as { text?: unknown } | null)?.text;
    if (typeof text !== "string") throw new VoiceError("the voice service's /stt answer has no text member");
    return text;
  }

  /** Text to speech: the audio bytes and the content type the backend gave them. */
  async speak(text: string, opts: { outputFormat?: string } = {}): Promise<SpokenAudio> {
    return this.call(
      "/speak",
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ text, voice: { output_format: opts.outputFormat ?? DEFAULT_OUTPUT_FORMAT }, store: false }),
      },
      async (res) => ({ audio: new Uint8Array(await res.arrayBuffer()), contentType: res.headers.get("content-type") ?? "application/octet-stream" }),
    );
  }

  /** One request with the bearer and the timeout (which covers reading the answer too); non-2xx raised. */
  private async call<T>(path: string, init: RequestInit, read: (res: Response) => Promise<T>): Promise<T> {
    const signal = AbortSignal.timeout(this.opts.timeoutMs);
    const headers = new Headers(init.headers);
    if (this.opts.apiKey) headers.set("authorization", `Bearer ${this.opts.apiKey}`);
    try {
      const res = await this.fetch(`${this.base}${path}`, { ...init, headers, signal });
      if (res.ok) return await read(res);
      const detail = (await res.text()).replace(/\s+/g, " ").trim().slice(0, 300);
      if (res.status === 402 || (QUOTA_STATUSES.has(res.status) && QUOTA_WORDS.test(detail))) throw new VoiceQuotaError(res.status, detail);
      throw new VoiceStatusError(res.status, path, detail);
    } catch (err) {
      if (err instanceof VoiceError) throw err;
      if (signal.aborted) throw new VoiceTimeoutError(path, this.opts.timeoutMs);
      throw new VoiceError(`the voice service at ${this.base} failed on ${path}: ${(err as Error).message}`);
    }
  }
}
