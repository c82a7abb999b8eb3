// The client guides of docs/chat-clients.md are true: each snippet is a file under
// examples/clients/ that the page holds verbatim, and each one works against the live service
// (the fixture agent answering): the SDK snippets run as they are; the Open WebUI and LibreChat
// configurations are read and the requests those clients send with them are replayed.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { AGENT, type AgentModeServer, flagOf, KEY, makeHub, recordedStarts, startAgentModeServer, tempHome } from "./support/agent-mode";
import { REPO } from "./support/main-process";

const GUIDE = readFileSync(join(REPO, "docs", "chat-clients.md"), "utf8");
const SNIPPETS = ["open-webui.env", "librechat.yaml", "openai-chat.ts", "openai-responses.ts", "ai-sdk.ts", "langchain.ts"].map((f) => `examples/clients/${f}`);
const ANSWER = "Hello! The build passes on main.";

let t: Awaited<ReturnType<typeof tempHome>>;
let s: AgentModeServer;
const agentEnv: Record<string, string | undefined> = {};
let record = "";

beforeAll(async () => {
  t = await tempHome("chat-guides-");
  s = await startAgentModeServer({ home: t.home, hubUrl: await makeHub(join(t.home, "hub")), kv: "file", agentEnv });
});

afterAll(async () => {
  await s.close();
  await t.cleanup();
});

beforeEach(() => {
  for (const k of Object.keys(agentEnv)) delete agentEnv[k];
  record = join(t.home, `record-${crypto.randomUUID()}.jsonl`);
  Object.assign(agentEnv, { PATH: process.env.PATH, FAKE_CLAUDE_RECORD: record, FAKE_CLAUDE_SCENARIO: "text-only" });
});

/** The fenced block between `<!-- snippet: path -->` and `<!-- /snippet -->` in docs/chat-clients.md. */
function guideSnippet(path: string): string | undefined {
  const start = GUIDE.indexOf(`<!-- snippet: ${path} -->\n`);
  if (start < 0) return undefined;
  const body = GUIDE.slice(start).split("\n").slice(2);
  const end = body.indexOf("<!-- /snippet -->");
  return `${body.slice(0, end - 1).join("\n")}\n`;
}

async function runSnippet(path: string): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn(["bun", join(REPO, path)], {
    cwd: REPO,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, SERVICE_URL: s.url, SERVICE_API_KEY: KEY },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out, err };
}

describe("docs/chat-clients.md client guides", () => {
  for (const path of SNIPPETS) {
    it(`holds ${path} verbatim`, () => {
      expect(guideSnippet(path)).toBe(readFileSync(join(REPO, path), "utf8"));
    });
  }
});

describe("the SDK snippets run as they are", () => {
  it("OpenAI SDK, chat completions: streams the answer with its cached tokens; the second turn resumes the session", async () => {
    const r = await runSnippet("examples/clients/openai-chat.ts");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toBe(`${ANSWER}\n[38066 prompt tokens, 36000 cached]\n${ANSWER}\n`);
    const starts = await recordedStarts(record);
    expect(flagOf(starts[1]!.argv, "--resume")).toBe(flagOf(starts[0]!.argv, "--session-id"));
  });

  it("OpenAI SDK, Responses API: previous_response_id resumes the session", async () => {
    const r = await runSnippet("examples/clients/openai-responses.ts");
    expect(r.code).toBe(0);
    expect(r.out).toBe(`${ANSWER}\n[38066 input tokens, 36000 cached]\n${ANSWER}\n`);
    const starts = await recordedStarts(record);
    expect(flagOf(starts[1]!.argv, "--resume")).toBe(flagOf(starts[0]!.argv, "--session-id"));
    expect(starts[1]!.argv[1]).toBe("How do I fix it?");
  });

  it("Vercel AI SDK: the thread sent back resumes the session", async () => {
    const r = await runSnippet("examples/clients/ai-sdk.ts");
    expect(r.code).toBe(0);
    expect(r.out).toBe(`${ANSWER}\n[36000 cached input tokens]\n${ANSWER}\n`);
    const starts = await recordedStarts(record);
    expect(flagOf(starts[1]!.argv, "--resume")).toBe(flagOf(starts[0]!.argv, "--session-id"));
  });

  it("LangChain: the answer and one usage record with the cache reads", async () => {
    const r = await runSnippet("examples/clients/langchain.ts");
    expect(r.code).toBe(0);
    expect(r.out).toBe(`${ANSWER}\n[38066 input tokens, 36000 cached]\n`);
  });
});

