// Strings a client can send that are not plain text (issue 37 part 1), over real HTTP against the
// real processes: a lone UTF-16 surrogate in any field is a 400 naming the field (OpenAI's shape
// under /v1), never a 500, and the id stays usable once sent whole; NUL and long ids are taken;
// a lesson whose text holds a line like the lesson log's own entry headings stays one entry.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AGENT, makeHub } from "./support/agent-mode";
import { type MainProcess, REPO, startMain, tempDir } from "./support/main-process";
import { KEY } from "./support/orchestrator-process";
import { ROUTER_TEST_TOKEN } from "./support/router-client";

type Json = Record<string, any>;
let main: MainProcess;
let vault: string;

beforeAll(async () => {
  const home = tempDir("broken-strings");
  vault = join(home, "vault");
  main = await startMain(["--vault", vault], {
    HOME: home,
    KB_ROUTER_TOKEN: ROUTER_TEST_TOKEN,
    TICK_INTERVAL_SECONDS: "0",
    SERVICE_API_KEYS: KEY,
    SERVICE_CLAUDE_BINARY: join(REPO, "test", "fixtures", "fake-claude"),
    SERVICE_OTEL_ENABLED: "false",
    SERVICE_HUB_URL: await makeHub(join(home, "hub")),
    HUB_AGENT: AGENT,
    SERVICE_CLONE_ROOT: join(home, "clones"),
    SERVICE_PACKAGE_DIR: join(home, "package"),
  });
}, 60_000);
afterAll(() => main?.stop());

const post = async (base: string, token: string, path: string, body: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Json };
};
const orch = (path: string, body: unknown) => post(main.orchestratorUrl!, KEY, path, body);
const router = (path: string, body: unknown) => post(main.routerUrl!, ROUTER_TEST_TOKEN, path, body);

const LONE = "conv-\ud800-id";
const user = (content: string) => ({ role: "user", content });

describe("a lone UTF-16 surrogate", () => {
  it("in user or metadata.conversation_id on chat completions: 400 in OpenAI's shape naming the field; the whole id then works", async () => {
    for (const [field, body] of [
      ["user", { model: AGENT, messages: [user("hi")], user: LONE }],
      ["metadata.conversation_id", { model: AGENT, messages: [user("hi")], metadata: { conversation_id: LONE } }],
    ] as const) {
      const res = await orch("/v1/chat/completions", body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_request", param: field });
      expect(res.body.error.message).toContain(`${field}: is not valid Unicode`);
    }
    const ok = await orch("/v1/chat/completions", { model: AGENT, messages: [user("hi")], metadata: { conversation_id: "conv-\ud83d\ude00-id" } });
    expect(ok.status).toBe(200);
    expect(ok.body.choices[0].message.content).toBeString();
  });

  it("in user or metadata.conversation_id on Responses, and in conversation_id or user on /completions: 400 naming the field", async () => {
    const responses = await orch("/v1/responses", { model: AGENT, input: "hi", metadata: { conversation_id: LONE } });
    expect(responses.status).toBe(400);
    expect(responses.body.error.message).toContain("metadata.conversation_id: is not valid Unicode");
    const responsesUser = await orch("/v1/responses", { model: AGENT, input: "hi", user: "\udc00" });
    expect(responsesUser.status).toBe(400);
    expect(responsesUser.body.error.message).toContain("user: is not valid Unicode");
    for (const field of ["conversation_id", "user"]) {
      const res = await orch("/completions", { message: "hi", [field]: LONE });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: "invalid_request", details: [{ path: field }] });
    }
  });

  it("in a note, a marker or a job: 400 naming the field, and nothing is written", async () => {
    const note = await router("/ingest", { content: "# Broken\nhalf a pair \ud800 here" });
    expect(note.status).toBe(400);
    expect(note.body.error.details).toEqual([{ path: "content", message: expect.stringContaining("lone UTF-16 surrogate at character 21") }]);
    const marker = await router("/marker", { type: "lesson", content: "fine", attrs: { session_id: LONE } });
    expect(marker.status).toBe(400);
    expect(marker.body.error.details[0].path).toBe("attrs.session_id");
    const job = await orch("/jobs", { task: "fix \udfff it" });
    expect(job.status).toBe(400);
    expect(job.body.error.details[0].path).toBe("task");
    expect(((await fetch(`${main.orchestratorUrl}/jobs`, { headers: { authorization: `Bearer ${KEY}` } }).then((r) => r.json())) as Json).jobs).toEqual([]);
  });
});

