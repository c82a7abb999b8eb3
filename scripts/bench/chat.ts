// Chat benchmark (issue 5): the agent-mode service (`bun src/main.ts --only orchestrator`) with a fixture agent
// (test/fixtures/fake-claude replaying generated stream-json).
//
//  1. delivery: an agent printing N text deltas (default 20,000) as fast as it can — time from
//     request to [DONE] through the service vs. the same agent's lines piped straight to this
//     process (target ratio ≤ 1.3). Also with N thinking deltas and /show-thinking, where every
//     delta becomes its own SSE chunk.
//  2. first content chunk: request → first content chunk, minus the agent's own time to print
//     the line it comes from when run directly (target < 20 ms), median of several runs.
//  3. RSS of the service with 200 concurrent streams (a paced shell agent, so 200 agents fit).
// 1 and 2 are measured for /v1/chat/completions and for /v1/responses streaming (issue 15: the
// same figures; the first text event there is output_text.delta or reasoning_summary_text.delta).
// Beside each delivery figure, the service's own CPU per delta (/proc, the server process; the
// agent is its child and not counted): steadier than wall time when other work shares the cores.
// BENCH_ONLY=delivery runs only part 1. Prints a table; asserts nothing.
//
//   bun run bench chat
//   BENCH_DELTAS=50000 BENCH_RUNS=5 BENCH_STREAMS=200 bun scripts/bench/chat.ts
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { tempDir } from "../../test/support/main-process.ts";
import { cpuMs, rssMb, type Started, startService } from "../../test/support/process.ts";
import { envNum } from "./lib/env.ts";
import { median } from "./lib/stats.ts";
import { judged, num, table } from "./lib/table.ts";

const ROOT = resolve(import.meta.dir, "../..");
const FAKE_CLAUDE = join(ROOT, "test/fixtures/fake-claude");
const PACED_AGENT = join(import.meta.dir, "lib/paced-agent.sh");
const AGENT = "bench-agent";
const KEY = "bench-key";

const settings = {
  deltas: envNum("BENCH_DELTAS", 20_000),
  runs: envNum("BENCH_RUNS", 5),
  firstChunkRuns: envNum("BENCH_FIRST_CHUNK_RUNS", 10),
  streams: envNum("BENCH_STREAMS", 200),
  streamLines: 12,
  pauseSeconds: 0.1,
};
const TARGET = { ratio: 1.3, firstChunkMs: 20 };

// --- scenarios -------------------------------------------------------------------------------
const SID = "00000000-0000-4000-8000-000000000000";
const line = (o: Record<string, unknown>) => JSON.stringify({ ...o, session_id: SID });
const ev = (event: Record<string, unknown>) => line({ type: "stream_event", event, parent_tool_use_id: null });

function deltaScenario(n: number, kind: "text" | "thinking"): string {
  const out = [line({ type: "system", subtype: "init", cwd: "/", model: "bench" })];
  out.push(ev({ type: "message_start", message: { id: "msg_bench", role: "assistant", content: [] } }));
  out.push(ev({ type: "content_block_start", index: 0, content_block: kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "" } }));
  for (let i = 0; i < n; i++) {
    out.push(
      ev({
        type: "content_block_delta",
        index: 0,
        delta: kind === "text" ? { type: "text_delta", text: `w${i} ` } : { type: "thinking_delta", thinking: `w${i} ` },
      }),
    );
  }
  out.push(ev({ type: "content_block_stop", index: 0 }));
  if (kind === "thinking") {
    out.push(ev({ type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }));
    out.push(ev({ type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "done" } }));
    out.push(ev({ type: "content_block_stop", index: 1 }));
  }
  out.push(ev({ type: "message_delta", delta: { stop_reason: "end_turn" } }));
  out.push(ev({ type: "message_stop" }));
  out.push(line({ type: "result", subtype: "success", is_error: false, result: "done", usage: { input_tokens: 1, output_tokens: n } }));
  return `${out.join("\n")}\n`;
}

// --- helpers -------------------------------------------------------------------------------
async function git(args: string[], cwd: string): Promise<void> {
  const p = Bun.spawn(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", ...args], { cwd, stdout: "ignore", stderr: "pipe" });
  if ((await p.exited) !== 0) throw new Error(`git ${args[0]} failed: ${await new Response(p.stderr).text()}`);
}

async function makeHub(dir: string): Promise<string> {
  const files: Record<string, string> = {
    [`agents/${AGENT}/agent.yml`]: `name: ${AGENT}\nmodel: sonnet\nmax_turns: 5\npermission_mode: bypassPermissions\n`,
    [`agents/${AGENT}/package/CLAUDE.md`]: "# Bench agent\n",
  };
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), content);
  }
  await git(["init", "-q"], dir);
  await git(["add", "-A"], dir);
  await git(["commit", "-q", "-m", "hub"], dir);
  return `file://${dir}`;
}

