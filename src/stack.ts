// Starts the services of one process: configs are loaded (and validated) first, then each
// sub-app is bound. If any part fails to start, what already started is stopped again, so
// a stack is never left half-started.
import type { Server } from "bun";
import { log } from "./common/logger";
import { listen, StartupError } from "./common/server";
import { loadOrchestratorConfig, type OrchestratorConfig } from "./orchestrator/config";
import { checkOrchestratorExposure } from "./orchestrator/exposure";
import { loadRouterConfig, type RouterConfig } from "./router/config";

export type ServiceName = "router" | "orchestrator";

export interface StackOptions {
  only?: ServiceName;
  vault?: string;
  env: Record<string, string | undefined>;
  home: string;
}

export interface Stack {
  router?: { server: Server<undefined>; config: RouterConfig };
  routerMcp?: { server: Server<undefined> };
  orchestrator?: { server: Server<undefined>; config: OrchestratorConfig };
  /** Stop accepting, let in-flight requests finish for up to graceMs, then close everything. */
  stop(graceMs?: number): Promise<void>;
}

const logger = log("main");

/** How this process reaches one of its own listeners: a wildcard bind is reached on loopback. */
function localUrl(host: string, port: number | undefined): string {
  const h = ["0.0.0.0", "::", ""].includes(host) ? "127.0.0.1" : host;
  return `http://${h.includes(":") ? `[${h}]` : h}:${port}`;
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  const wants = (s: ServiceName) => opts.only === undefined || opts.only === s;
  const routerConfig = wants("router") ? loadRouterConfig(opts.env, opts.home, { vault: opts.vault }) : undefined;
  const orchestratorConfig = wants("orchestrator") ? loadOrchestratorConfig(opts.env, opts.home) : undefined;
  if (orchestratorConfig) checkOrchestratorExposure(orchestratorConfig);

  // Long-lived streams end first, then servers stop (in-flight requests finish), then the
  // stores they used close.
  const streams: Array<() => Promise<void>> = [];
  const servers: Array<(graceMs: number) => Promise<void>> = [];
  const runtimes: Array<() => Promise<void>> = [];
  const stack: Stack = {
    async stop(graceMs = 10_000) {
      await Promise.allSettled(streams.splice(0).map((end) => end()));
      await Promise.allSettled(servers.splice(0).map((stop) => stop(graceMs)));
      for (const close of runtimes.splice(0).reverse()) await close().catch((err) => logger.error("closing:", err));
    },
  };
  const stopServer = (server: Server<undefined>) => async (graceMs: number) => {
    // stop(false) stops accepting and resolves once in-flight requests are done; bounded.
    const graceful = server.stop(false);
    const timer = setTimeout(() => server.stop(true), graceMs);
    await graceful.finally(() => clearTimeout(timer));
  };

  try {
    if (routerConfig) {
      if (routerConfig.tokens.length === 0) {
        logger.warn("KB_ROUTER_TOKEN is not set: the router answers 503 on every endpoint until it is");
      }
      // Each service's modules load only when it runs (`--only router` never loads the orchestrator's).
      const { createRouterRuntime } = await import("./router/runtime");
      const runtime = await createRouterRuntime(routerConfig).catch((err: Error) => {
        throw new StartupError(`router: ${err.message}`);
      });
      runtimes.push(() => runtime.close());
      // Open event streams (GET /signal, MCP sessions) never finish on their own: end them first.
      const endingStreams = (stop: (graceMs: number) => Promise<void>) => async (graceMs: number) => {
        await runtime.endStreams();
        await stop(graceMs);
      };
      const server = listen({ name: "router", fetch: runtime.app.fetch, host: routerConfig.host, port: routerConfig.port, portVar: "PORT_BRAIN_API" });
      servers.push(endingStreams(stopServer(server)));
      stack.router = { server, config: routerConfig };
      logger.info(`knowledge router on http://${routerConfig.host}:${server.port} (vault ${routerConfig.vault})`);
      const mcpServer = listen({
        name: "router MCP",
        fetch: runtime.mcp.fetch,
        host: routerConfig.host,
        port: routerConfig.mcpPort,
        portVar: "PORT_BRAIN_MCP",
      });
      servers.push(endingStreams(stopServer(mcpServer)));
      stack.routerMcp = { server: mcpServer };
      logger.info(`router MCP on http://${routerConfig.host}:${mcpServer.port} (Streamable HTTP at /mcp, HTTP+SSE at /sse)`);
    }
    if (orchestratorConfig) {
      // One process: the orchestrator's jobs feed this router unless ROUTER_URL names another.
      if (stack.router && !orchestratorConfig.routerUrl && routerConfig?.tokens[0]) {
        orchestratorConfig.routerUrl = localUrl(routerConfig.host, stack.router.server.port);
        orchestratorConfig.routerToken ??= routerConfig.tokens[0];
      }
      const { createOrchestratorRuntime } = await import("./orchestrator/runtime");
      const runtime = await createOrchestratorRuntime(orchestratorConfig).catch((err: Error) => {
        throw new StartupError(`orchestrator: ${err.message}`);
      });
      runtimes.push(() => runtime.close());
      streams.push(() => runtime.beforeStop());
      const server = listen({
        name: "orchestrator",
        fetch: runtime.app.fetch,
        host: orchestratorConfig.host,
        port: orchestratorConfig.port,
        portVar: "SERVICE_PORT",
      });
      servers.push(stopServer(server));
      stack.orchestrator = { server, config: orchestratorConfig };
      // And the router's /dispatch goes to this orchestrator, on whatever port it got, unless
      // ORCHESTRATOR_URL names another (the router reads both at each dispatch).
      if (routerConfig && routerConfig.orchestratorUrl === undefined) {
        routerConfig.orchestratorUrl = localUrl(orchestratorConfig.host, server.port);
        routerConfig.serviceApiKey ??= orchestratorConfig.apiKeys[0];
      }
      logger.info(`job orchestrator on http://${orchestratorConfig.host}:${server.port}`);
    }
  } catch (err) {
    await stack.stop(0);
    throw err;
  }
  // Start-up's garbage (config parsing, route and schema building, the index's opening) is
  // collected once now, so an idle process holds what it serves with, not what it started with;
  // then JavaScriptCore drops the code it compiled for start-up alone (compiled again if run again).
  // Bun.shrink is marked deprecated: a Bun without it only skips this.
  Bun.gc(true);
  if (typeof Bun.shrink === "function") Bun.shrink();
  return stack;
}
