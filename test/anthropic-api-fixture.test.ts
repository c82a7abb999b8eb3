// The fixture Anthropic Messages API: its wire format, and the real Claude Code CLI running
// scripted tools against it (the ground the real-CLI suites stand on).
import { afterAll, describe, expect, it } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createParser } from "eventsource-parser";
import { type AnthropicApi, startAnthropicApi } from "./fixtures/anthropic-api";
import { tempDir } from "./support/main-process";
import { REAL_CLAUDE_VERSION, realClaude } from "./support/real-claude";

const apis: AnthropicApi[] = [];
afterAll(() => {
  for (const a of apis) a.stop();
});
const start = async (...args: Parameters<typeof startAnthropicApi>) => {
  const api = await startAnthropicApi(...args);
  apis.push(api);
  return api;
};

const post = (api: AnthropicApi, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${api.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01", ...headers },
    body: JSON.stringify(body),
  });

async function events(res: Response): Promise<Array<{ event: string; data: any }>> {
  const out: Array<{ event: string; data: any }> = [];
  const parser = createParser({ onEvent: (e) => out.push({ event: e.event ?? "message", data: JSON.parse(e.data) }) });
  parser.feed(await res.text());
  return out;
}

const tools = [{ name: "Write", input_schema: { type: "object" } }];

describe("fixture Anthropic API", () => {
  it("streams thinking, text and a tool call as the Messages API does", async () => {
    const api = await start({
      script: [
        {
          content: [
            { type: "thinking", thinking: "Plan: write the file." },
            { type: "text", text: "Writing." },
            { type: "tool_use", name: "Write", input: { file_path: "/x", content: "y" } },
          ],
          usage: { cache_read_input_tokens: 5 },
        },
      ],
    });
    const res = await post(api, { model: "claude-sonnet-4-5", max_tokens: 100, stream: true, tools, messages: [{ role: "user", content: "go" }] });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const evs = await events(res);
    for (const e of evs) expect(e.data.type).toBe(e.event);
    expect(evs[0]!.data.message).toMatchObject({ type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], stop_reason: null });
    const starts = evs.filter((e) => e.event === "content_block_start").map((e) => e.data.content_block.type);
    expect(starts).toEqual(["thinking", "text", "tool_use"]);
    const deltas = new Set(evs.filter((e) => e.event === "content_block_delta").map((e) => e.data.delta.type));
    expect([...deltas].sort()).toEqual(["input_json_delta", "signature_delta", "text_delta", "thinking_delta"]);
    const json = evs
      .filter((e) => e.data.delta?.type === "input_json_delta")
      .map((e) => e.data.delta.partial_json)
      .join("");
    expect(JSON.parse(json)).toEqual({ file_path: "/x", content: "y" });
    const delta = evs.find((e) => e.event === "message_delta")!.data;
    expect(delta.delta.stop_reason).toBe("tool_use");
    expect(delta.usage.cache_read_input_tokens).toBe(5);
    expect(evs.at(-1)!.event).toBe("message_stop");
    expect(api.requests[0]!.body.messages[0].content).toBe("go");
  });

  it("answers stream:false with one JSON message, and a side call without tools with the default", async () => {
    const api = await start({ script: [{ content: [{ type: "text", text: "scripted" }] }] });
    const side: any = await (await post(api, { model: "m", max_tokens: 10, messages: [{ role: "user", content: "title?" }] })).json();
    expect(side).toMatchObject({ type: "message", content: [{ type: "text", text: "Done." }], stop_reason: "end_turn" });
    const main: any = await (await post(api, { model: "m", max_tokens: 10, tools, messages: [{ role: "user", content: "hi" }] })).json();
    expect(main.content).toEqual([{ type: "text", text: "scripted" }]);
    expect(api.scriptedRequests()).toHaveLength(1);
  });

  it("answers errors with the API's body shape and request-id", async () => {
    const api = await start({
      apiKey: "good",
      script: [
        { error: 529, times: 2 },
        { error: 429, retryAfter: 3 },
      ],
    });
    const refused = await post(api, { model: "m", max_tokens: 1, messages: [] });
    expect(refused.status).toBe(401);
    const body: any = await refused.json();
    expect(body).toMatchObject({ type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } });
    expect(refused.headers.get("request-id")).toBe(body.request_id);
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      const r = await post(api, { model: "m", max_tokens: 1, tools, messages: [] }, { "x-api-key": "good" });
      statuses.push([r.status, ((await r.json()) as any).error.type, r.headers.get("retry-after")]);
    }
    expect(statuses).toEqual([
      [529, "overloaded_error", null],
      [529, "overloaded_error", null],
      [429, "rate_limit_error", "3"],
    ]);
  });

  it("cuts a stream mid-block (the connection dropped, no message_stop), and plays a sub-agent's requests their own script", async () => {
    const api = await start({
      script: [{ content: [{ type: "text", text: "one two three four five six" }], cut: true }, { content: [{ type: "text", text: "main" }] }],
      subAgentScript: [{ content: [{ type: "text", text: "sub" }] }],
    });
    const body = { model: "claude-sonnet-4-5", max_tokens: 100, stream: true, tools, messages: [{ role: "user", content: "go" }] };
    const cut = await post(api, body);
    let text = "";
    const reader = cut.body!.getReader();
    const decoder = new TextDecoder();
    const failed = await (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return false;
          text += decoder.decode(value, { stream: true });
        }
      } catch {
        return true;
      }
    })();
    expect(failed).toBe(true);
    expect(text).toContain('"type":"text_delta"');
    expect(text).not.toContain("content_block_stop");
    expect(text).not.toContain("message_stop");
    expect(text).not.toContain("six");
    // A sub-agent says so in its system prompt (the billing line, as Claude Code 2.1.33x sends it).
    const sub = await post(api, {
      ...body,
      stream: false,
      system: [{ type: "text", text: "x-anthropic-billing-header: cc_version=2.1.332; cc_is_subagent=true;" }],
    });
    expect(((await sub.json()) as { content: Array<{ text: string }> }).content[0]!.text).toBe("sub");
    const main = await post(api, { ...body, stream: false });
    expect(((await main.json()) as { content: Array<{ text: string }> }).content[0]!.text).toBe("main");
  });

  it("serves count_tokens and records every request", async () => {
    const api = await start();
    const r = await fetch(`${api.url}/v1/messages/count_tokens`, {
      method: "POST",
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hello" }] }),
    });
    expect(((await r.json()) as any).input_tokens).toBeGreaterThan(0);
    expect(api.requests.map((q) => q.path)).toEqual(["/v1/messages/count_tokens"]);
  });
});

