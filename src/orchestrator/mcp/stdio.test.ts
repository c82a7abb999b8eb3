// MCP over stdio with the SDK's StdioClientTransport against a spawned process.
import { afterEach, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Job } from "../jobs/schema";

const FIXTURE = join(import.meta.dir, "../../../test/fixtures/mcp-stdio.ts");
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

async function connect(): Promise<{ client: Client; transport: StdioClientTransport }> {
  // LOG_LEVEL 3: info lines are logged, and must not reach stdout.
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [FIXTURE],
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "3" },
    stderr: "pipe",
  });
  client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

describe("serveMcpStdio", () => {
  it("serves the five tools over stdin/stdout", async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["cancel_job", "get_job", "list_jobs", "list_profiles", "run_task"]);
  });

  it("runs a task and answers get_job, list_jobs, cancel_job and list_profiles", async () => {
    const { client } = await connect();
    const run = (await client.callTool({ name: "run_task", arguments: { task: "over stdio", wait: true } })) as unknown as { structuredContent: Job };
    expect(run.structuredContent).toMatchObject({ task: "over stdio", status: "succeeded" });
    const id = run.structuredContent.id;
    const got = (await client.callTool({ name: "get_job", arguments: { job_id: id } })) as unknown as { structuredContent: Job };
    expect(got.structuredContent.id).toBe(id);
    const listed = (await client.callTool({ name: "list_jobs", arguments: {} })) as unknown as { structuredContent: { jobs: Job[] } };
    expect(listed.structuredContent.jobs.map((j) => j.id)).toEqual([id]);
    const cancel = (await client.callTool({ name: "cancel_job", arguments: { job_id: id } })) as unknown as {
      isError: boolean;
      content: Array<{ text: string }>;
    };
    expect(cancel.isError).toBe(true);
    expect(cancel.content[0]!.text).toContain("job_finished");
    const profiles = (await client.callTool({ name: "list_profiles", arguments: {} })) as unknown as { structuredContent: { profiles: unknown[] } };
    expect(profiles.structuredContent.profiles).toHaveLength(2);
  });
});
