// The MCP tools against the real process, with the SDK's own clients over each transport:
// Streamable HTTP (POST /mcp), HTTP+SSE at /mcp/sse, and HTTP+SSE at /mcp (an SSE-only client
// pointed at the one URL). The agent is the fixture CLI.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Job } from "../src/orchestrator/jobs/schema";
import { AUTH, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { until } from "./support/until";

const TRANSPORTS: Record<string, (url: string, headers: Record<string, string>) => Transport> = {
  "Streamable HTTP": (url, headers) => new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }),
  "HTTP+SSE at /mcp/sse": (url, headers) => new SSEClientTransport(new URL(`${url}/mcp/sse`), { requestInit: { headers } }),
  "HTTP+SSE at /mcp": (url, headers) => new SSEClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }),
};

let agent: Orchestrator;
let hanging: Orchestrator;
beforeAll(async () => {
  [agent, hanging] = await Promise.all([startOrchestrator(), startOrchestrator({ env: { FAKE_CLAUDE_HANG: "1" } })]);
});
afterAll(async () => {
  await Promise.all([agent.stop(), hanging.stop()]);
});

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: unknown };

for (const [name, transport] of Object.entries(TRANSPORTS)) {
  const connect = async (o: Orchestrator, headers: Record<string, string> = AUTH) => {
    const client = new Client({ name: "orchestrator-test", version: "1.0.0" });
    await client.connect(transport(o.url, headers));
    clients.push(client);
    return client;
  };
  const tool = async (client: Client, tool: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 30_000 })) as ToolResult;

  describe(`MCP over ${name}`, () => {
    it("lists run_task, get_job, list_jobs, cancel_job and list_profiles", async () => {
      const { tools } = await (await connect(agent)).listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["cancel_job", "get_job", "list_jobs", "list_profiles", "run_task"]);
    });

    it("run_task with wait: true runs the agent and answers with the finished job; get_job and list_jobs show it", async () => {
      const client = await connect(agent);
      const task = `Explain the repository (${name})`;
      const run = await tool(client, "run_task", { task, wait: true });
      expect(run.isError).toBeFalsy();
      const job = run.structuredContent as Job;
      expect(job).toMatchObject({ task, status: "succeeded", exit_code: 0, profile: "review" });
      expect(agent.agentLog().some((e) => e.event === "start" && e.argv?.includes(task))).toBe(true);

      const got = await tool(client, "get_job", { job_id: job.id });
      expect((got.structuredContent as Job).output).toBe(job.output);
      const listed = await tool(client, "list_jobs", { limit: 1000, status: "succeeded" });
      expect((listed.structuredContent as { jobs: Job[] }).jobs.map((j) => j.id)).toContain(job.id);
    });

    it("run_task answers at once; cancel_job stops the running agent", async () => {
      const client = await connect(hanging);
      const task = `Explain at length (${name})`;
      const run = await tool(client, "run_task", { task });
      const job = run.structuredContent as Job;
      expect(job.status).toBe("queued");
      await until(() => hanging.agentLog().some((e) => e.event === "start" && e.argv?.includes(task)));
      const cancel = await tool(client, "cancel_job", { job_id: job.id });
      expect((cancel.structuredContent as Job).status).toBe("cancelled");
      const after = await hanging.until(job.id, (j) => j.exit_code !== null);
      expect(after.status).toBe("cancelled");
      const again = await tool(client, "cancel_job", { job_id: job.id });
      expect(again.isError).toBe(true);
      expect(again.content[0]!.text).toContain("job_finished");
    });

    it("list_profiles lists the bundled profiles", async () => {
      const result = await tool(await connect(agent), "list_profiles");
      const body = result.structuredContent as { profiles: Array<{ name: string; model: string; max_turns: number; auto_pr: boolean }> };
      expect(body.profiles).toContainEqual(expect.objectContaining({ name: "code", model: "sonnet", max_turns: 80, auto_pr: true }));
      expect(body.profiles).toContainEqual(expect.objectContaining({ name: "review", model: "haiku", max_turns: 20, auto_pr: false }));
    });

    it("answers tool errors for an unknown job and bad input", async () => {
      const client = await connect(agent);
      const missing = await tool(client, "get_job", { job_id: "0194a3b2-6c1e-7f00-8a3b-1c2d3e4f5a6b" });
      expect(missing.isError).toBe(true);
      expect(missing.content[0]!.text).toContain("job_not_found");
      const profile = await tool(client, "run_task", { task: "x", profile: "nope" });
      expect(profile.isError).toBe(true);
      expect(profile.content[0]!.text).toContain("unknown_profile");
      // Arguments the schema refuses come back as a tool error or a protocol error, naming the field.
      const refused = (args: Record<string, unknown>) =>
        tool(client, "run_task", args).catch((err: Error) => ({ isError: true, content: [{ type: "text", text: err.message }] }) as ToolResult);
      const empty = await refused({ task: "" });
      expect(empty.isError).toBe(true);
      expect(empty.content[0]!.text).toContain("task");
      const url = await refused({ task: "Explain it", repo_url: "ftp://example.com/r.git" });
      expect(url.isError).toBe(true);
      expect(url.content[0]!.text).toContain("repo_url");
      // None of them left a job behind.
      const listed = await tool(client, "list_jobs", { limit: 1000 });
      expect((listed.structuredContent as { jobs: Job[] }).jobs.some((j) => j.task === "" || j.repo_url === "ftp://example.com/r.git")).toBe(false);
    });

    it("refuses a client without a valid API key", async () => {
      const client = new Client({ name: "orchestrator-test", version: "1.0.0" });
      await expect(client.connect(transport(agent.url, { authorization: "Bearer not-the-key" }))).rejects.toThrow();
    });
  });
}