describe(`real Claude Code CLI ${REAL_CLAUDE_VERSION} against the fixture`, () => {
  it("runs a scripted Write, then ends with the scripted answer", async () => {
    const dir = tempDir("real-claude-cwd");
    const target = join(dir, "hello.txt");
    const api = await start({
      script: [
        { content: [{ type: "tool_use", name: "Write", input: { file_path: target, content: "hi there\n" } }] },
        { content: [{ type: "text", text: "Wrote hello.txt." }] },
      ],
    });
    const claude = realClaude({ baseUrl: api.url });
    const proc = Bun.spawn([claude.binary, "-p", "write hello", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions"], {
      cwd: dir,
      env: claude.env,
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    expect(readFileSync(target, "utf8")).toBe("hi there\n");
    const result = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .find((l) => l.type === "result");
    expect(result).toMatchObject({ subtype: "success", is_error: false, result: "Wrote hello.txt." });
    // The second request carries the tool result back to the model.
    const second = api.scriptedRequests()[1]!.body;
    const last = second.messages.at(-1);
    expect(last.role).toBe("user");
    expect(last.content.some((c: any) => c.type === "tool_result")).toBe(true);
    expect(api.requests[0]!.headers["user-agent"]).toContain(`claude-cli/${REAL_CLAUDE_VERSION}`);
    expect(existsSync(join(claude.home, ".claude"))).toBe(true);
  }, 60_000);
});
