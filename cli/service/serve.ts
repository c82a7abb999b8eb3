// service-cli serve [--port 8200] [--host 127.0.0.1] [--transport sse|stdio]: the orchestrator
// in this process, as `bun src/main.ts --only orchestrator` runs it. The flags override
// SERVICE_PORT, SERVICE_HOST and SERVICE_TRANSPORT (which override ~/.service/config.yml).
// --transport stdio serves the MCP tools on stdin/stdout instead of HTTP and ends with stdin.
import { Writable } from "node:stream";
import { defineCommand } from "citty";
import { log, setLogLevel } from "../../src/common/logger";
import { listen, StartupError } from "../../src/common/server";
import { loadOrchestratorConfig, type OrchestratorConfig } from "../../src/orchestrator/config";
import { checkOrchestratorExposure } from "../../src/orchestrator/exposure";
import { serveMcpStdio } from "../../src/orchestrator/mcp/stdio";
import { createOrchestratorRuntime } from "../../src/orchestrator/runtime";
import { fail, usage } from "../_errors";
import { home, intArg } from "./_context";

const logger = log("main");

export default defineCommand({
  meta: { name: "serve", description: "Run the orchestrator in this process (HTTP, or MCP over stdio)" },
  args: {
    port: { type: "string", description: "listen port (default SERVICE_PORT, else 8200)" },
    host: { type: "string", description: "bind address (default SERVICE_HOST, else 127.0.0.1)" },
    transport: { type: "string", description: "sse (HTTP: REST and MCP) or stdio (MCP on stdin/stdout) (default SERVICE_TRANSPORT, else sse)" },
  },
  async run({ args }) {
    const env = { ...process.env };
    if (args.port !== undefined) env.SERVICE_PORT = String(intArg("port", args.port, 0, 65535));
    if (args.host !== undefined) env.SERVICE_HOST = args.host;
    if (args.transport !== undefined) {
      if (args.transport !== "sse" && args.transport !== "stdio") usage(`--transport must be sse or stdio, not ${JSON.stringify(args.transport)}`);
      env.SERVICE_TRANSPORT = args.transport;
    }
    const level = Number(process.env.LOG_LEVEL ?? 3);
    setLogLevel(Number.isFinite(level) ? level : 3);
    const config = loadConfig(env);
    if (config.transport === "stdio") return serveStdio(config);
    return serveHttp(config);
  },
});

/**
 * A bad configuration value stops the server as it stops `bun src/main.ts`: the message naming
 * the variable and the file, exit 1 (a flag the user typed wrong is still exit 2, above).
 */
function loadConfig(env: Record<string, string | undefined>): OrchestratorConfig {
  try {
    return loadOrchestratorConfig(env, home());
  } catch (err) {
    if ((err as Error).name === "ConfigError") fail((err as Error).message);
    throw err;
  }
}

async function serveStdio(config: OrchestratorConfig): Promise<number> {
  // stdout carries MCP and nothing else: the protocol gets its own stream on fd 1, and whatever
  // else would be printed there (the service's info log lines among it) goes to stderr.
  const mcpOut = new Writable({
    write(chunk: Buffer, _encoding, done) {
      Bun.write(Bun.stdout, chunk).then(() => done(), done);
    },
  });
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  const runtime = await createOrchestratorRuntime(config);
  // The session ends when the client closes stdin; jobs still running are stopped with it.
  await serveMcpStdio({ jobs: runtime.jobs, profiles: runtime.profiles }, { stdout: mcpOut });
  await runtime.close();
  return 0;
}

async function serveHttp(config: OrchestratorConfig): Promise<number> {
  checkOrchestratorExposure(config);
  const runtime = await createOrchestratorRuntime(config).catch((err: Error) => {
    throw new StartupError(`orchestrator: ${err.message}`);
  });
  let server;
  try {
    server = listen({ name: "orchestrator", fetch: runtime.app.fetch, host: config.host, port: config.port, portVar: "SERVICE_PORT" });
  } catch (err) {
    await runtime.close();
    throw err;
  }
  logger.info(`job orchestrator on http://${config.host}:${server.port}`);
  const graceMs = Number(process.env.SHUTDOWN_GRACE_MS ?? 10_000);
  return new Promise<number>((resolve) => {
    let stopping = false;
    const shutdown = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info(`${signal}: finishing in-flight requests (up to ${graceMs} ms), then exiting`);
      await runtime.beforeStop();
      const timer = setTimeout(() => server.stop(true), graceMs);
      await server.stop(false).finally(() => clearTimeout(timer));
      await runtime.close();
      resolve(0);
    };
    process.on("SIGTERM", () => void shutdown("SIGTERM"));
    process.on("SIGINT", () => void shutdown("SIGINT"));
  });
}