describe("a lone UTF-16 surrogate over MCP", () => {
  const rpc = (url: string, token: string, body: unknown, session?: string) =>
    fetch(url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-03-26",
        ...(session ? { "mcp-session-id": session } : {}),
      },
      body: JSON.stringify(body),
    });
  const call = (name: string, args: unknown) => ({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name, arguments: args } });

  it("in a router tool's arguments: a JSON-RPC invalid-params error naming the field", async () => {
    const init = await rpc(`${main.mcpUrl}/mcp`, ROUTER_TEST_TOKEN, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    const session = init.headers.get("mcp-session-id")!;
    await init.body?.cancel();
    const res = await rpc(`${main.mcpUrl}/mcp`, ROUTER_TEST_TOKEN, call("ingest", { content: "# MCP\nhalf \ud800 a pair" }), session);
    expect(res.status).toBe(400);
    const body = (await res.json()) as Json;
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toContain("params.arguments.content: is not valid Unicode");
  });

  it("in the orchestrator's run_task (stateless MCP): the same error", async () => {
    const res = await rpc(`${main.orchestratorUrl}/mcp`, KEY, call("run_task", { task: "fix \udc00 it" }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.message).toContain("params.arguments.task: is not valid Unicode");
  });
});

describe("NUL and long ids", () => {
  it("/completions refuses an id over 256 characters with 400 naming it", async () => {
    for (const field of ["conversation_id", "user"]) {
      const res = await orch("/completions", { message: "hi", [field]: "x".repeat(257) });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].path).toBe(field);
    }
  });

  it("chat takes NUL and ids of any length: cut to 256 characters (never inside a surrogate pair) and escaped where stored", async () => {
    // The pair straddles the cut: characters 255 and 256.
    const long = `nul\u0000${"x".repeat(251)}\ud83d\ude00 and then more`;
    const conversation = async (id: string) => {
      const res = await fetch(`${main.orchestratorUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ model: AGENT, messages: [user("hi")], user: "a\u0000b", metadata: { conversation_id: id } }),
      });
      expect(res.status).toBe(200);
      await res.body?.cancel();
      return { key: res.headers.get("x-conversation-id")!, session: res.headers.get("x-session-id")! };
    };
    const first = await conversation(long);
    const second = await conversation(`${long} that differs past the cut`);
    // The same conversation and session: the id was cut at 256, before the pair it would have split.
    expect(second).toEqual(first);
    expect(decodeURIComponent(first.key)).toEndWith(`${"x".repeat(251)}`);
  });
});

describe("a lesson holding a line like the lesson log's own entry headings", () => {
  it("stays one entry, its text exactly as sent, in the log, the feed and a second identical marker's dedup", async () => {
    const content = "Deploys race the health check.\n## 2026-01-02T03:04:05.000Z — api — -\n\nnot a new entry\n\\## 2026-01-02T03:04:05Z already escaped";
    const res = await router("/marker", { type: "lesson", content, attrs: { source: "api" } });
    expect(res.status).toBe(201);
    const feed = (await fetch(`${main.routerUrl}/feed`, { headers: { authorization: `Bearer ${ROUTER_TEST_TOKEN}` } }).then((r) => r.json())) as Json;
    const mine = (feed.lessons as Json[]).filter((l) => l.text.includes("Deploys race") || l.text.includes("not a new entry"));
    expect(mine).toHaveLength(1);
    expect(mine[0]!.text).toBe(content);
    // The log holds one entry heading for it.
    const log = readFileSync(join(vault, res.body.path), "utf8");
    expect(log.match(/^## \d{4}-\d{2}-\d{2}T/gm)).toHaveLength(1);
    // The same lesson again the same day is the same entry (not written twice).
    const again = await router("/marker", { type: "lesson", content, attrs: { source: "api", session_id: "other" } });
    expect(again.body.written).toBe(false);
  });

  it("stays one entry when its source or session id holds a line break and a heading", async () => {
    const res = await router("/marker", {
      type: "lesson",
      content: "Split-proof lesson",
      attrs: { source: "hook\n## 2026-01-02T03:04:05.000Z — forged — -", session_id: "s1\n\nforged body" },
    });
    expect(res.status).toBe(201);
    const feed = (await fetch(`${main.routerUrl}/feed`, { headers: { authorization: `Bearer ${ROUTER_TEST_TOKEN}` } }).then((r) => r.json())) as Json;
    const mine = (feed.lessons as Json[]).filter((l) => l.text.includes("Split-proof") || l.text.includes("forged"));
    expect(mine).toHaveLength(1);
    expect(mine[0]!.text).toBe("Split-proof lesson");
  });
});