async function startAgentService(work: string, hubUrl: string, binary: string, agentEnv: Record<string, string>): Promise<{ url: string; started: Started }> {
  const home = mkdtempSync(join(work, "home-"));
  const started = await startService("orchestrator", {
    logPath: join(work, "service.log"),
    env: {
      PATH: process.env.PATH,
      HOME: home,
      SERVICE_API_KEYS: KEY,
      SERVICE_HUB_URL: hubUrl,
      HUB_AGENT: AGENT,
      SERVICE_CLAUDE_BINARY: binary,
      // The fixture agent's knobs reach it as the operator's additions to its environment.
      SERVICE_AGENT_ENV: "FAKE_CLAUDE_*",
      SERVICE_CLONE_ROOT: join(home, "clones"),
      SERVICE_PACKAGE_DIR: join(home, "package"),
      SERVICE_OTEL_ENABLED: "false",
      LOG_LEVEL: "1",
      ...agentEnv,
    },
    timeoutMs: 30_000,
  });
  return { url: started.url, started };
}

interface StreamTiming {
  totalMs: number;
  firstContentMs: number;
  chunks: number;
}

type Surface = "chat" | "responses";
const CONTENT_EVENTS = ["event: response.output_text.delta", "event: response.reasoning_summary_text.delta"];

/** One streamed request, read to its end; counts data events and notes the first content chunk (or text event). */
async function streamOnce(url: string, content: string, surface: Surface = "chat"): Promise<StreamTiming> {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/${surface === "chat" ? "chat/completions" : "responses"}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-conversation-id": crypto.randomUUID() },
    body: JSON.stringify(
      surface === "chat" ? { model: AGENT, stream: true, messages: [{ role: "user", content }] } : { model: AGENT, stream: true, input: content },
    ),
  });
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  const decoder = new TextDecoder();
  let firstContentMs = Number.NaN;
  let chunks = 0;
  let tail = "";
  for await (const part of res.body!) {
    const text = tail + decoder.decode(part, { stream: true });
    const end = text.lastIndexOf("\n\n");
    if (end < 0) {
      tail = text;
      continue;
    }
    // Whole events only; the rest waits for the next read.
    for (let i = text.indexOf("data: "); i >= 0 && i < end; i = text.indexOf("data: ", i + 6)) {
      chunks++;
      if (Number.isNaN(firstContentMs) && surface === "chat") {
        const d = text.indexOf('"delta":{', i) + 9;
        if (text.startsWith('"content"', d) || text.startsWith('"reasoning_content"', d)) firstContentMs = performance.now() - t0;
      }
    }
    if (Number.isNaN(firstContentMs) && surface === "responses" && CONTENT_EVENTS.some((e) => text.lastIndexOf(e, end) >= 0)) {
      firstContentMs = performance.now() - t0;
    }
    tail = text.slice(end + 2);
  }
  return { totalMs: performance.now() - t0, firstContentMs, chunks };
}

/** The agent run directly, its stdout piped here: time to the end, and to the first line matching `marker`. */
async function pipedOnce(scenario: string, marker: string): Promise<{ totalMs: number; markerMs: number; lines: number }> {
  const t0 = performance.now();
  const proc = Bun.spawn([FAKE_CLAUDE, "-p", "hi", "--output-format", "stream-json", "--verbose", "--include-partial-messages"], {
    env: { PATH: process.env.PATH, HOME: tmpdir(), FAKE_CLAUDE_SCENARIO: scenario },
    stdout: "pipe",
    stderr: "ignore",
  });
  const decoder = new TextDecoder();
  let markerMs = Number.NaN;
  let lines = 0;
  for await (const part of proc.stdout) {
    const text = decoder.decode(part, { stream: true });
    for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) lines++;
    if (Number.isNaN(markerMs) && text.includes(marker)) markerMs = performance.now() - t0;
  }
  await proc.exited;
  return { totalMs: performance.now() - t0, markerMs, lines };
}

