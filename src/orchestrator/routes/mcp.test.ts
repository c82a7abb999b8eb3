// The MCP server at /mcp with the SDK's own clients, over Streamable HTTP and over HTTP+SSE
// (at /mcp/sse and at /mcp itself), with the in-test executor.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { AUTH, startTestServer, type TestServer } from "../../../test/support/orchestrator-routes";
import { until } from "../../../test/support/until";
import type { Job } from "../jobs/schema";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ SERVICE_MAX_PARALLEL_JOBS: "1" });
});
afterAll(() => s.close());

const transports: Record<string, (url: string, headers?: Record<string, string>) => Transport> = {
  "Streamable HTTP at /mcp": (url, headers = AUTH) => new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }),
  "HTTP+SSE at /mcp/sse": (url, headers = AUTH) => new SSEClientTransport(new URL(`${url}/mcp/sse`), { requestInit: { headers } }),
  "HTTP+SSE at /mcp": (url, headers = AUTH) => new SSEClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }),
};

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

async function connect(make: (url: string) => Transport): Promise<Client> {
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(make(s.url));
  open.push(client);
  return client;
}

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown> };
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as ToolResult;
const textOf = (r: ToolResult) => r.content.map((c) => c.text ?? "").join("");

for (const [name, make] of Object.entries(transports)) {
  describe(`MCP over ${name}`, () => {
    it("lists the five tools", async () => {
      const client = await connect(make);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["cancel_job", "get_job", "list_jobs", "list_profiles", "run_task"]);
      const run = tools.find((t) => t.name === "run_task")!;
      expect(Object.keys(run.inputSchema.properties ?? {}).sort()).toEqual(["base_ref", "max_budget_usd", "profile", "repo_url", "session_id", "task", "wait"]);
      expect(run.inputSchema.required).toEqual(["task"]);
    });

    it("run_task queues a job, get_job and list_jobs show it, cancel_job cancels it", async () => {
      const client = await connect(make);
      const submitted = await call(client, "run_task", { task: `mcp ${name}`, repo_url: "https://github.com/acme/widgets.git", base_ref: "main" });
      expect(submitted.isError).toBeFalsy();
      const job = submitted.structuredContent as unknown as Job;
      expect(job).toMatchObject({ status: "queued", task: `mcp ${name}`, repo_url: "https://github.com/acme/widgets.git", base_ref: "main" });
      expect(JSON.parse(textOf(submitted)).id).toBe(job.id);
      await until(() => s.h.executor.isRunning(job.id));

      const got = await call(client, "get_job", { job_id: job.id });
      expect((got.structuredContent as unknown as Job).status).toBe("running");

      const listed = await call(client, "list_jobs", { limit: 5, status: "running" });
      expect((listed.structuredContent as { jobs: Job[] }).jobs.map((j) => j.id)).toEqual([job.id]);

      const cancelled = await call(client, "cancel_job", { job_id: job.id });
      expect((cancelled.structuredContent as unknown as Job).status).toBe("cancelled");
      expect(s.h.executor.requests.get(job.id)!.signal.aborted).toBe(true);

      const again = await call(client, "cancel_job", { job_id: job.id });
      expect(again.isError).toBe(true);
      expect(textOf(again)).toContain("job_finished");
      await until(() => s.h.service.stats().running === 0);
    });

    it("run_task with wait: true answers with the finished job", async () => {
      const client = await connect(make);
      const answer = call(client, "run_task", { task: "wait for me", wait: true });
      await until(() => s.h.executor.active === 1);
      const id = s.h.executor.started.at(-1)!;
      s.h.executor.finish(id);
      const result = await answer;
      expect(result.structuredContent).toMatchObject({ id, status: "succeeded", output: "done" });
    });

    it("list_profiles lists the profiles", async () => {
      const client = await connect(make);
      const result = await call(client, "list_profiles");
      expect((result.structuredContent as { profiles: Array<{ name: string }> }).profiles.map((p) => p.name)).toEqual(["code", "review"]);
    });

    it("reports bad input and unknown jobs as tool errors", async () => {
      const client = await connect(make);
      const unknown = await call(client, "get_job", { job_id: "0194a3b2-6c1e-7f00-8a3b-1c2d3e4f5a6b" });
      expect(unknown.isError).toBe(true);
      expect(textOf(unknown)).toContain("job_not_found");
      const profile = await call(client, "run_task", { task: "x", profile: "nope" });
      expect(profile.isError).toBe(true);
      expect(textOf(profile)).toContain("unknown_profile");
      const empty = await call(client, "run_task", { task: "" }).catch((err: Error) => ({ isError: true, content: [{ type: "text", text: err.message }] }));
      expect(empty.isError).toBe(true);
      expect(textOf(empty)).toContain("task");
      const url = await call(client, "run_task", { task: "x", repo_url: "ftp://nope" }).catch((err: Error) => ({
        isError: true,
        content: [{ type: "text", text: err.message }],
      }));
      expect(url.isError).toBe(true);
      expect(textOf(url)).toContain("repo_url");
    });

    it("refuses a client without the API key", async () => {
      const client = new Client({ name: "test", version: "1.0.0" });
      await expect(client.connect(make(s.url, { authorization: "Bearer wrong" }))).rejects.toThrow();
    });
  });
}

describe("MCP HTTP+SSE sessions", () => {
  it("answers 404 session_not_found for a message to an unknown session", async () => {
    const res = await s.call("/mcp/messages?sessionId=nope", { method: "POST", json: { jsonrpc: "2.0", method: "ping", id: 1 } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("session_not_found");
  });

  it("keeps one session per open stream and ends it when the client closes", async () => {
    expect(s.mcpSessions.size).toBe(0);
    const client = await connect(transports["HTTP+SSE at /mcp/sse"]!);
    await client.listTools();
    expect(s.mcpSessions.size).toBe(1);
    await client.close();
    open.splice(open.indexOf(client), 1);
    await until(() => s.mcpSessions.size === 0);
  });

  it("opens no SSE session for Streamable HTTP clients (stateless)", async () => {
    const client = await connect(transports["Streamable HTTP at /mcp"]!);
    await client.listTools();
    expect(s.mcpSessions.size).toBe(0);
  });
});
