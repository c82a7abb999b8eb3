// Job events benchmark (issue 18): 10,000 agent events (recorded-format stream-json replayed by
// test/fixtures/fake-claude) delivered through GET /jobs/{id}/events to a client, against the
// agent's own output of the same events (the floor, measured in the same run: the same agent
// spawned directly, its stdout read to the end). Both are timed from the agent's own start
// (its FAKE_CLAUDE_RECORD start line) to the last event read. Target: ratio ≤ 1.3×.
// Two paces: a burst (the agent prints as fast as it can) and a paced agent (1 ms a line; one pair).
// The burst is BENCH_RUNS pairs (default 7) after one warm-up pair that is not counted; each pair is
// the agent alone and through the service back to back (which goes first alternates, so a load
// that rises or falls during the run weighs on both sides alike), and its ratio is taken within
// the pair. Printed: the median ratio of the pairs and their spread (lowest–highest), the load
// average before and after. Beside them, the service's own CPU per event (/proc, every thread of
// the server process; the agent is a child and not counted): steadier than wall time when other
// work shares the cores.
//
//   bun run bench job-events
//   BENCH_EVENTS=20000 bun scripts/bench/job-events.ts
//   BENCH_REDIS_URL=redis://127.0.0.1:6379 bun scripts/bench/job-events.ts   (log in Redis)
//   BENCH_PACED=0 bun scripts/bench/job-events.ts   (the burst only: ~10 s instead of ~40)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { createParser } from "eventsource-parser";
import { ServiceClient } from "../../src/orchestrator/client.ts";
import { tempDir } from "../../test/support/main-process.ts";
import { cpuMs, type Started, startService } from "../../test/support/process.ts";
import { median } from "./lib/stats.ts";
import { judged, num, table } from "./lib/table.ts";

const ROOT = resolve(import.meta.dir, "../..");
const FAKE = join(ROOT, "test/fixtures/fake-claude");
const KEY = "bench-events-key";
const AUTH = { authorization: `Bearer ${KEY}` };
const EVENTS = Number(process.env.BENCH_EVENTS) > 0 ? Number(process.env.BENCH_EVENTS) : 10_000;
const REDIS = process.env.BENCH_REDIS_URL;
const RUNS = Number(process.env.BENCH_RUNS) > 0 ? Number(process.env.BENCH_RUNS) : 7;
const PACED = process.env.BENCH_PACED !== "0";
const TARGET_RATIO = 1.3;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const tmp = tempDir("brain-bench-events");
const SESSION = "6f1c2a9e-3b7d-4e2a-9c1f-2d8e5b7a4c10";