// --- run -----------------------------------------------------------------------------------
const work = tempDir("bench-chat");
const services: Started[] = [];
try {
  const hubUrl = await makeHub(join(work, "hub"));
  const textFile = join(work, "text-deltas.jsonl");
  const thinkingFile = join(work, "thinking-deltas.jsonl");
  writeFileSync(textFile, deltaScenario(settings.deltas, "text"));
  writeFileSync(thinkingFile, deltaScenario(settings.deltas, "thinking"));
  const small = join(ROOT, "test/fixtures/claude-stream-json/text-only.jsonl");

  console.log(
    `delivery: ${num(settings.deltas)} deltas, ${settings.runs} run(s) each; first chunk: ${settings.firstChunkRuns} runs; ${settings.streams} concurrent streams`,
  );
  const svc = await startAgentService(work, hubUrl, FAKE_CLAUDE, { FAKE_CLAUDE_SCENARIO: textFile });
  services.push(svc.started);
  // The agent env is fixed per service process; the scenario is switched by restarting nothing:
  // the text scenario goes through this service, the thinking one through a second.
  const svcThinking = await startAgentService(work, hubUrl, FAKE_CLAUDE, { FAKE_CLAUDE_SCENARIO: thinkingFile });
  services.push(svcThinking.started);
  const svcSmall = await startAgentService(work, hubUrl, FAKE_CLAUDE, { FAKE_CLAUDE_SCENARIO: small });
  services.push(svcSmall.started);

  // Warm-up: the first spawn pays for disk caches.
  await pipedOnce(small, '"type":"result"');
  await streamOnce(svcSmall.url, "warm up");

  const rows: string[][] = [["measure", "through the service", "piped straight", "ratio / overhead", "target", "service CPU per delta"]];
  const deliveryOnly = process.env.BENCH_ONLY === "delivery";
  for (const surface of ["chat", "responses"] as const) {
    const via = surface === "chat" ? "chat completions" : "/v1/responses";
    for (const [label, url, file, content] of [
      [`${num(settings.deltas)} text deltas (one final ${surface === "chat" ? "chunk" : "text event"})`, svc.url, textFile, "go"],
      [`${num(settings.deltas)} thinking deltas (/show-thinking: an event each)`, svcThinking.url, thinkingFile, "/show-thinking go"],
    ] as const) {
      const through: number[] = [];
      const piped: number[] = [];
      const cpu: number[] = [];
      let chunks = 0;
      const pid = (url === svc.url ? svc : svcThinking).started.pid;
      for (let i = 0; i < settings.runs; i++) {
        const before = cpuMs(pid);
        const s = await streamOnce(url, content, surface);
        cpu.push(((cpuMs(pid) - before) * 1000) / settings.deltas);
        through.push(s.totalMs);
        chunks = s.chunks;
        piped.push((await pipedOnce(file, '"type":"result"')).totalMs);
      }
      const ratio = median(through) / median(piped);
      rows.push([
        `${via}: ${label}, ${num(chunks)} SSE events`,
        `${num(median(through))} ms`,
        `${num(median(piped))} ms`,
        judged(num(ratio, 2), ratio <= TARGET.ratio),
        `≤ ${TARGET.ratio}×`,
        `${num(median(cpu), 2)} µs`,
      ]);
    }
    if (deliveryOnly) continue;
    // Back to defaults on the thinking service (the toggle is sticky).
    await streamOnce(svcThinking.url, "/hide-thinking");

    const first: number[] = [];
    const direct: number[] = [];
    for (let i = 0; i < settings.firstChunkRuns; i++) {
      first.push((await streamOnce(svcSmall.url, "hello", surface)).firstContentMs);
      // The final is known at the result line: the agent's own time to print it.
      direct.push((await pipedOnce(small, '"type":"result"')).markerMs);
    }
    const overhead = median(first) - median(direct);
    rows.push([
      `${via}: first content ${surface === "chat" ? "chunk" : "text event"} (text-only, final at result)`,
      `${num(median(first), 1)} ms`,
      `${num(median(direct), 1)} ms`,
      judged(`+${num(overhead, 1)} ms`, overhead < TARGET.firstChunkMs),
      `< ${TARGET.firstChunkMs} ms`,
      "",
    ]);

    const firstThinking: number[] = [];
    const directThinking: number[] = [];
    for (let i = 0; i < settings.firstChunkRuns; i++) {
      const t = await streamOnce(svcThinking.url, "/show-thinking hello", surface);
      firstThinking.push(t.firstContentMs);
      directThinking.push((await pipedOnce(thinkingFile, '"thinking_delta"')).markerMs);
    }
    await streamOnce(svcThinking.url, "/hide-thinking");
    const thinkingOverhead = median(firstThinking) - median(directThinking);
    rows.push([
      `${via}: first thinking ${surface === "chat" ? "chunk" : "event"} (token by token)`,
      `${num(median(firstThinking), 1)} ms`,
      `${num(median(directThinking), 1)} ms`,
      judged(`+${num(thinkingOverhead, 1)} ms`, thinkingOverhead < TARGET.firstChunkMs),
      `< ${TARGET.firstChunkMs} ms`,
      "",
    ]);
  }

  // 200 concurrent streams: a paced shell agent (12 lines, 0.1 s apart).
  if (!deliveryOnly) {
    const paced = await startAgentService(work, hubUrl, PACED_AGENT, { BENCH_AGENT_FILE: small, BENCH_AGENT_PAUSE: String(settings.pauseSeconds) });
    services.push(paced.started);
    await streamOnce(paced.url, "warm up");
    const idle = rssMb(paced.started.pid);
    let peak = idle;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(paced.started.pid))), 20);
    const t0 = performance.now();
    const results = await Promise.allSettled(Array.from({ length: settings.streams }, (_, i) => streamOnce(paced.url, `stream ${i}`)));
    const wall = performance.now() - t0;
    clearInterval(sampler);
    const ok = results.filter((r) => r.status === "fulfilled" && r.value.chunks >= 3).length;
    rows.push([
      `RSS with ${settings.streams} concurrent streams (${ok} completed in ${num(wall / 1000, 1)} s)`,
      `${num(peak)} MB peak`,
      `${num(idle)} MB idle`,
      `+${num(peak - idle)} MB`,
      "report",
      "",
    ]);
  }

  console.log(`\n${table(rows)}`);
} finally {
  for (const s of services) await s.stop();
  rmSync(work, { recursive: true, force: true });
}
