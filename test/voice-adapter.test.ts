// The voice adapter against a fixture voice backend on loopback (spec: Voice backend contract,
// Errors, Limits): the multipart shape of /stt, the JSON of /speak, the bearer, quota and billing
// refusals as VoiceQuotaError, other failures as status errors, the client timeout, and a real
// spoken WAV file made with espeak-ng going through /stt byte for byte.
import { afterAll, beforeEach, describe, expect, it } from "bun:test";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadOrchestratorConfig } from "../src/orchestrator/config";
import { lazyVoiceClient, VoiceClient, VoiceError, VoiceQuotaError, VoiceStatusError, VoiceTimeoutError } from "../src/orchestrator/voice";
import { parseWav, startVoiceBackend } from "./fixtures/voice-backend";

const KEY = "voice-test-key";
const backend = startVoiceBackend({ apiKey: KEY });
const client = new VoiceClient({ baseUrl: backend.url, apiKey: KEY, timeoutMs: 5_000 });

afterAll(() => backend.stop());
beforeEach(() => {
  backend.requests.length = 0;
  backend.delayMs = 0;
  backend.transcript = "what failed on main";
});

describe("POST /stt", () => {
  it("sends the audio as the multipart file field `audio`, audio/ogg by default, with the bearer key, and returns the text", async () => {
    const bytes = new Uint8Array([0x4f, 0x67, 0x67, 0x53, 9, 8, 7]);
    expect(await client.stt(bytes)).toBe("what failed on main");
    const [req] = backend.requests;
    expect(req!.path).toBe("/stt");
    expect(req!.authorization).toBe(`Bearer ${KEY}`);
    expect(req!.contentType).toStartWith("multipart/form-data; boundary=");
    expect(req!.parts.map((p) => [p.field, p.type, p.filename])).toEqual([["audio", "audio/ogg", "audio.ogg"]]);
    expect([...req!.parts[0]!.bytes]).toEqual([...bytes]);
  });

  it("keeps the caller's mime type and file name", async () => {
    await client.stt(new Blob([new Uint8Array([1, 2, 3])]), { mimeType: "audio/mp4", filename: "note.m4a" });
    expect(backend.requests[0]!.parts.map((p) => [p.field, p.type, p.filename])).toEqual([["audio", "audio/mp4", "note.m4a"]]);
  });

  it("raises a VoiceError when the answer has no text", async () => {
    backend.failNext({ status: 200, body: { transcript: "wrong member" } });
    await expect(client.stt(new Uint8Array([1]))).rejects.toThrow(/no text member/);
  });
});

describe("POST /speak", () => {
  it("sends {text, voice: {output_format: ogg}, store: false} and returns the bytes with their content type", async () => {
    const spoken = await client.speak("The build passes.");
    expect(backend.requests[0]!.json).toEqual({ text: "The build passes.", voice: { output_format: "ogg" }, store: false });
    expect(backend.requests[0]!.authorization).toBe(`Bearer ${KEY}`);
    expect(spoken.contentType).toBe("audio/ogg");
    expect([...spoken.audio]).toEqual([...backend.speech.bytes]);
  });

  it("passes another output format through", async () => {
    await client.speak("hi", { outputFormat: "mp3" });
    expect(backend.requests[0]!.json.voice).toEqual({ output_format: "mp3" });
  });
});

