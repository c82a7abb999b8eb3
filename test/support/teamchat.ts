// For the team-chat suites: the orchestrator app with agent mode (a hub made in the test, the
// fixture agent) and POST /api/messages, configured against the fixture bot platform (and a
// fixture voice backend when given), served on a loopback port.
import { join } from "node:path";
import type { Server } from "bun";
import { createFileStore } from "../../src/common/kv/file-store";
import { createRedisStore } from "../../src/common/kv/redis-store";
import type { KeyValueStore } from "../../src/common/kv/store";
import { type AgentModeDeps, createAgentModeDeps } from "../../src/orchestrator/agent-mode/deps";
import { createOrchestratorApp } from "../../src/orchestrator/app";
import { loadOrchestratorConfig, type OrchestratorConfig } from "../../src/orchestrator/config";
import { createCompanionSync } from "../../src/orchestrator/repos/companions";
import { createTeamChatDeps, type TeamChatDeps } from "../../src/orchestrator/routes/teamchat";
import { APP_ID, APP_PASSWORD, type BotPlatform } from "../fixtures/bot-platform";
import { AGENT, FAKE_AGENT_ENV, FAKE_CLAUDE, type KvKind } from "./agent-mode";
import { TEST_REDIS_URL } from "./servers";

export const OWNER = "00000000-0000-4000-8000-00000000a0a0";
/** SERVICE_API_KEYS of the test server: every route but the webhook needs it, as in production. */
export const SERVICE_KEY = "teamchat-test-service-key";

export interface TeamChatServerOptions {
  home: string;
  hubUrl: string;
  platform: BotPlatform;
  kv?: KvKind;
  redisPrefix?: string;
  /** VOICE_SERVICE_URL. */
  voiceUrl?: string;
  /** Extra config variables (over the TEAMCHAT_ ones pointing at the fixture platform). */
  configEnv?: Record<string, string>;
  /** What the agent inherits; mutate it between messages to pick a scenario. */
  agentEnv: Record<string, string | undefined>;
  unknownKidCooldownMs?: number;
}

export interface TeamChatServer {
  url: string;
  config: OrchestratorConfig;
  agentMode: AgentModeDeps;
  teamChat: TeamChatDeps;
  kv: KeyValueStore;
  server: Server<undefined>;
  /** POSTs an activity to /api/messages with `Authorization: Bearer <token>` (none when token is null). */
  post(activity: unknown, token: string | null): Promise<Response>;
  close(): Promise<void>;
}

export async function startTeamChatServer(o: TeamChatServerOptions): Promise<TeamChatServer> {
  const config = loadOrchestratorConfig(
    {
      SERVICE_HUB_URL: o.hubUrl,
      HUB_AGENT: AGENT,
      SERVICE_CLAUDE_BINARY: FAKE_CLAUDE,
      SERVICE_AGENT_ENV: FAKE_AGENT_ENV,
      SERVICE_CLONE_ROOT: join(o.home, "clones"),
      SERVICE_PACKAGE_DIR: join(o.home, "package"),
      SERVICE_OTEL_ENABLED: "false",
      SERVICE_API_KEYS: SERVICE_KEY,
      TEAMCHAT_APP_ID: APP_ID,
      TEAMCHAT_APP_PASSWORD: APP_PASSWORD,
      TEAMCHAT_OPENID_METADATA_URL: o.platform.metadataUrl,
      TEAMCHAT_TOKEN_URL: o.platform.tokenUrl,
      TEAMCHAT_ALLOWED_SERVICE_HOSTS: "127.0.0.1",
      ...(o.voiceUrl ? { VOICE_SERVICE_URL: o.voiceUrl, VOICE_API_KEY: "voice-key" } : {}),
      ...(o.kv === "redis" ? { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: o.redisPrefix ?? `brain-stack-test:${crypto.randomUUID()}` } : {}),
      ...o.configEnv,
    },
    o.home,
  );
  const kv =
    o.kv === "redis"
      ? await createRedisStore({ url: config.redisUrl!, keyPrefix: config.redisKeyPrefix })
      : await createFileStore({ dir: join(config.stateDir, "kv") });
  const agentMode = await createAgentModeDeps(config, kv, { env: o.agentEnv, killGraceMs: 500 });
  if (!agentMode) throw new Error("agent mode did not start");
  const teamChat = createTeamChatDeps(config, kv, agentMode, { unknownKidCooldownMs: o.unknownKidCooldownMs ?? 0 });
  if (!teamChat) throw new Error("team chat did not start");
  // Wired as the runtime wires it: the webhook registered by the app, SERVICE_API_KEYS on every other route.
  const app = createOrchestratorApp({
    config,
    jobs: {} as never,
    profiles: { list: () => ({ profiles: [], errors: [] }) } as never,
    companions: createCompanionSync(config),
    agentMode,
    teamChat,
  });
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: app.fetch, idleTimeout: 255 });
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    config,
    agentMode,
    teamChat,
    kv,
    server,
    post(activity, token) {
      return fetch(`${url}/api/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token !== null ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(activity),
      });
    },
    async close() {
      await server.stop(true);
      await agentMode.close();
      await teamChat.close();
      await kv.close();
    },
  };
}
