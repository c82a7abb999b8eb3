import { afterEach, describe, expect, it } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startTracingBackend, type TracingBackend } from "../../../test/fixtures/tracing-backend";
import { encodeProjectDir, shipTranscript, type TranscriptConfig, transcriptPath } from "./transcript";

// Optional settings are typed as their parsed value; unset means undefined at run time.
const none = undefined as unknown as string;

const SESSION = "6f1c2a9e-3b7d-4e2a-9c1f-2d8e5b7a4c10";
const line = (o: object) => `${JSON.stringify(o)}\n`;
const TRANSCRIPT =
  line({ type: "user", message: { role: "user", content: "what broke?" }, uuid: "u1", timestamp: "2026-01-01T10:00:00.000Z" }) +
  line({
    type: "assistant",
    message: {
      id: "msg_1",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: "Looking." }],
      usage: { input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 5 },
    },
    uuid: "a1",
    timestamp: "2026-01-01T10:00:01.000Z",
  }) +
  line({
    type: "assistant",
    message: {
      id: "msg_1",
      model: "claude-sonnet-4-5",
      content: [{ type: "tool_use", id: "t1", name: "Bash", input: {} }],
      usage: { input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 9 },
    },
    uuid: "a2",
    timestamp: "2026-01-01T10:00:02.000Z",
  }) +
  line({
    type: "user",
    message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] },
    uuid: "u2",
    timestamp: "2026-01-01T10:00:03.000Z",
  }) +
  line({
    type: "assistant",
    message: { id: "msg_2", model: "claude-sonnet-4-5", content: [{ type: "text", text: "The build." }], usage: { input_tokens: 20, output_tokens: 3 } },
    uuid: "a3",
    timestamp: "2026-01-01T10:00:04.000Z",
  }) +
  '{"type":"assistant","torn';

let backend: TracingBackend | undefined;
afterEach(() => backend?.stop());

const setup = (host: string) => {
  const home = mkdtempSync(join(tmpdir(), "tracing-"));
  const config: TranscriptConfig = { tracingHost: host, tracingPublicKey: "pk-lf-1", tracingSecretKey: "sk-lf-1", claudeHomeDir: home, claudeConfigDir: none };
  const cwd = "/work/trees/job-1";
  const path = transcriptPath(config, cwd, SESSION);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, TRANSCRIPT);
  return { config, cwd, path };
};

describe("transcript shipping", () => {
  it("finds the transcript where Claude Code writes it", () => {
    expect(encodeProjectDir("/app/worktrees/job_1.x")).toBe("-app-worktrees-job-1-x");
    const { path } = setup("http://127.0.0.1:1");
    expect(path).toEndWith(`.claude/projects/-work-trees-job-1/${SESSION}.jsonl`);
  });

  it("posts a trace and one generation per assistant message to the ingestion API", async () => {
    backend = startTracingBackend();
    const { config, cwd } = setup(backend.url);
    const r = await shipTranscript({ config, cwd, sessionId: SESSION, trace: { id: "job-1", name: "job code", input: "what broke?", output: "The build." } });
    expect(r).toEqual({ shipped: true, events: 3 });
    const [sent] = backend.batches;
    expect(sent?.authorization).toBe(`Basic ${btoa("pk-lf-1:sk-lf-1")}`);
    expect(sent?.batch.map((e) => e.type)).toEqual(["trace-create", "generation-create", "generation-create"]);
    expect(sent?.batch[0]?.body).toMatchObject({ id: "job-1", sessionId: SESSION, input: "what broke?", output: "The build." });
    expect(sent?.batch[1]?.body).toMatchObject({
      traceId: "job-1",
      model: "claude-sonnet-4-5",
      input: "what broke?",
      usage: { input: 100, output: 9, total: 109, unit: "TOKENS" },
      startTime: "2026-01-01T10:00:00.000Z",
      endTime: "2026-01-01T10:00:02.000Z",
    });
    expect(sent?.batch[1]?.body.output).toHaveLength(2);
  });

  it("ships only what a resumed run added", async () => {
    backend = startTracingBackend();
    const { config, cwd } = setup(backend.url);
    const offset = TRANSCRIPT.indexOf('{"type":"user","message":{"role":"user","content":[');
    const r = await shipTranscript({ config, cwd, sessionId: SESSION, fromOffset: offset, trace: { id: "job-2", name: "job" } });
    expect(r.events).toBe(2);
  });

  it("gives up on a backend that does not answer, within its timeout", async () => {
    backend = startTracingBackend({ hang: true });
    const { config, cwd } = setup(backend.url);
    const t0 = Date.now();
    const r = await shipTranscript({ config, cwd, sessionId: SESSION, trace: { id: "job-3", name: "job" }, timeoutMs: 300 });
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(r.shipped).toBe(false);
  });

  it("does nothing without keys, and never throws on a missing transcript", async () => {
    const { config, cwd } = setup("http://127.0.0.1:1");
    expect((await shipTranscript({ config: { ...config, tracingSecretKey: none }, cwd, sessionId: SESSION, trace: { id: "j", name: "j" } })).shipped).toBe(
      false,
    );
    expect(await shipTranscript({ config, cwd: "/elsewhere", sessionId: SESSION, trace: { id: "j", name: "j" } })).toMatchObject({
      shipped: false,
      reason: "no transcript",
    });
  });
});
