import { describe, expect, it } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until } from "../../../test/support/until";
import { type StartAgentOptions, startAgent } from "./process";
import type { AgentEvent } from "./stream-json";

const FAKE = join(import.meta.dir, "../../../test/fixtures/fake-claude");
const SESSION = "0b7e2a44-9c1d-4f7e-8a55-3c2d1e0f9a88";

const setup = (env: Record<string, string> = {}) => {
  const dir = mkdtempSync(join(tmpdir(), "agent-run-"));
  const record = join(dir, "record.jsonl");
  const opts: StartAgentOptions = {
    binary: FAKE,
    args: { prompt: "say hello", model: "sonnet", sessionId: SESSION },
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HOME: dir, FAKE_CLAUDE_RECORD: record, ...env },
    killGraceMs: 300,
  };
  const recorded = () =>
    readFileSync(record, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { event: string; signal?: string; argv?: string[] });
  return { dir, opts, recorded };
};

/** Resolves once the fixture has recorded its start (its signal handlers are installed). */
const started = (recorded: () => Array<{ event: string }>) =>
  until(
    () => {
      try {
        return recorded().some((r) => r.event === "start");
      } catch {
        return false; // not written yet
      }
    },
    { ms: 5000, what: "the fixture agent to start", every: 10 },
  );

