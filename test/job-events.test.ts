// Watching a job (issue 18): GET /jobs/{id}/events through the real process and the fixture agent
// replaying a recorded Claude Code stream; resume with Last-Event-ID; the job record's running
// totals; budgets and turn limits; the Redis-backed log.
import { afterAll, describe, expect, it } from "bun:test";
import { createClient } from "redis";
import { readJobEvents } from "./support/job-events";
import { describeWithRedis, REDIS_URL } from "./support/kv";
import { AUTH, finished, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { until } from "./support/until";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const body = (r: Response) => r.json() as Promise<any>;
const running: Orchestrator[] = [];
const start = async (env: Record<string, string> = {}) => {
  const o = await startOrchestrator({ env });
  running.push(o);
  return o;
};
afterAll(async () => {
  await Promise.all(running.splice(0).map((o) => o.stop("SIGKILL")));
});

// The agent's events in order; `usage` events (running totals, at most one a second, and one
// from the result line) come between them as time passes, so they are checked apart.
const TOOL_JOB_TYPES = ["status", "status", "thinking", "text", "tool_use", "tool_result", "text", "status"];

function checkToolJob(events: Array<{ id: number; type: string; data: Record<string, unknown> }>) {
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  const agent = events.filter((e) => e.type !== "usage");
  expect(agent.map((e) => e.type)).toEqual(TOOL_JOB_TYPES);
  expect(agent.filter((e) => e.type === "status").map((e) => e.data.status)).toEqual(["queued", "running", "succeeded"]);
  expect(agent[3]!.data).toMatchObject({ text: "Let me run the tests first.", final: false });
  expect(agent[4]!.data).toMatchObject({
    name: "Bash",
    tool_use_id: "toolu_01RunTests",
    input: { command: "bun test test/jobs.test.ts", description: "Run the job tests" },
  });
  expect(agent[5]!.data).toMatchObject({ tool_use_id: "toolu_01RunTests", is_error: false, content: expect.stringContaining("41 pass") });
  expect(agent[6]!.data).toMatchObject({ final: true, text: expect.stringContaining("One test fails") });
  const usage = events.filter((e) => e.type === "usage");
  // The first model message's usage is reported as soon as it arrives, the result's at the end.
  expect(usage[0]!.data).toMatchObject({ num_turns: 1, total_cost_usd: null, usage: { input_tokens: 12, cache_read_input_tokens: 18000 } });
  expect(usage.at(-1)!.data).toMatchObject({ total_cost_usd: 0.0412, num_turns: 2, usage: { cache_read_input_tokens: 36000, output_tokens: 119 } });
  expect(events.at(-2)!.type).toBe("usage");
}

describe("GET /jobs/{id}/events", () => {
  let o: Orchestrator;
  it("streams a real-format job's events in order, live, and ends after the final status", async () => {
    o = await start({ FAKE_CLAUDE_SCENARIO: "thinking-tool-final", FAKE_CLAUDE_DELAY_MS: "40" });
    const job = await o.submit({ task: "Find the failing test" });
    const { status, events, contentType } = await readJobEvents(`${o.url}/jobs/${job.id}/events`, AUTH);
    expect(status).toBe(200);
    expect(contentType).toContain("text/event-stream");
    checkToolJob(events);
    // Live: the stream started before the job ended, so its first events came while it ran.
    const record = await o.job(job.id);
    expect(record.status).toBe("succeeded");
  });

  it("replays a finished job's whole log, and resumes after Last-Event-ID without loss or duplicates", async () => {
    const job = await o.submit({ task: "Find the failing test again" });
    await o.until(job.id, finished);
    const all = (await readJobEvents(`${o.url}/jobs/${job.id}/events`, AUTH)).events;
    checkToolJob(all);
    const rest = (await readJobEvents(`${o.url}/jobs/${job.id}/events`, AUTH, { lastEventId: 4 })).events;
    expect(rest).toEqual(all.slice(4));
    const viaQuery = (await readJobEvents(`${o.url}/jobs/${job.id}/events?last_event_id=10`, AUTH)).events;
    expect(viaQuery).toEqual(all.slice(10));
  });

  it("resumes a running job where a dropped connection left off", async () => {
    const job = await o.submit({ task: "Find it a third time" });
    const first = await readJobEvents(`${o.url}/jobs/${job.id}/events`, AUTH, { stopAfter: (e) => e.type === "tool_use" });
    expect((await o.job(job.id)).status).toBe("running");
    expect(first.events.at(-1)!.type).toBe("tool_use");
    const rest = await readJobEvents(`${o.url}/jobs/${job.id}/events`, AUTH, { lastEventId: first.events.at(-1)!.id });
    checkToolJob([...first.events, ...rest.events]);
  });

  it("keeps the totals on the job record: usage with cache tokens, cost, turns, duration, session", async () => {
    const job = (await body(await o.call("/jobs?limit=1"))).jobs[0];
    const done = await o.until(job.id, finished);
    expect(done).toMatchObject({ status: "succeeded", total_cost_usd: 0.0412, cost_usd: 0.0412, num_turns: 2 });
    expect(done.usage).toMatchObject({
      input_tokens: 18,
      output_tokens: 119,
      cache_creation_input_tokens: 2048,
      cache_read_input_tokens: 36000,
      total_tokens: 38185,
    });
    expect(done.duration_ms).toBe(8123);
    expect(done.session_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers 404 for an unknown job and 400 for a Last-Event-ID that is not a number", async () => {
    const missing = await o.call("/jobs/0194a3b2-6c1e-7f00-8a3b-1c2d3e4f5a6b/events");
    expect(missing.status).toBe(404);
    expect((await body(missing)).error.code).toBe("job_not_found");
    const job = (await body(await o.call("/jobs?limit=1"))).jobs[0];
    const bad = await o.call(`/jobs/${job.id}/events`, { headers: { "last-event-id": "abc" } });
    expect(bad.status).toBe(400);
    expect((await body(bad)).error.message).toContain("Last-Event-ID");
    expect((await fetch(`${o.url}/jobs/${job.id}/events`)).status).toBe(401);
  });

  it("GET /jobs filters by since and sorts by created time", async () => {
    const all = ((await (await o.call("/jobs?limit=100")).json()) as { jobs: unknown }).jobs as Array<{ id: string; created_at: string }>;
    expect(all.length).toBeGreaterThanOrEqual(3);
    const asc = ((await (await o.call("/jobs?limit=100&order=asc")).json()) as { jobs: unknown }).jobs as Array<{ id: string }>;
    expect(asc.map((j) => j.id)).toEqual(all.map((j) => j.id).reverse());
    const since = all[1]!.created_at;
    const recent = ((await (await o.call(`/jobs?since=${encodeURIComponent(since)}`)).json()) as { jobs: unknown }).jobs as Array<{ id: string }>;
    expect(recent.map((j) => j.id)).toEqual(all.filter((j) => j.created_at >= since).map((j) => j.id));
    const bad = await o.call("/jobs?since=yesterday");
    expect(bad.status).toBe(400);
    expect((await body(bad)).error.details[0].path).toContain("since");
  });
});

describe("budgets and limits", () => {
  it("stops a job at its budget: failed, the budget named, the flag passed to the CLI", async () => {
    const o = await start({ FAKE_CLAUDE_SCENARIO: "thinking-tool-final" });
    const job = await o.submit({ task: "Spend too much", max_budget_usd: 0.01 });
    expect(job.max_budget_usd).toBe(0.01);
    const done = await o.until(job.id, finished);
    expect(done.status).toBe("failed");
    expect(done.error).toContain("max_budget_usd");
    expect(done.error).toContain("Reached maximum budget ($0.01)");
    expect(done.total_cost_usd).toBe(0.0412);
    const argv = o.agentLog().find((e) => e.event === "start" && e.argv?.includes("Spend too much"))!.argv!;
    expect(argv.slice(argv.indexOf("--max-budget-usd"), argv.indexOf("--max-budget-usd") + 2)).toEqual(["--max-budget-usd", "0.01"]);
    const { events } = await readJobEvents(`${o.url}/jobs/${job.id}/events`, AUTH);
    expect(events.find((e) => e.type === "error")!.data).toMatchObject({ code: "error_max_budget_usd" });
    expect(events.at(-1)!.data).toMatchObject({ status: "failed", error: expect.stringContaining("max_budget_usd") });

    const within = await o.until((await o.submit({ task: "Spend a little", max_budget_usd: 1 })).id, finished);
    expect(within.status).toBe("succeeded");
    const invalid = await o.call("/jobs", { method: "POST", json: { task: "x", max_budget_usd: -1 } });
    expect(invalid.status).toBe(400);
  });

  it("reports a turn limit reached as such, never as success", async () => {
    const o = await start({ FAKE_CLAUDE_SCENARIO: "ends-on-tool-call" });
    const done = await o.until((await o.submit({ task: "Run out of turns" })).id, finished);
    expect(done.status).toBe("failed");
    expect(done.error).toContain("max_turns");
  });
});

describeWithRedis("job events in Redis (REDIS_URL)", () => {
  it("keeps the log in Redis with the job's TTL, readable and resumable like the file log", async () => {
    const prefix = `events-test-${crypto.randomUUID().slice(0, 8)}`;
    const o = await start({ REDIS_URL, REDIS_KEY_PREFIX: prefix, FAKE_CLAUDE_SCENARIO: "thinking-tool-final", SERVICE_JOB_TTL: "600" });
    const job = await o.submit({ task: "Find the failing test in Redis" });
    const all = (await readJobEvents(`${o.url}/jobs/${job.id}/events`, AUTH)).events;
    checkToolJob(all);
    expect((await readJobEvents(`${o.url}/jobs/${job.id}/events`, AUTH, { lastEventId: 6 })).events).toEqual(all.slice(6));
    const redis = createClient({ url: REDIS_URL });
    await redis.connect();
    try {
      const key = `${prefix}:job-events:${job.id}`;
      expect(await redis.lLen(key)).toBe(all.length);
      const ttl = await redis.ttl(key);
      expect(ttl).toBeGreaterThan(500);
      expect(ttl).toBeLessThanOrEqual(600);
      await redis.del(key);
    } finally {
      await redis.close();
    }
  });
});

describe("MCP get_job while a job runs", () => {
  it("shows the last events and the totals so far; run_task takes a budget", async () => {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const o = await start({ FAKE_CLAUDE_SCENARIO: "thinking-tool-final", FAKE_CLAUDE_HANG: "1" });
    const client = new Client({ name: "events-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${o.url}/mcp`), { requestInit: { headers: AUTH } }));
    try {
      const run = (await client.callTool({ name: "run_task", arguments: { task: "Watch me", max_budget_usd: 3 } })) as unknown as {
        structuredContent: { id: string; max_budget_usd: number };
      };
      expect(run.structuredContent.max_budget_usd).toBe(3);
      const id = run.structuredContent.id;
      let got:
        | { status: string; num_turns: number | null; usage: Record<string, number> | null; events: Array<{ id: number; type: string; name?: string }> }
        | undefined;
      await until(
        async () => {
          got = ((await client.callTool({ name: "get_job", arguments: { job_id: id, events: 5 } })) as unknown as { structuredContent: typeof got })
            .structuredContent;
          return got!.events.some((e) => e.type === "tool_result") && got!.num_turns === 2;
        },
        { ms: 15_000, every: 50, what: () => `the tool result and turn 2 in get_job: ${JSON.stringify(got)}` },
      );
      expect(got!.status).toBe("running");
      expect(got!.events.length).toBeLessThanOrEqual(5);
      expect(got!.events.map((e) => e.type)).toContain("tool_result");
      expect(got!.events.map((e) => e.id)).toEqual(got!.events.map((_, i) => got!.events[0]!.id + i));
      expect(got!.usage).toMatchObject({ cache_read_input_tokens: 36000, input_tokens: 24 });
      await o.call(`/jobs/${id}`, { method: "DELETE" });
    } finally {
      await client.close();
    }
  });
});
