// The orchestrator's configuration (spec: job-orchestrator, Configuration): environment,
// then ~/.service/config.yml, then these defaults. Built once in main.ts, passed down.
import { hostname } from "node:os";
import { join } from "node:path";
import { readYamlFlat } from "../common/config/files";
import { z } from "zod";
import { bool, int, list, oneOf, port, str, url } from "../common/config/parsers";
import { edgeSettings } from "../common/config/edge-settings";
import { loadSettings, type ConfigOf, type Settings } from "../common/config/settings";

/** "Name <email>" → {name, email}. */
const gitIdentity = () =>
  z
    .string()
    .trim()
    .regex(/^[^<>]+<[^<>\s]+@[^<>\s]+>$/, "expected Name <email>")
    .transform((v) => {
      const at = v.indexOf("<");
      return { name: v.slice(0, at).trim(), email: v.slice(at + 1, -1) };
    });

export const orchestratorSettings = {
  host: { env: "SERVICE_HOST", fileKey: "server.host", default: "127.0.0.1", parse: str(), doc: "bind address" },
  port: { env: "SERVICE_PORT", fileKey: "server.port", default: "8200", parse: port(), doc: "listen port" },
  transport: { env: "SERVICE_TRANSPORT", fileKey: "server.transport", default: "sse", parse: oneOf(["sse", "stdio"]), doc: "MCP transport: sse (HTTP) or stdio" },
  apiKeys: { env: "SERVICE_API_KEYS", fileKey: "server.api_keys", default: "", defaultDoc: "none", parse: list(), secret: true, doc: "comma-separated API keys (a YAML list in the file); none = no auth, loopback bind only" },
  allowNoAuth: { env: "SERVICE_ALLOW_NO_AUTH", fileKey: null, default: "false", parse: bool(), doc: "allow serving without keys on a non-loopback bind" },
  maxBodyBytes: { env: "MAX_BODY_BYTES", fileKey: "server.max_body_bytes", default: String(10 * 1024 * 1024), defaultDoc: "10485760 (10 MiB)", parse: int(1, 2 ** 31), doc: "largest request body; larger → 413" },
  claudeBinary: { env: "SERVICE_CLAUDE_BINARY", fileKey: "claude.binary", default: "claude", parse: str(), doc: "agent CLI path" },
  claudeTimeout: { env: "SERVICE_CLAUDE_TIMEOUT", fileKey: "claude.timeout", default: "3600", parse: int(1, 7 * 86400), doc: "max seconds per job" },
  hooksProfile: { env: "HOOKS_PROFILE", fileKey: "agentihooks_profile", default: "coding", parse: str(), doc: "active execution profile of the hooks package" },
  claudeConfigDir: { env: "SERVICE_CLAUDE_CONFIG_DIR", fileKey: "claude.config_dir", default: undefined, defaultDoc: "none", parse: str(), doc: "deprecated; use MODEL_CLI_HOME_DIR" },
  claudeHomeDir: { env: "MODEL_CLI_HOME_DIR", fileKey: "claude.claude_home_dir", default: "~/.service/agent-home", parse: str(), doc: "the agent's HOME (its own, not the service's); the agent uses <dir>/.claude/, where the service's ~/.claude/.credentials.json is copied" },
  allowLocalRepos: { env: "SERVICE_ALLOW_LOCAL_REPOS", fileKey: null, default: "false", parse: bool(), doc: "1 = a job's repo_url may be a file:// URL or a local path (tests, local development); else only https, ssh and git URLs" },
  reposRoot: { env: "SERVICE_REPOS_ROOT", fileKey: "repos.root", default: "~/service-repos", parse: str(), doc: "cloned repos root" },
  maxParallelJobs: { env: "SERVICE_MAX_PARALLEL_JOBS", fileKey: "repos.max_parallel_jobs", default: "3", parse: int(1, 1024), doc: "concurrent jobs" },
  jobTtl: { env: "SERVICE_JOB_TTL", fileKey: "repos.job_ttl_seconds", default: "86400", parse: int(1, 365 * 86400), doc: "job TTL seconds" },
  sharedFsRoot: { env: "SERVICE_SHARED_FS_ROOT", fileKey: "repos.shared_fs_root", default: undefined, defaultDoc: "none", parse: str(), doc: "shared filesystem root; enables orchestrator mode (profiles materialised to jobs/{job-id}/)" },
  jobsDir: { env: "SERVICE_JOBS_DIR", fileKey: "repos.jobs_dir", default: "~/.service/jobs", parse: str(), doc: "job JSON directory (job-state/ under the shared root in orchestrated deployments)" },
  podName: { env: "SERVICE_POD_NAME", fileKey: "repos.pod_name", default: hostname(), defaultDoc: "hostname", parse: str(), doc: "pod identity stored on each job" },
  worktreeRoot: { env: "SERVICE_WORKTREE_ROOT", fileKey: "repos.worktree_root", default: "~/.service/worktrees", parse: str(), doc: "local-disk worktrees (ephemeral)" },
  cloneRoot: { env: "SERVICE_CLONE_ROOT", fileKey: "repos.clone_root", default: "", defaultDoc: "empty", parse: str(), doc: "clone parent for companion repos; falls back to the shared root" },
  redisUrl: { env: "REDIS_URL", fileKey: "redis.url", default: undefined, defaultDoc: "none", parse: url(), secret: true, doc: "key-value store URL; unset = file stores" },
  redisKeyPrefix: { env: "REDIS_KEY_PREFIX", fileKey: "redis.key_prefix", default: "service", parse: str(), doc: "key namespace prefix" },
  jobLockSeconds: { env: "SERVICE_JOB_LOCK_SECONDS", fileKey: "redis.job_lock_seconds", default: "30", parse: int(1, 3600), doc: "with REDIS_URL: how long a pod's hold on a running job lasts unrenewed; a dead pod's jobs are failed within 3× this" },
  otelEnabled: { env: "SERVICE_OTEL_ENABLED", fileKey: "otel.enabled", default: "true", parse: bool(), doc: "telemetry on/off" },
  otelEndpoint: { env: "OTEL_EXPORTER_OTLP_ENDPOINT", fileKey: "otel.endpoint", default: "http://otel-collector:4317", parse: url(), doc: "collector" },
  otelProtocol: { env: "OTEL_EXPORTER_OTLP_PROTOCOL", fileKey: "otel.protocol", default: "grpc", parse: oneOf(["grpc", "http", "http/protobuf", "http/json"]), doc: "grpc or http" },
  otelLogPrompts: { env: "SERVICE_OTEL_LOG_PROMPTS", fileKey: "otel.log_prompts", default: "false", parse: bool(), doc: "log user prompts" },
  otelLogToolDetails: { env: "SERVICE_OTEL_LOG_TOOL_DETAILS", fileKey: "otel.log_tool_details", default: "true", parse: bool(), doc: "log tool details" },
  modelOauthToken: { env: ["MODEL_CLI_OAUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"], fileKey: null, default: undefined, defaultDoc: "none", parse: str(), secret: true, doc: "long-lived OAuth token (handed to the agent as CLAUDE_CODE_OAUTH_TOKEN); when set, the two below are removed from the job env" },
  modelAuthToken: { env: ["MODEL_AUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"], fileKey: null, default: undefined, defaultDoc: "none", parse: str(), secret: true, doc: "static API key fallback (ANTHROPIC_AUTH_TOKEN for the agent)" },
  modelBaseUrl: { env: ["MODEL_BASE_URL", "ANTHROPIC_BASE_URL"], fileKey: null, default: undefined, defaultDoc: "none", parse: url(), doc: "custom API endpoint (ANTHROPIC_BASE_URL for the agent)" },
  githostToken: { env: "GITHOST_TOKEN", fileKey: "github.token", default: undefined, defaultDoc: "none", parse: str(), secret: true, doc: "PAT for auto-PR and private repos" },
  githostApiUrl: { env: "GITHOST_API_URL", fileKey: "github.api_url", default: "https://api.github.com", parse: url(), doc: "git host API (App installation tokens); GITHOST_TOKEN and App tokens are only sent to this host (\"api.\" dropped)" },
  githostUrl: { env: "GITHOST_URL", fileKey: "github.url", default: undefined, defaultDoc: "from GITHOST_API_URL (\"api.\" dropped)", parse: url(), doc: "the git host (scheme, host, port) GITHOST_TOKEN and App tokens are sent to, over https only (plain http only on a loopback address)" },
  gitAuthor: { env: "SERVICE_GIT_AUTHOR", fileKey: "repos.git_author", default: "brain-stack agent <agent@brain-stack.invalid>", parse: gitIdentity(), doc: "author and committer (`Name <email>`) of the agent's commits" },
  githostAppId: { env: "GITHOST_APP_ID", fileKey: "github.app_id", default: undefined, defaultDoc: "none", parse: str(), doc: "app identity: app id" },
  githostAppInstallationId: { env: "GITHOST_APP_INSTALLATION_ID", fileKey: "github.app_installation_id", default: undefined, defaultDoc: "none", parse: str(), doc: "app identity: installation id" },
  githostAppPrivateKeyPath: { env: "GITHOST_APP_PRIVATE_KEY_PATH", fileKey: null, default: undefined, defaultDoc: "none", parse: str(), doc: "app PEM key as a path" },
  githostAppPrivateKey: { env: "GITHOST_APP_PRIVATE_KEY", fileKey: null, default: undefined, defaultDoc: "none", parse: str(), secret: true, doc: "app PEM key as raw text" },
  githostAppPrivateKeyBase64: { env: "GITHOST_APP_PRIVATE_KEY_BASE64", fileKey: null, default: undefined, defaultDoc: "none", parse: str(), secret: true, doc: "app PEM key as base64" },
  tracingHost: { env: "TRACING_HOST", fileKey: "langfuse.host", default: "https://cloud.langfuse.com", parse: url(), doc: "tracing API host" },
  tracingPublicKey: { env: "TRACING_PUBLIC_KEY", fileKey: "langfuse.public_key", default: undefined, defaultDoc: "none", parse: str(), doc: "setting it enables transcript shipping" },
  tracingSecretKey: { env: "TRACING_SECRET_KEY", fileKey: "langfuse.secret_key", default: undefined, defaultDoc: "none", parse: str(), secret: true, doc: "tracing secret key" },
  tracingBasicAuth: { env: "TRACING_BASIC_AUTH", fileKey: null, default: undefined, defaultDoc: "none", parse: str(), secret: true, doc: "base64 of public_key:secret_key for the collector" },
  hooksUrl: { env: "SERVICE_HOOKS_URL", fileKey: "agentihooks_url", default: "", defaultDoc: "empty", parse: str(), doc: "hooks package repo, cloned once to <CLONE_ROOT>/<dir-from-url>" },
  hooksPath: { env: "SERVICE_HOOKS_PATH", fileKey: "agentihooks_path", default: "", defaultDoc: "empty", parse: str(), doc: "use this hooks package directory as-is (no clone); wins over SERVICE_HOOKS_URL" },
  hooksBranch: { env: "SERVICE_HOOKS_BRANCH", fileKey: "agentihooks_branch", default: "", defaultDoc: "empty", parse: str(), doc: "ref to check out" },
  hooksBundleUrl: { env: "SERVICE_HOOKS_BUNDLE_URL", fileKey: "agentihooks_bundle_url", default: "", defaultDoc: "empty", parse: str(), doc: "optional bundle repo, passed as --bundle to hooks init" },
  hubUrl: { env: "SERVICE_HUB_URL", fileKey: "agentihub_url", default: "", defaultDoc: "empty", parse: str(), doc: "agent hub repo; required for agent mode" },
  hubPath: { env: "SERVICE_HUB_PATH", fileKey: "agentihub_path", default: "", defaultDoc: "empty", parse: str(), doc: "use this hub directory as-is (no clone) when SERVICE_HUB_URL is not set" },
  packageDir: { env: "SERVICE_PACKAGE_DIR", fileKey: "agent.package_dir", default: "~/.service/package", parse: str(), doc: "where agent mode copies agents/{name}/package/ (the agent's cwd; /app/package in the image)" },
  hubAgent: { env: "HUB_AGENT", fileKey: null, default: "", defaultDoc: "empty", parse: str(), doc: "agent name, matches agents/{name}/" },
  convHashFallback: { env: "SERVICE_CONV_HASH_FALLBACK", fileKey: null, default: "true", parse: bool(), doc: "tier-3 conversation fallback (content hash)" },
  taskModel: { env: "SERVICE_TASK_MODEL", fileKey: null, default: "haiku", parse: str(), doc: "model of the one-shot answers to chat clients' background tasks (Open WebUI titles, tags, follow-ups, queries, autocomplete)" },
  streamText: { env: "SERVICE_STREAM_TEXT", fileKey: null, default: "block", parse: oneOf(["block", "live"]), doc: "agent-mode text: block (narration/final per closed block) or live (deltas as they arrive); /live-text and /block-text switch per user" },
  sessionTtl: { env: "AGENT_MODE_SESSION_TTL", fileKey: null, default: "86400", parse: int(1, 365 * 86400), doc: "session mapping TTL seconds" },
  voiceServiceUrl: { env: "VOICE_SERVICE_URL", fileKey: null, default: undefined, defaultDoc: "none", parse: url(), doc: "enables the voice adapter" },
  voiceApiKey: { env: "VOICE_API_KEY", fileKey: null, default: undefined, defaultDoc: "none", parse: str(), secret: true, doc: "bearer credential for the voice backend" },
  voiceTimeout: { env: "VOICE_TIMEOUT_SECONDS", fileKey: null, default: "120", parse: int(1, 3600), doc: "voice backend client timeout (seconds per call)" },
  teamchatAppId: { env: "TEAMCHAT_APP_ID", fileKey: null, default: undefined, defaultDoc: "none", parse: str(), doc: "bot application (client) id; with TEAMCHAT_APP_PASSWORD it enables POST /api/messages" },
  teamchatAppPassword: { env: "TEAMCHAT_APP_PASSWORD", fileKey: null, default: undefined, defaultDoc: "none", parse: str(), secret: true, doc: "bot application client secret" },
  teamchatTenantId: { env: "TEAMCHAT_TENANT_ID", fileKey: null, default: undefined, defaultDoc: "none", parse: str(), doc: "single-tenant bot: its directory (tenant) id; outbound tokens come from that tenant" },
  teamchatOwnerObjectId: { env: "TEAMCHAT_OWNER_OBJECT_ID", fileKey: null, default: undefined, defaultDoc: "none", parse: str(), doc: "serve only this sender (directory object id, the activity's from.aadObjectId); unset = any authenticated user" },
  teamchatSkipJwtValidation: { env: "TEAMCHAT_SKIP_JWT_VALIDATION", fileKey: null, default: "false", parse: bool(), doc: "1 = accept inbound activities without checking their JWT (local development only; logged loudly)" },
  teamchatOpenIdMetadataUrl: { env: "TEAMCHAT_OPENID_METADATA_URL", fileKey: null, default: "https://login.botframework.com/v1/.well-known/openidconfiguration", parse: url(), doc: "bot platform OpenID metadata (its jwks_uri signs inbound tokens)" },
  teamchatIssuer: { env: "TEAMCHAT_ISSUER", fileKey: null, default: "https://api.botframework.com", parse: str(), doc: "issuer inbound tokens must carry" },
  teamchatTokenUrl: { env: "TEAMCHAT_TOKEN_URL", fileKey: null, default: "https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token", parse: url(), doc: "OAuth2 token endpoint for replies; its botframework.com path segment becomes TEAMCHAT_TENANT_ID when that is set" },
  teamchatScope: { env: "TEAMCHAT_SCOPE", fileKey: null, default: "https://api.botframework.com/.default", parse: str(), doc: "scope of the outbound client-credentials token" },
  teamchatAllowedServiceHosts: { env: "TEAMCHAT_ALLOWED_SERVICE_HOSTS", fileKey: null, default: "", defaultDoc: "none", parse: list(), doc: "hosts (and their subdomains) replies may go to besides botframework.com, trafficmanager.net and skype.com; http only for loopback" },
  teamchatFlushChars: { env: "TEAMCHAT_FLUSH_CHARS", fileKey: null, default: "2000", parse: int(100, 20000), doc: "a coalesced reasoning message is sent once its block ends or it passes this many characters" },
  teamchatMaxMessages: { env: "TEAMCHAT_MAX_MESSAGES", fileKey: null, default: "20", parse: int(1, 1000), doc: "messages of team-chat history kept per conversation" },
  teamchatConversationTtl: { env: "TEAMCHAT_CONVERSATION_TTL", fileKey: null, default: "86400", parse: int(1, 365 * 86400), doc: "seconds team-chat history is kept after the last message" },
  k8sEnabled: { env: "SERVICE_K8S_ENABLED", fileKey: null, default: "false", defaultDoc: "off", parse: bool(), doc: "opt-in Kubernetes backend for the agents command" },
  k8sNamespaces: { env: "SERVICE_K8S_NAMESPACES", fileKey: null, default: "", defaultDoc: "none", parse: list(), doc: "namespaces for the agents command" },
  routerUrl: { env: "ROUTER_URL", fileKey: "router.url", default: undefined, defaultDoc: "none (the one-process stack: its own router)", parse: url(), doc: "knowledge router jobs and agent-mode turns feed (hooks in the agent's settings, a milestone per job); with KB_ROUTER_TOKEN" },
  routerToken: { env: "KB_ROUTER_TOKEN", fileKey: null, default: undefined, defaultDoc: "none", parse: str(), secret: true, doc: "bearer token for ROUTER_URL" },
  routerCli: { env: "ROUTER_CLI_BINARY", fileKey: "router.cli", default: "router-cli", parse: str(), doc: "the router-cli the agent's hooks run (`router-cli hook …`)" },
  dockerRegistry: { env: "DOCKER_REGISTRY", fileKey: null, default: undefined, defaultDoc: "none", parse: str(), doc: "required by the push command" },
  ...edgeSettings("yaml"),
} satisfies Settings;

export type OrchestratorConfig = ConfigOf<typeof orchestratorSettings> & {
  /** The user's home: where ~/.service lives. */
  home: string;
  /** ~/.service: config.yml, profiles/, stream_config/, agent_sessions.json. */
  stateDir: string;
  configFile: string;
};

export function loadOrchestratorConfig(env: Record<string, string | undefined>, home: string): OrchestratorConfig {
  const stateDir = join(home, ".service");
  const configFile = join(stateDir, "config.yml");
  const values = loadSettings(orchestratorSettings, { env, file: readYamlFlat(configFile), filePath: configFile, home });
  return { ...values, home, stateDir, configFile };
}