describe("errors", () => {
  it("a 402 is a VoiceQuotaError", async () => {
    backend.failNext({ status: 402, body: { detail: "Payment required: add credits" } });
    const err = await client.stt(new Uint8Array([1])).catch((e) => e);
    expect(err).toBeInstanceOf(VoiceQuotaError);
    expect(err.status).toBe(402);
    expect(err.message).toContain("quota or billing");
  });

  it("a 429 insufficient_quota (OpenAI) and a 401 quota_exceeded (ElevenLabs) are VoiceQuotaErrors", async () => {
    backend.failNext(
      { status: 429, body: { error: { message: "You exceeded your current quota", type: "insufficient_quota", code: "insufficient_quota" } } },
      { status: 401, body: { detail: { status: "quota_exceeded", message: "This request exceeds your quota of 10000." } } },
    );
    expect(await client.stt(new Uint8Array([1])).catch((e) => e)).toBeInstanceOf(VoiceQuotaError);
    expect(await client.speak("hello").catch((e) => e)).toBeInstanceOf(VoiceQuotaError);
  });

  it("other HTTP errors are VoiceStatusErrors with their status (a plain rate limit too)", async () => {
    backend.failNext({ status: 500, body: { detail: "model crashed" } }, { status: 429, body: { detail: "too many requests, slow down" } });
    const a = await client.stt(new Uint8Array([1])).catch((e) => e);
    expect(a).toBeInstanceOf(VoiceStatusError);
    expect(a).not.toBeInstanceOf(VoiceQuotaError);
    expect([a.status, a.call]).toEqual([500, "/stt"]);
    expect(a.message).toContain("model crashed");
    const b = await client.speak("x").catch((e) => e);
    expect(b).toBeInstanceOf(VoiceStatusError);
    expect(b.status).toBe(429);
  });

  it("a backend that does not answer within the timeout raises VoiceTimeoutError, on time", async () => {
    backend.delayMs = 3_000;
    const quick = new VoiceClient({ baseUrl: backend.url, apiKey: KEY, timeoutMs: 300 });
    const started = Date.now();
    const err = await quick.stt(new Uint8Array([1])).catch((e) => e);
    expect(err).toBeInstanceOf(VoiceTimeoutError);
    expect(err.message).toBe("the voice service did not answer /stt within 0.3 s");
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("an unreachable backend is a VoiceError naming it", async () => {
    const gone = new VoiceClient({ baseUrl: "http://127.0.0.1:1", timeoutMs: 2_000 });
    const err = await gone.stt(new Uint8Array([1])).catch((e) => e);
    expect(err).toBeInstanceOf(VoiceError);
    expect(err.message).toContain("http://127.0.0.1:1");
  });
});

describe("the adapter in the service", () => {
  it("is off without VOICE_SERVICE_URL, created on first use and then reused, with a 120 s timeout by default", () => {
    const home = tmpdir();
    expect(lazyVoiceClient(loadOrchestratorConfig({}, home))()).toBeUndefined();
    const config = loadOrchestratorConfig({ VOICE_SERVICE_URL: backend.url, VOICE_API_KEY: KEY }, home);
    expect(config.voiceTimeout).toBe(120);
    const voice = lazyVoiceClient(config);
    const first = voice();
    expect(first).toBeInstanceOf(VoiceClient);
    expect(voice()).toBe(first!);
    expect(loadOrchestratorConfig({ VOICE_TIMEOUT_SECONDS: "30" }, home).voiceTimeout).toBe(30);
  });
});

describe("a real recording", () => {
  const espeak = Bun.which("espeak-ng");
  if (!espeak && process.env.CI === "true") throw new Error("espeak-ng is not installed and CI=true: install it (apt-get install espeak-ng)");
  if (!espeak) console.warn("⚠ espeak-ng is not installed: skipping the real-audio /stt test (apt-get install espeak-ng)");

  it.skipIf(!espeak)("a WAV file spoken by espeak-ng reaches /stt intact, as audio/wav", async () => {
    const dir = await mkdtemp(join(tmpdir(), "voice-"));
    try {
      const file = join(dir, "note.wav");
      const proc = Bun.spawn([espeak!, "-w", file, "What failed on the main branch?"], { stdout: "ignore", stderr: "pipe" });
      expect(await proc.exited).toBe(0);
      const bytes = new Uint8Array(await readFile(file));
      const made = parseWav(bytes)!;
      expect(made.seconds).toBeGreaterThan(0.5);

      backend.transcript = (audio) => {
        const info = parseWav(audio.bytes);
        return info ? `heard ${info.seconds.toFixed(2)} s at ${info.sampleRate} Hz` : "not audio";
      };
      const text = await client.stt(new Blob([bytes], { type: "audio/wav" }), { filename: "note.wav" });
      expect(text).toBe(`heard ${made.seconds.toFixed(2)} s at ${made.sampleRate} Hz`);
      const part = backend.requests[0]!.parts[0]!;
      expect([part.field, part.type, part.filename]).toEqual(["audio", "audio/wav", "note.wav"]);
      expect(Buffer.from(part.bytes).equals(Buffer.from(bytes))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
