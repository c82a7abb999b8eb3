import { describe, expect, it } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../common/config/settings";
import { loadOrchestratorConfig, orchestratorSettings } from "./config";

const home = () => mkdtempSync(join(tmpdir(), "svc-home-"));
const withYaml = (yaml: string) => {
  const h = home();
  mkdirSync(join(h, ".service"));
  writeFileSync(join(h, ".service", "config.yml"), yaml);
  return h;
};

// spec: job-orchestrator, Configuration — every row of the table, with its YAML key.
const SPEC_ROWS: Array<[string, string | null]> = [
  ["SERVICE_HOST", "server.host"],
  ["SERVICE_PORT", "server.port"],
  ["SERVICE_TRANSPORT", "server.transport"],
  ["SERVICE_API_KEYS", "server.api_keys"],
  ["SERVICE_CLAUDE_BINARY", "claude.binary"],
  ["SERVICE_CLAUDE_TIMEOUT", "claude.timeout"],
  ["HOOKS_PROFILE", "agentihooks_profile"],
  ["SERVICE_CLAUDE_CONFIG_DIR", "claude.config_dir"],
  ["MODEL_CLI_HOME_DIR", "claude.claude_home_dir"],
  ["SERVICE_REPOS_ROOT", "repos.root"],
  ["SERVICE_MAX_PARALLEL_JOBS", "repos.max_parallel_jobs"],
  ["SERVICE_JOB_TTL", "repos.job_ttl_seconds"],
  ["SERVICE_SHARED_FS_ROOT", "repos.shared_fs_root"],
  ["SERVICE_JOBS_DIR", "repos.jobs_dir"],
  ["SERVICE_POD_NAME", "repos.pod_name"],
  ["SERVICE_WORKTREE_ROOT", "repos.worktree_root"],
  ["SERVICE_CLONE_ROOT", "repos.clone_root"],
  ["REDIS_URL", "redis.url"],
  ["REDIS_KEY_PREFIX", "redis.key_prefix"],
  ["SERVICE_OTEL_ENABLED", "otel.enabled"],
  ["OTEL_EXPORTER_OTLP_ENDPOINT", "otel.endpoint"],
  ["OTEL_EXPORTER_OTLP_PROTOCOL", "otel.protocol"],
  ["SERVICE_OTEL_LOG_PROMPTS", "otel.log_prompts"],
  ["SERVICE_OTEL_LOG_TOOL_DETAILS", "otel.log_tool_details"],
  ["MODEL_CLI_OAUTH_TOKEN", null],
  ["MODEL_AUTH_TOKEN", null],
  ["MODEL_BASE_URL", null],
  ["GITHOST_TOKEN", "github.token"],
  ["GITHOST_APP_ID", "github.app_id"],
  ["GITHOST_APP_INSTALLATION_ID", "github.app_installation_id"],
  ["GITHOST_APP_PRIVATE_KEY_PATH", null],
  ["GITHOST_APP_PRIVATE_KEY", null],
  ["GITHOST_APP_PRIVATE_KEY_BASE64", null],
  ["TRACING_HOST", "langfuse.host"],
  ["TRACING_PUBLIC_KEY", "langfuse.public_key"],
  ["TRACING_SECRET_KEY", "langfuse.secret_key"],
  ["TRACING_BASIC_AUTH", null],
  ["SERVICE_HOOKS_URL", "agentihooks_url"],
  ["SERVICE_HOOKS_BRANCH", "agentihooks_branch"],
  ["SERVICE_HOOKS_BUNDLE_URL", "agentihooks_bundle_url"],
  ["SERVICE_HUB_URL", "agentihub_url"],
  ["HUB_AGENT", null],
  ["SERVICE_CONV_HASH_FALLBACK", null],
  ["AGENT_MODE_SESSION_TTL", null],
  ["VOICE_SERVICE_URL", null],
  ["VOICE_API_KEY", null],
  ["SERVICE_K8S_ENABLED", null],
  ["SERVICE_K8S_NAMESPACES", null],
  ["DOCKER_REGISTRY", null],
];

describe("orchestrator configuration", () => {
  it("has every row of the spec's configuration table with its YAML key", () => {
    const rows = Object.values(orchestratorSettings).map((s) => [typeof s.env === "string" ? s.env : s.env[0], s.fileKey]);
    for (const row of SPEC_ROWS) expect(rows).toContainEqual(row);
  });

  it("uses the spec's defaults with no environment and no file", () => {
    const h = home();
    const c = loadOrchestratorConfig({}, h);
    expect(c).toMatchObject({
      host: "127.0.0.1",
      port: 8200,
      transport: "sse",
      apiKeys: [],
      claudeBinary: "claude",
      claudeTimeout: 3600,
      hooksProfile: "coding",
      claudeHomeDir: join(h, ".service/agent-home"),
      reposRoot: join(h, "service-repos"),
      maxParallelJobs: 3,
      jobTtl: 86400,
      jobsDir: join(h, ".service/jobs"),
      worktreeRoot: join(h, ".service/worktrees"),
      cloneRoot: "",
      redisKeyPrefix: "service",
      otelEnabled: true,
      otelEndpoint: "http://otel-collector:4317",
      otelProtocol: "grpc",
      otelLogPrompts: false,
      otelLogToolDetails: true,
      convHashFallback: true,
      sessionTtl: 86400,
      k8sEnabled: false,
      k8sNamespaces: [],
    });
    expect(c.redisUrl).toBeUndefined();
    expect(c.sharedFsRoot).toBeUndefined();
    expect(c.podName.length).toBeGreaterThan(0);
  });

  it("takes the environment over the file, and the file over the default", () => {
    const h = withYaml("server:\n  port: 9100\n  host: 0.0.0.0\n  api_keys: [a, b]\nrepos:\n  max_parallel_jobs: 7\notel:\n  enabled: false\n");
    const c = loadOrchestratorConfig({ SERVICE_PORT: "9200" }, h);
    expect(c.port).toBe(9200);
    expect(c.host).toBe("0.0.0.0");
    expect(c.apiKeys).toEqual(["a", "b"]);
    expect(c.maxParallelJobs).toBe(7);
    expect(c.otelEnabled).toBe(false);
    expect(c.transport).toBe("sse");
  });

  it("reads the agent CLI's real variable names as aliases", () => {
    const c = loadOrchestratorConfig({ CLAUDE_CODE_OAUTH_TOKEN: "oauth", ANTHROPIC_BASE_URL: "http://gw.local" }, home());
    expect(c.modelOauthToken).toBe("oauth");
    expect(c.modelBaseUrl).toBe("http://gw.local");
  });

  it("reports every bad value at once, never printing a secret", () => {
    let err: unknown;
    try {
      loadOrchestratorConfig({ SERVICE_PORT: "abc", SERVICE_TRANSPORT: "carrier-pigeon", REDIS_URL: "not a url :pass@" }, home());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toContain('SERVICE_PORT (environment) = "abc"');
    expect(msg).toContain("expected one of: sse, stdio");
    expect(msg).toContain("REDIS_URL (environment) = (value hidden)");
    expect(msg).not.toContain(":pass@");
  });
});