/** EVENTS lines in Claude Code's format: text, a tool call, its result, over and over; then the result line. */
function scenario(): string {
  const lines: string[] = [JSON.stringify({ type: "system", subtype: "init", cwd: "/", session_id: SESSION, tools: ["Bash"], model: "claude-sonnet-4-5" })];
  const usage = { input_tokens: 12, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 40 };
  for (let i = 0; lines.length < EVENTS - 1; i++) {
    const msg = { model: "claude-sonnet-4-5", id: `msg_${i}`, type: "message", role: "assistant", stop_reason: null, usage };
    const kind = lines.length % 3;
    if (kind === 1)
      lines.push(
        JSON.stringify({
          type: "assistant",
          message: { ...msg, content: [{ type: "text", text: `Step ${i}: looking at the parser and its tests before changing anything.` }] },
          parent_tool_use_id: null,
          session_id: SESSION,
        }),
      );
    else if (kind === 2)
      lines.push(
        JSON.stringify({
          type: "assistant",
          message: {
            ...msg,
            content: [
              { type: "tool_use", id: `toolu_${i}`, name: "Bash", input: { command: `grep -rn parse src/ | head -${i % 50}`, description: "Find the parser" } },
            ],
          },
          parent_tool_use_id: null,
          session_id: SESSION,
        }),
      );
    else
      lines.push(
        JSON.stringify({
          type: "user",
          message: {
            role: "user",
            content: [{ tool_use_id: `toolu_${i - 1}`, type: "tool_result", content: `src/parser.ts:${i}: export function parse(input: string) {` }],
          },
          parent_tool_use_id: null,
          session_id: SESSION,
        }),
      );
  }
  lines.push(
    JSON.stringify({
      type: "result",
      subtype: "success",
      is_error: false,
      duration_ms: 1000,
      num_turns: Math.floor(EVENTS / 3),
      session_id: SESSION,
      total_cost_usd: 1.23,
      usage,
      result: "done",
    }),
  );
  const file = join(tmp, "scenario.jsonl");
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

const startOf = (record: string, marker: string): number => {
  const line = readFileSync(record, "utf8")
    .split("\n")
    .find((l) => l.includes('"start"') && l.includes(marker));
  if (!line) throw new Error(`the agent never recorded its start for ${marker}`);
  return JSON.parse(line).at as number;
};

let aloneRuns = 0;
/** The floor: the agent alone, its stdout read to the end by this process. */
async function agentAlone(file: string, delayMs: number): Promise<{ ms: number; lines: number }> {
  const record = join(tmp, `alone-${delayMs}-${++aloneRuns}.jsonl`);
  const cwd = mkdtempSync(join(tmp, "alone-"));
  const proc = Bun.spawn([FAKE, "-p", "bench-alone", "--output-format", "stream-json", "--verbose"], {
    cwd,
    env: { PATH: process.env.PATH, HOME: cwd, FAKE_CLAUDE_SCENARIO: file, FAKE_CLAUDE_RECORD: record, FAKE_CLAUDE_DELAY_MS: String(delayMs) },
    stdout: "pipe",
  });
  let lines = 0;
  const decoder = new TextDecoder();
  for await (const chunk of proc.stdout) lines += decoder.decode(chunk, { stream: true }).split("\n").length - 1;
  const end = Date.now();
  await proc.exited;
  return { ms: end - startOf(record, "bench-alone"), lines };
}

async function service(delayMs: number): Promise<{ url: string; server: Started; record: string }> {
  const record = join(tmp, `service-${delayMs}.jsonl`);
  const server = await startService("orchestrator", {
    cwd: tmp,
    env: {
      PATH: process.env.PATH,
      HOME: join(tmp, `home-${delayMs}`),
      SERVICE_API_KEYS: KEY,
      SERVICE_OTEL_ENABLED: "false",
      SERVICE_CLAUDE_BINARY: FAKE,
      SERVICE_AGENT_ENV: "FAKE_CLAUDE_*",
      FAKE_CLAUDE_RECORD: record,
      FAKE_CLAUDE_DELAY_MS: String(delayMs),
      FAKE_CLAUDE_SCENARIO: process.env.FAKE_CLAUDE_SCENARIO,
      LOG_LEVEL: "1",
      ...(REDIS ? { REDIS_URL: REDIS, REDIS_KEY_PREFIX: `bench-events-${process.pid}` } : {}),
    },
    logPath: join(tmp, `service-${delayMs}.log`),
  });
  return { url: server.url, server, record };
}

/** Submits the job, reads its events to the end; times the agent's start → the last event read. */
async function throughService(
  svc: { url: string; server: Started; record: string },
  delayMs: number,
  run: number,
): Promise<{ ms: number; events: number; agentEvents: number; bytes: number; cpuMs: number; endMs: number }> {
  const { url, server, record } = svc;
  const task = `bench-through-${delayMs}-${run}`;
  const cpuBefore = cpuMs(server.pid);
  const job = await new ServiceClient({ baseUrl: url, token: KEY }).submitJob({ task });
  // The stream read off the wire (not ServiceClient.jobEvents, which parses each event's JSON): its bytes are a figure.
  const stream = await fetch(`${url}/jobs/${job.id}/events`, { headers: { ...AUTH, accept: "text/event-stream" } });
  let events = 0;
  let agentEvents = 0;
  let bytes = 0;
  let last = 0;
  let lastAgent = 0;
  const parser = createParser({
    onEvent: (m) => {
      events++;
      last = Date.now();
      if (m.event !== "status" && m.event !== "usage") {
        agentEvents++;
        lastAgent = last;
      }
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of stream.body!) {
    bytes += chunk.byteLength;
    parser.feed(decoder.decode(chunk, { stream: true }));
  }
  return { ms: last - startOf(record, task), events, agentEvents, bytes, cpuMs: cpuMs(server.pid) - cpuBefore, endMs: last - lastAgent };
}

try {
  const file = scenario();
  // The service's agent reads its scenario from the environment it inherits.
  process.env.FAKE_CLAUDE_SCENARIO = file;
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(" ");
  const loadBefore = load();
  console.log(
    `${num(EVENTS)} agent lines (text, tool call, tool result, …), log in ${REDIS ? "Redis" : "a JSONL file"}; burst: ${RUNS} pairs (alone, through) after a warm-up pair, ratio per pair, medians\n`,
  );
  const rows = [
    [
      "pace",
      "agent alone (floor)",
      "through /jobs/{id}/events",
      "events read",
      "service CPU per event",
      "last agent event → final status",
      "ratio (spread)",
      `target ≤ ${TARGET_RATIO}×`,
    ],
  ];
  for (const delay of PACED ? [0, 1] : [0]) {
    const svc = await service(delay);
    try {
      const alone: number[] = [];
      const through: Awaited<ReturnType<typeof throughService>>[] = [];
      let lines = 0;
      const pairs = delay === 0 ? RUNS + 1 : 1;
      for (let i = 0; i < pairs; i++) {
        const aloneFirst = i % 2 === 0;
        const a = aloneFirst ? await agentAlone(file, delay) : undefined;
        const t = await throughService(svc, delay, i);
        const b = a ?? (await agentAlone(file, delay));
        // The first burst pair warms the service (JIT, file cache) and is not counted.
        if (delay === 0 && i === 0) continue;
        alone.push(b.ms);
        lines = b.lines;
        through.push(t);
      }
      const t = through[through.length - 1]!;
      const ratios = through.map((x, i) => x.ms / alone[i]!);
      const ratio = median(ratios);
      rows.push([
        delay === 0 ? "burst" : `${delay} ms a line`,
        `${num(median(alone))} ms (${num(lines)} lines)`,
        `${num(median(through.map((x) => x.ms)))} ms (${num(t.bytes / 1024)} KiB)`,
        `${num(t.events)} (${num(t.agentEvents)} from the agent)`,
        // Summed over the runs: /proc counts in 10 ms ticks, too coarse for one run's figure.
        `${num((sum(through.map((x) => x.cpuMs)) * 1000) / sum(through.map((x) => x.events)), 1)} µs`,
        `${num(median(through.map((x) => x.endMs)))} ms`,
        ratios.length > 1 ? `${num(ratio, 2)}× (${num(Math.min(...ratios), 2)}–${num(Math.max(...ratios), 2)})` : `${num(ratio, 2)}×`,
        judged("", ratio <= TARGET_RATIO).trim(),
      ]);
    } finally {
      await svc.server.stop();
    }
  }
  console.log(table(rows));
  console.log(`\nload average (1, 5, 15 min): ${loadBefore} before, ${load()} after`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
