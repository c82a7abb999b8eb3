// The knowledge router's Hono sub-app: middleware and routes, nothing else.
import { edgeProtection } from "../common/config/edge-settings";
import { registerHealth } from "../common/health";
import { bearerAuth } from "../common/middleware/bearer-auth";
import { createOpenApiApp, serveDocs } from "../common/openapi-app";
import { VERSION } from "../common/version";
import type { RouterApp, RouterDeps, RouterEnv } from "./app-types";
import { registerRouterConsole } from "./console";
import apiGuide from "./routes/api-guide.md" with { type: "text" };
import { registerBrief } from "./routes/brief";
import { registerDispatch } from "./routes/dispatch";
import { registerFeed } from "./routes/feed";
import { registerHealthReports } from "./routes/health-reports";
import { registerIngest } from "./routes/ingest";
import { registerMarker } from "./routes/marker";
import { registerNotes } from "./routes/notes";
import { registerSearch } from "./routes/search";
import { registerSignal } from "./routes/signal";
import { registerTick } from "./routes/tick";

const SERVICE_NAME = "knowledge-router";

export const ROUTER_API_INFO = {
  title: "brain-stack knowledge router",
  version: VERSION,
  description:
    "HTTP API in front of a knowledge vault: ingest, federated search, reading notes and their links, briefs, dispatch, markers, ticks, feed and health reports. " +
    "Every endpoint but GET /health needs `Authorization: Bearer <KB_ROUTER_TOKEN>`; with no token configured every endpoint answers 503. " +
    "GET /feed, GET /signal and POST /marker also take the scoped token an agent's hooks carry (minted by the orchestrator per job or turn; 403 on any other route, 401 once expired).",
  server: "http://127.0.0.1:8103",
  guide: apiGuide,
};

export function createRouterApp(deps: RouterDeps): RouterApp {
  const app = createOpenApiApp<RouterEnv>(() => false, {
    logTag: "router",
    maxBodyBytes: deps.config.maxBodyBytes,
    authorize: bearerAuth({
      tokens: deps.config.tokens,
      // spec: knowledge-router, Authentication: only GET /health is open; the documents hold no data.
      // /console is the page shell only: it calls the API with the token the user pastes.
      openPaths: ["/health", "/openapi.json", "/docs", "/console"],
      // An agent's hooks carry a token minted per job or turn (common/scoped-token.ts), never this one.
      scopedTokens: true,
      whenUnset: {
        mode: "fail-closed",
        code: "server_token_unset",
        message: "KB_ROUTER_TOKEN is not set: the router refuses every request until it is (set KB_ROUTER_TOKEN or KB_ROUTER_TOKENS and restart)",
      },
    }),
    ...edgeProtection(deps.config, deps.config.tokens.length > 0),
    bindings: { deps },
  });
  registerHealth(app, SERVICE_NAME);
  registerIngest(app);
  registerSearch(app);
  registerNotes(app);
  registerBrief(app);
  registerDispatch(app);
  registerMarker(app);
  registerTick(app);
  registerFeed(app);
  registerSignal(app);
  registerHealthReports(app);
  serveDocs(app, ROUTER_API_INFO);
  registerRouterConsole(app);
  return app;
}