/** KEY=VALUE lines of an env file. */
const envFile = (text: string) =>
  Object.fromEntries(
    text
      .split("\n")
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );

describe("the chat-client configurations, replayed", () => {
  it("Open WebUI: with header forwarding each chat is its own session, its title request stays out of it", async () => {
    const env = envFile(readFileSync(join(REPO, "examples/clients/open-webui.env"), "utf8"));
    expect(env.ENABLE_FORWARD_USER_INFO_HEADERS).toBe("true");
    const base = `${s.url}${new URL(env.OPENAI_API_BASE_URL!).pathname}`;
    // What Open WebUI's OpenAI connector sends with ENABLE_FORWARD_USER_INFO_HEADERS on.
    const send = (chatId: string, body: Record<string, unknown>) =>
      fetch(`${base}/chat/completions`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${KEY}`,
          "content-type": "application/json",
          "X-OpenWebUI-User-Name": "Ada",
          "X-OpenWebUI-User-Id": "8c3e3f0a-user",
          "X-OpenWebUI-User-Email": "ada@example.com",
          "X-OpenWebUI-User-Role": "user",
          "X-OpenWebUI-Chat-Id": chatId,
        },
        body: JSON.stringify({ model: AGENT, ...body }),
      });
    const [chatA, chatB] = [crypto.randomUUID(), crypto.randomUUID()];
    const a1 = await send(chatA, { stream: true, messages: [{ role: "user", content: "hi" }] });
    const b1 = await send(chatB, { stream: true, messages: [{ role: "user", content: "hi" }] });
    await Promise.all([a1.text(), b1.text()]);
    expect(a1.headers.get("x-session-id")).not.toBe(b1.headers.get("x-session-id"));
    const title = await send(chatA, {
      stream: false,
      messages: [{ role: "user", content: "### Task:\nGenerate a concise title.\n<chat_history>\nUSER: hi\n</chat_history>" }],
    });
    expect(title.headers.get("x-client-task")).toBe("task");
    await title.text();
    const a2 = await send(chatA, {
      stream: true,
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: ANSWER },
        { role: "user", content: "more?" },
      ],
    });
    await a2.text();
    expect(a2.headers.get("x-session-id")).toBe(a1.headers.get("x-session-id"));
  });

  it("LibreChat: the endpoint's header templates give each conversation its own session", async () => {
    const config = parseYaml(readFileSync(join(REPO, "examples/clients/librechat.yaml"), "utf8"));
    const endpoint = config.endpoints.custom[0];
    expect(endpoint.titleConvo).toBe(false);
    expect(endpoint.models.default).toContain(AGENT);
    const base = `${s.url}${new URL(endpoint.baseURL).pathname}`;
    // LibreChat resolves the placeholders from the request body and the signed-in user.
    const send = (conversationId: string, content: string) => {
      const headers = Object.fromEntries(
        Object.entries(endpoint.headers as Record<string, string>).map(([k, v]) => [
          k,
          v.replace("{{LIBRECHAT_BODY_CONVERSATIONID}}", conversationId).replace("{{LIBRECHAT_USER_ID}}", "65f0c0ffee0123456789abcd"),
        ]),
      );
      const apiKey = String(endpoint.apiKey).replace("${BRAIN_STACK_API_KEY}", KEY);
      return fetch(`${base}/chat/completions`, {
        method: "POST",
        headers: { ...headers, authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model: AGENT, stream: true, messages: [{ role: "user", content }] }),
      });
    };
    const [c1, c2] = [crypto.randomUUID(), crypto.randomUUID()];
    const first = await send(c1, "hi");
    const other = await send(c2, "hi");
    await Promise.all([first.text(), other.text()]);
    const again = await send(c1, "and then?");
    await again.text();
    expect(first.headers.get("x-conversation-tier")).toBe("header");
    expect(other.headers.get("x-session-id")).not.toBe(first.headers.get("x-session-id"));
    expect(again.headers.get("x-session-id")).toBe(first.headers.get("x-session-id"));
  });
});
