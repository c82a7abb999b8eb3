// Everything POST /api/messages needs, built once at start-up: undefined unless TEAMCHAT_APP_ID
// and TEAMCHAT_APP_PASSWORD are both set (spec: Endpoints). Team chat talks to the agent, so it
// needs agent mode; a sovereign-cloud endpoint in the config stops start-up (spec: Team-chat
// scope, commercial cloud only).
import type { KeyValueStore } from "../../common/kv/store";
import { log } from "../../common/logger";
import type { AgentModeDeps } from "../agent-mode/deps";
import type { OrchestratorConfig } from "../config";
import { lazyVoiceClient } from "../voice";
import { TeamChatBot } from "./bot";
import { sovereignSettings, tenantTokenUrl } from "./cloud";
import { Connector } from "./connector";
import { TeamChatHistory } from "./history";
import type { InboundAuthOptions } from "./inbound-auth";
import { OutboundToken } from "./outbound-token";
import { SigningKeys } from "./signing-keys";

const logger = log("teamchat");

export interface TeamChatDeps {
  bot: TeamChatBot;
  /** How inbound tokens are checked; undefined when TEAMCHAT_SKIP_JWT_VALIDATION=1. */
  auth: InboundAuthOptions | undefined;
  /** Waits for running team-chat work (the agent-mode service stops the turns). */
  close(): Promise<void>;
}

export interface TeamChatOptions {
  /** Every outbound request of the connector (keys, token, replies, voice notes, voice backend). */
  fetch?: typeof fetch;
  /** Least time between key-set fetches for unknown kids (default 60 s). */
  unknownKidCooldownMs?: number;
}

class TeamChatConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TeamChatConfigError";
  }
}

/** True when the config turns team chat on. */
function teamChatEnabled(config: Pick<OrchestratorConfig, "teamchatAppId" | "teamchatAppPassword">): boolean {
  return Boolean(config.teamchatAppId && config.teamchatAppPassword);
}

export function createTeamChatDeps(
  config: OrchestratorConfig,
  kv: KeyValueStore,
  agentMode: AgentModeDeps | undefined,
  opts: TeamChatOptions = {},
): TeamChatDeps | undefined {
  if (!teamChatEnabled(config)) {
    if (config.teamchatAppId || config.teamchatAppPassword) {
      logger.warn(`team chat is off: ${config.teamchatAppId ? "TEAMCHAT_APP_PASSWORD" : "TEAMCHAT_APP_ID"} is not set (POST /api/messages needs both)`);
    }
    return undefined;
  }
  if (!agentMode) {
    throw new TeamChatConfigError(
      "TEAMCHAT_APP_ID and TEAMCHAT_APP_PASSWORD are set but agent mode is off: the bot answers with the agent, so set SERVICE_HUB_URL and HUB_AGENT (or unset the TEAMCHAT_ variables)",
    );
  }
  const tokenUrl = tenantTokenUrl(config.teamchatTokenUrl, config.teamchatTenantId);
  const sovereign = sovereignSettings({
    TEAMCHAT_OPENID_METADATA_URL: config.teamchatOpenIdMetadataUrl,
    TEAMCHAT_ISSUER: config.teamchatIssuer,
    TEAMCHAT_TOKEN_URL: tokenUrl,
    TEAMCHAT_SCOPE: config.teamchatScope,
    TEAMCHAT_ALLOWED_SERVICE_HOSTS: config.teamchatAllowedServiceHosts,
  });
  if (sovereign.length > 0) {
    throw new TeamChatConfigError(`team chat supports the commercial cloud only: ${sovereign.join("; ")}`);
  }

  const token = new OutboundToken({
    tokenUrl,
    appId: config.teamchatAppId!,
    appPassword: config.teamchatAppPassword!,
    scope: config.teamchatScope,
    fetch: opts.fetch,
  });
  const allowedHosts = config.teamchatAllowedServiceHosts;
  const bot = new TeamChatBot({
    agentId: agentMode.agent.agentId,
    chat: agentMode.chat,
    connector: new Connector({ token, allowedHosts, fetch: opts.fetch }),
    token,
    history: new TeamChatHistory(kv, {
      agentId: agentMode.agent.agentId,
      maxMessages: config.teamchatMaxMessages,
      ttlSeconds: config.teamchatConversationTtl,
    }),
    voice: lazyVoiceClient(config, { fetch: opts.fetch }),
    ownerObjectId: config.teamchatOwnerObjectId,
    allowedHosts,
    flushChars: config.teamchatFlushChars,
    fetch: opts.fetch,
  });

  let auth: InboundAuthOptions | undefined;
  if (config.teamchatSkipJwtValidation) {
    logger.warn(
      "⚠ TEAMCHAT_SKIP_JWT_VALIDATION is on: POST /api/messages accepts activities WITHOUT checking who sent them. " +
        "Local development only; never expose this service like this.",
    );
  } else {
    auth = {
      keys: new SigningKeys({ metadataUrl: config.teamchatOpenIdMetadataUrl, fetch: opts.fetch, unknownKidCooldownMs: opts.unknownKidCooldownMs }),
      appId: config.teamchatAppId!,
      issuer: config.teamchatIssuer,
    };
  }
  logger.info(
    `team chat on: POST /api/messages for app ${config.teamchatAppId}${config.teamchatTenantId ? ` (tenant ${config.teamchatTenantId})` : ""}` +
      `${config.teamchatOwnerObjectId ? `, owner ${config.teamchatOwnerObjectId} only` : ", any authenticated user"}`,
  );
  return { bot, auth, close: () => bot.close() };
}