describe("startAgent", () => {
  it("passes the profile flags and reads the outcome of a successful run", async () => {
    const { opts, recorded } = setup();
    const run = startAgent(opts);
    const outcome = await run.wait();
    expect(outcome).toMatchObject({
      failed: false,
      exitCode: 0,
      signal: null,
      resultText: "Hello! The build passes on main.",
      sessionId: SESSION,
      costUsd: 0.0412,
    });
    expect(outcome.usage?.completion_tokens).toBe(14);
    expect(recorded()[0]?.argv).toEqual(["-p", "say hello", "--output-format", "stream-json", "--verbose", "--model", "sonnet", "--session-id", SESSION]);
  });

  it("yields each event while the agent is still running", async () => {
    const { opts } = setup({ FAKE_CLAUDE_DELAY_MS: "150", FAKE_CLAUDE_SCENARIO: "two-text-blocks" });
    const run = startAgent(opts);
    const events = run.events();
    let exited = false;
    void run.wait().then(() => (exited = true));
    const first = (await events.next()).value as AgentEvent;
    expect(first).toMatchObject({ type: "system", subtype: "init" });
    expect(exited).toBe(false);
    // Stopping early is fine: the rest is read by wait().
    await events.return(undefined);
    const outcome = await run.wait();
    expect(outcome.resultText).toBe("Merge #12 first; #13 depends on it.");
  });

  it("streams partial messages when asked", async () => {
    const { opts } = setup({ FAKE_CLAUDE_SCENARIO: "text-only" });
    const run = startAgent({ ...opts, args: { ...opts.args, includePartialMessages: true } });
    const types: string[] = [];
    for await (const ev of run.events()) types.push(ev.type);
    expect(types).toContain("stream_event");
    expect((await run.wait()).failed).toBe(false);
  });

  it("fails with the exit code and the stderr tail when the CLI exits non-zero", async () => {
    const { opts } = setup({ FAKE_CLAUDE_SCENARIO: "none", FAKE_CLAUDE_EXIT: "3", FAKE_CLAUDE_STDERR: "Error: config is broken" });
    const outcome = await startAgent(opts).wait();
    expect(outcome).toMatchObject({ failed: true, exitCode: 3, error: "the agent exited with code 3: Error: config is broken" });
    expect(outcome.stderrTail).toContain("config is broken");
  });

  it("fails on an is_error result even with exit code 0", async () => {
    const { opts } = setup({ FAKE_CLAUDE_SCENARIO: "auth-failure" });
    const outcome = await startAgent(opts).wait();
    expect(outcome).toMatchObject({ failed: true, exitCode: 0, isError: true, error: "Invalid API key · Please run /login" });
  });

  it("skips garbage lines between events", async () => {
    const { dir, opts } = setup();
    const lines = readFileSync(join(import.meta.dir, "../../../test/fixtures/claude-stream-json/text-only.jsonl"), "utf8")
      .trim()
      .split("\n");
    const file = join(dir, "garbage.jsonl");
    writeFileSync(file, ["Update available: 9.9.9", lines[0], "{not json", ...lines.slice(1)].join("\n"));
    const outcome = await startAgent({ ...opts, env: { ...opts.env, FAKE_CLAUDE_SCENARIO: file } }).wait();
    expect(outcome).toMatchObject({ failed: false, garbageLines: 2, resultText: "Hello! The build passes on main." });
  });

  it("cancel sends SIGTERM and reports cancelled", async () => {
    const { opts, recorded } = setup({ FAKE_CLAUDE_HANG: "1" });
    const run = startAgent(opts);
    await started(recorded);
    run.cancel();
    const outcome = await run.wait();
    expect(outcome).toMatchObject({ cancelled: true, failed: true, error: "cancelled", exitCode: 143 });
    expect(
      recorded()
        .filter((r) => r.event === "signal")
        .map((r) => r.signal),
    ).toEqual(["SIGTERM"]);
  });

  it("sends SIGKILL when SIGTERM is ignored past the grace period", async () => {
    const { opts, recorded } = setup({ FAKE_CLAUDE_HANG: "1", FAKE_CLAUDE_IGNORE_TERM: "1" });
    const controller = new AbortController();
    const run = startAgent({ ...opts, signal: controller.signal });
    await started(recorded);
    const t0 = Date.now();
    controller.abort();
    const outcome = await run.wait();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(outcome).toMatchObject({ cancelled: true, signal: "SIGKILL", exitCode: null });
    expect(
      recorded()
        .filter((r) => r.event === "signal")
        .map((r) => r.signal),
    ).toEqual(["SIGTERM"]);
  });

  it("stops the tools the agent started, not only the agent", async () => {
    const { opts, recorded } = setup({ FAKE_CLAUDE_HANG: "1", FAKE_CLAUDE_SPAWN_TOOL: "1" });
    const run = startAgent(opts);
    await started(recorded);
    await until(() => recorded().some((r) => r.event === "tool"), { ms: 5000, what: "the agent's tool to start", every: 10 });
    const toolPid = (recorded().find((r) => r.event === "tool") as { toolPid?: number } | undefined)?.toolPid;
    expect(toolPid).toBeNumber();
    run.cancel();
    await run.wait();
    // Gone, or a zombie waiting for init to reap it.
    const alive = () => {
      try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${toolPid}/stat`, "utf8"));
      } catch {
        return false;
      }
    };
    await until(() => !alive(), { ms: 2000, what: `tool ${toolPid} to end`, every: 10 });
    expect(alive()).toBe(false);
  });

  it("kills the run at its timeout and says so", async () => {
    const { opts, recorded } = setup({ FAKE_CLAUDE_HANG: "1" });
    const outcome = await startAgent({ ...opts, timeoutMs: 400 }).wait();
    expect(outcome).toMatchObject({ timedOut: true, failed: true, cancelled: false });
    expect(outcome.error).toContain("timeout");
    expect(recorded().some((r) => r.signal === "SIGTERM")).toBe(true);
  });

  it("sends a prompt that looks like a flag on stdin", async () => {
    const { dir, opts, recorded } = setup();
    const outcome = await startAgent({ ...opts, args: { ...opts.args, prompt: "--help me" } }).wait();
    expect(outcome.failed).toBe(false);
    expect(recorded()[0]?.argv?.[1]).toBe("--output-format");
    const transcript = readFileSync(join(dir, ".claude/projects", dir.replace(/[^a-zA-Z0-9]/g, "-"), `${SESSION}.jsonl`), "utf8");
    expect(transcript).toContain('"content":"--help me"');
  });

  it("stops a run at once when the CLI starts retrying a refused key (api_retry 401), and says why", async () => {
    const { dir, opts, recorded } = setup({ FAKE_CLAUDE_HANG: "1" });
    const scenario = join(dir, "refused.jsonl");
    writeFileSync(
      scenario,
      [
        JSON.stringify({ type: "system", subtype: "init", session_id: SESSION }),
        JSON.stringify({
          type: "system",
          subtype: "api_retry",
          attempt: 1,
          max_retries: 10,
          retry_delay_ms: 540,
          error_status: 401,
          error: "authentication_failed",
          session_id: SESSION,
        }),
      ]
        .map((l) => `${l}\n`)
        .join(""),
    );
    const t0 = Date.now();
    const outcome = await startAgent({ ...opts, env: { ...opts.env, FAKE_CLAUDE_SCENARIO: scenario } }).wait();
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(outcome).toMatchObject({ failed: true, cancelled: false, timedOut: false, errorCode: "authentication_failed" });
    expect(outcome.error).toContain("refused the agent's credentials (HTTP 401 authentication_failed)");
    expect(outcome.lastRetry).toMatchObject({ attempt: 1, error_status: 401 });
    expect(recorded().some((r) => r.signal === "SIGTERM")).toBe(true);
  });

  it("keeps a run going while the CLI retries an overload (api_retry 529)", async () => {
    const { dir, opts } = setup();
    const scenario = join(dir, "overloaded.jsonl");
    const lines = readFileSync(join(import.meta.dir, "../../../test/fixtures/claude-stream-json/text-only.jsonl"), "utf8")
      .trim()
      .split("\n");
    lines.splice(
      1,
      0,
      JSON.stringify({ type: "system", subtype: "api_retry", attempt: 1, max_retries: 10, retry_delay_ms: 500, error_status: 529, error: "overloaded" }),
    );
    writeFileSync(scenario, `${lines.join("\n")}\n`);
    const outcome = await startAgent({ ...opts, env: { ...opts.env, FAKE_CLAUDE_SCENARIO: scenario } }).wait();
    expect(outcome).toMatchObject({ failed: false, exitCode: 0, lastRetry: { error_status: 529, error: "overloaded" } });
  });

  it("says what to do when the CLI refuses to bypass permissions as root", async () => {
    const { opts } = setup({
      FAKE_CLAUDE_SCENARIO: "none",
      FAKE_CLAUDE_EXIT: "1",
      FAKE_CLAUDE_STDERR: "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n",
    });
    const outcome = await startAgent(opts).wait();
    expect(outcome.failed).toBe(true);
    expect(outcome.error).toStartWith("the service runs as root without IS_SANDBOX=1");
    expect(outcome.error).toContain("run the service as a non-root user, or set IS_SANDBOX=1");
    expect(outcome.error).toContain("(the CLI said: --dangerously-skip-permissions cannot be used with root/sudo privileges");
  });

  it("throws a clear error when the binary does not exist", () => {
    const { opts } = setup();
    expect(() => startAgent({ ...opts, binary: "/nonexistent/claude" })).toThrow(/SERVICE_CLAUDE_BINARY/);
  });

  it("reads a burst far bigger than the pipe (a line at a time from the agent) whole and in order, escapes and all", async () => {
    const { dir, opts } = setup();
    const delta = (i: number) =>
      JSON.stringify({
        type: "stream_event",
        event: { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: `${i} "q" \\ é 🎉\n` } },
        session_id: SESSION,
        parent_tool_use_id: null,
      });
    const lines = readFileSync(join(import.meta.dir, "../../../test/fixtures/claude-stream-json/text-only.jsonl"), "utf8")
      .trim()
      .split("\n");
    const n = 5000; // ~1 MB: the agent blocks on the full pipe again and again
    const file = join(dir, "burst.jsonl");
    writeFileSync(file, [lines[0], ...Array.from({ length: n }, (_, i) => delta(i)), ...lines.slice(1)].join("\n"));
    const run = startAgent({ ...opts, args: { ...opts.args, includePartialMessages: true }, env: { ...opts.env, FAKE_CLAUDE_SCENARIO: file } });
    const thinking: string[] = [];
    for await (const ev of run.events()) {
      if (ev.type === "stream_event" && ev.event.type === "content_block_delta" && ev.event.delta.type === "thinking_delta") {
        thinking.push(ev.event.delta.thinking);
      }
    }
    expect(thinking).toEqual(Array.from({ length: n }, (_, i) => `${i} "q" \\ é 🎉\n`));
    expect(await run.wait()).toMatchObject({ failed: false, garbageLines: 0, resultText: "Hello! The build passes on main." });
  });

  it("reads the same events through Bun's socketpair, where no pipe can be made", async () => {
    const { opts } = setup({ FAKE_CLAUDE_SCENARIO: "thinking-tool-final" });
    const events = async (stdoutPipe: boolean) => {
      const run = startAgent({ ...opts, stdoutPipe, args: { ...opts.args, includePartialMessages: true } });
      const all: AgentEvent[] = [];
      for await (const ev of run.events()) all.push(ev);
      return { all, outcome: await run.wait() };
    };
    const [piped, socket] = [await events(true), await events(false)];
    expect(socket.all).toEqual(piped.all);
    expect(piped.all.length).toBeGreaterThan(10);
    expect(socket.outcome).toMatchObject({ failed: false, resultText: piped.outcome.resultText });
  });

  it("leaves no file descriptor open after runs that finish, fail or are cancelled", async () => {
    const open = () => readdirSync("/proc/self/fd").length;
    const three = async () => {
      await startAgent(setup().opts).wait();
      await startAgent(setup({ FAKE_CLAUDE_SCENARIO: "none", FAKE_CLAUDE_EXIT: "3" }).opts).wait();
      const { opts, recorded } = setup({ FAKE_CLAUDE_HANG: "1" });
      const run = startAgent(opts);
      await started(recorded);
      run.cancel();
      await run.wait();
    };
    // One round first, so what Bun opens once for itself (and an earlier test's descriptors,
    // closed as their streams finish) is not counted.
    await three();
    const before = open();
    for (let i = 0; i < 5; i++) await three();
    // A leak keeps at least one descriptor a run: 15 here. The last run's streams may still be
    // closing as wait() returns, so the count is awaited, not read once.
    await until(() => open() <= before + 2, { ms: 2_000, what: () => `descriptors back to ${before} (now ${open()})` });
  });
});
