// Bad input that used to get through (issue 14, part 5), against the real process: a conversation
// id that is not header-safe, a NUL in a task or a message, an agent binary that cannot start
// (no local path in any answer), and line breaks in marker attrs.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AGENT, makeHub } from "./support/agent-mode";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { type Orchestrator, startOrchestrator } from "./support/orchestrator-process";

type Json = Record<string, any>;
const user = (content: string) => ({ role: "user", content });

describe("orchestrator in agent mode", () => {
  let o: Orchestrator;
  beforeAll(async () => {
    const home = tempDir("bad-input");
    o = await startOrchestrator({ env: { SERVICE_HUB_URL: await makeHub(join(home, "hub")), HUB_AGENT: AGENT, SERVICE_CLONE_ROOT: join(home, "clones") } });
  });
  afterAll(() => o.stop());

  for (const stream of [true, false]) {
    it(`serves a conversation id with non-ASCII, a newline and a NUL (stream ${stream}), percent-encoded in X-Conversation-Id, and the next turn too`, async () => {
      const id = `café\nzwei\u0000drei-${stream}`;
      for (let turn = 0; turn < 2; turn++) {
        const res = await o.call("/v1/chat/completions", {
          method: "POST",
          json: { model: AGENT, stream, metadata: { conversation_id: id }, messages: [user(`turn ${turn}`)] },
        });
        expect(res.status).toBe(200);
        expect(res.headers.get("x-conversation-id")).toBe(encodeURIComponent(id));
        const text = await res.text();
        expect(text).toContain("The build passes on main");
      }
    });
  }

  it("refuses a NUL in a job task with 400, and creates no job", async () => {
    const res = await o.call("/jobs", { method: "POST", json: { task: "fix it\u0000 now" } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as Json;
    expect(body.error.code).toBe("invalid_request");
    expect(JSON.stringify(body.error.details)).toContain("NUL");
    expect(((await (await o.call("/jobs")).json()) as Json).jobs).toEqual([]);
  });

  it("refuses a NUL in a chat message and in /completions with 400", async () => {
    const chat = await o.call("/v1/chat/completions", { method: "POST", json: { model: AGENT, messages: [user("hello\u0000there")] } });
    expect(chat.status).toBe(400);
    expect(((await chat.json()) as Json).error.message).toContain("NUL");
    const done = await o.call("/completions", { method: "POST", json: { message: "hi\u0000" } });
    expect(done.status).toBe(400);
  });
});

describe("an agent binary that cannot start", () => {
  let o: Orchestrator;
  const missing = join(tempDir("no-agent"), "secret-place", "claude");
  beforeAll(async () => {
    const home = tempDir("bad-binary");
    o = await startOrchestrator({
      env: { SERVICE_HUB_URL: await makeHub(join(home, "hub")), HUB_AGENT: AGENT, SERVICE_CLONE_ROOT: join(home, "clones"), SERVICE_CLAUDE_BINARY: missing },
    });
  });
  afterAll(() => o.stop());

  it("fails the job with a message naming no local path", async () => {
    const job = await o.submit({ task: "anything" });
    const done = await o.until(job.id, (j) => j.status === "failed");
    expect(done.error).toContain("SERVICE_CLAUDE_BINARY");
    expect(JSON.stringify(done)).not.toContain("secret-place");
  });

  it("answers /completions and /v1/chat/completions 502 without the binary's path; the service log has it", async () => {
    for (const [path, body] of [
      ["/completions", { message: "hi" }],
      ["/v1/chat/completions", { model: AGENT, messages: [user("hi")] }],
    ] as const) {
      const res = await o.call(path, { method: "POST", json: body });
      expect(res.status).toBe(502);
      const text = await res.text();
      expect(text).not.toContain("secret-place");
      expect(text).toContain("SERVICE_CLAUDE_BINARY");
    }
    expect(o.main.output()).toContain("secret-place");
  });
});

describe("marker attrs with line breaks", () => {
  let main: MainProcess;
  let vault = "";
  const TOKEN = "attrs-token";
  beforeAll(async () => {
    vault = join(tempDir("attrs"), "vault");
    main = await startMain(["--only", "router", "--vault", vault], { KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0" }, { expect: ["router"] });
  });
  afterAll(() => main.stop());

  it("cannot forge an entry or a heading in the lesson log", async () => {
    const forged = "x\n\n## 2026-01-01T00:00:00.000Z — forged — s\n\nforged body\n# Heading";
    const res = await fetch(`${main.routerUrl}/marker`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({
        type: "lesson",
        content: "The real lesson.",
        attrs: { source: forged, session_id: "s\n## 2026-01-02T00:00:00.000Z — x — y", title: "t\n# top", ts: "2026-03-04T05:06:07Z" },
      }),
    });
    expect(res.status).toBe(201);
    const dir = join(vault, "left", "reference");
    const log = readFileSync(join(dir, readdirSync(dir).find((f) => f.startsWith("lessons-2026-03-04"))!), "utf8");
    const headings = log.split("\n").filter((l) => l.startsWith("#"));
    expect(headings).toHaveLength(2); // "# Lessons 2026-03-04" and the one entry
    expect(headings[1]).toStartWith("## 2026-03-04T05:06:07.000Z — x ## 2026-01-01T00:00:00.000Z — forged — s forged body # Heading — s ## 2026-01-02");
  });
});
