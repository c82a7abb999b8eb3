// MCP over stdin/stdout (SERVICE_TRANSPORT=stdio; `service-cli serve --transport stdio`): the
// same tools as /mcp, for clients that spawn the service themselves. stdout carries MCP and
// nothing else, so log lines move to stderr for as long as this runs.
import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { sendLogsToStderr } from "../../common/logger";
import { createMcpServer, type McpDeps } from "./server";

export interface StdioOptions {
  stdin?: Readable;
  stdout?: Writable;
}

/** Serves until the client closes stdin (or the transport fails); resolves then. */
export async function serveMcpStdio(deps: McpDeps, opts: StdioOptions = {}): Promise<void> {
  sendLogsToStderr();
  const stdin = opts.stdin ?? process.stdin;
  const transport = new StdioServerTransport(stdin, opts.stdout ?? process.stdout);
  const server = createMcpServer(deps);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  // The SDK's transport does not notice the end of its input; a client that goes away ends the session.
  stdin.once("end", () => void server.close());
  await server.connect(transport);
  await closed;
}
