// Watching the job list (GET /jobs/events, the console's live job list): the jobs as they
// are, `synced`, then each status change, through the real process and the fixture agent; on a
// second pod sharing Redis, the changes of a job the first pod took.
import { afterAll, describe, expect, it } from "bun:test";
import { createParser } from "eventsource-parser";
import { describeWithRedis, REDIS_URL } from "./support/kv";
import { AUTH, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { until } from "./support/until";

const running: Orchestrator[] = [];
const start = async (env: Record<string, string> = {}) => {
  const o = await startOrchestrator({ env, startTimeoutMs: 30_000 });
  running.push(o);
  return o;
};
afterAll(async () => {
  await Promise.all(running.splice(0).map((o) => o.stop("SIGKILL")));
});

interface Watch {
  status: number;
  contentType: string | null;
  events: Array<{ type: string; data: { id?: string; status?: string; count?: number } }>;
  close(): void;
}

/** Opens the watch and reads it in the background, as a client does (fetch + an SSE parser). */
async function watch(url: string, query = ""): Promise<Watch> {
  const abort = new AbortController();
  const res = await fetch(`${url}/jobs/events${query}`, { headers: { ...AUTH, accept: "text/event-stream" }, signal: abort.signal });
  const w: Watch = { status: res.status, contentType: res.headers.get("content-type"), events: [], close: () => abort.abort() };
  if (res.status !== 200) return w;
  const parser = createParser({ onEvent: (m) => w.events.push({ type: m.event ?? "message", data: JSON.parse(m.data) }) });
  const decoder = new TextDecoder();
  void (async () => {
    for await (const chunk of res.body!) parser.feed(decoder.decode(chunk, { stream: true }));
  })().catch(() => {});
  return w;
}

const statusesOf = (w: Watch, id: string) => w.events.filter((e) => e.type === "job" && e.data.id === id).map((e) => e.data.status);

describe("GET /jobs/events", () => {
  it("lists the jobs as they are, says synced, then sends each status change of a new job as it happens", async () => {
    const o = await start({ FAKE_CLAUDE_SCENARIO: "thinking-tool-final" });
    const before = await o.submit({ task: "A job that is there before the watch" });
    await o.until(before.id, (j) => j.status === "succeeded");
    const w = await watch(o.url);
    try {
      expect(w.status).toBe(200);
      expect(w.contentType).toContain("text/event-stream");
      await until(() => w.events.some((e) => e.type === "synced"));
      // The list up to `synced` (a change published while the watch opened may follow it: see watch.ts).
      const synced = w.events.findIndex((e) => e.type === "synced");
      expect(w.events.slice(0, synced + 1).map((e) => e.type)).toEqual(["job", "synced"]);
      expect(w.events[0]!.data).toMatchObject({ id: before.id, status: "succeeded" });
      expect(w.events[synced]!.data).toEqual({ count: 1 });

      const job = await o.submit({ task: "A job submitted while the list is watched" });
      await until(() => statusesOf(w, job.id).includes("succeeded"));
      expect(statusesOf(w, job.id)).toEqual(["queued", "running", "succeeded"]);
      // Only changes are sent: the job finished before the watch never comes back with another
      // status (at most its last change again, when it was published as the watch opened).
      expect(new Set(statusesOf(w, before.id))).toEqual(new Set(["succeeded"]));
    } finally {
      w.close();
    }
  });

  it("filters the changes by status, and answers bad input with 400 before any stream opens", async () => {
    const o = await start({ FAKE_CLAUDE_SCENARIO: "text-only" });
    const w = await watch(o.url, "?status=succeeded");
    try {
      await until(() => w.events.some((e) => e.type === "synced"));
      const job = await o.submit({ task: "Only its end is watched" });
      await until(() => statusesOf(w, job.id).length > 0);
      await o.until(job.id, (j) => j.status === "succeeded");
      expect(statusesOf(w, job.id)).toEqual(["succeeded"]);
    } finally {
      w.close();
    }
    const bad = await fetch(`${o.url}/jobs/events?status=sleeping`, { headers: AUTH });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    expect((await fetch(`${o.url}/jobs/events`)).status).toBe(401);
    // A job id is still a job id.
    expect((await fetch(`${o.url}/jobs/${crypto.randomUUID()}`, { headers: AUTH })).status).toBe(404);
  });
});

describeWithRedis("GET /jobs/events across pods (REDIS_URL)", () => {
  it("a watcher on one pod sees every status change of a job submitted to the other", async () => {
    const env = { REDIS_URL, REDIS_KEY_PREFIX: `watch-test-${crypto.randomUUID().slice(0, 8)}`, FAKE_CLAUDE_SCENARIO: "text-only" };
    const [a, b] = await Promise.all([start({ ...env, SERVICE_POD_NAME: "pod-a" }), start({ ...env, SERVICE_POD_NAME: "pod-b" })]);
    const w = await watch(b.url);
    try {
      await until(() => w.events.some((e) => e.type === "synced"));
      const job = await a.submit({ task: "Submitted to pod a, watched on pod b" });
      await until(() => statusesOf(w, job.id).includes("succeeded"), { ms: 20_000, what: "pod b to hear the job succeed" });
      expect(statusesOf(w, job.id)).toEqual(["queued", "running", "succeeded"]);
    } finally {
      w.close();
    }
  });
});
