import { describe, expect, it } from "bun:test";
import { type AgentEnvConfig, buildAgentEnv } from "./env";

// Optional settings are typed as their parsed value; unset means undefined at run time.
const none = undefined as unknown as string;

const config = (c: Partial<AgentEnvConfig> = {}): AgentEnvConfig => ({
  modelOauthToken: none,
  modelAuthToken: none,
  modelBaseUrl: none,
  claudeHomeDir: "/home/agent",
  home: "/home/agent",
  claudeConfigDir: none,
  agentEnv: [],
  ...c,
});

describe("buildAgentEnv (spec: Authentication, job environment)", () => {
  it("with the OAuth token, removes the static key and the custom endpoint, even when inherited", () => {
    const env = buildAgentEnv({
      base: {
        PATH: "/bin",
        ANTHROPIC_AUTH_TOKEN: "inherited-key",
        ANTHROPIC_BASE_URL: "http://gw",
        ANTHROPIC_API_KEY: "sk-inherited",
        MODEL_BASE_URL: "http://gw2",
      },
      config: config({ modelOauthToken: "oauth-token", modelAuthToken: "static-key", modelBaseUrl: "http://gateway.local" }),
    });
    expect(env.CLAUDE_CODE_OAUTH_TOKEN).toBe("oauth-token");
    for (const k of ["ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "MODEL_BASE_URL", "MODEL_AUTH_TOKEN"]) expect(env[k]).toBeUndefined();
    expect(env.PATH).toBe("/bin");
  });

  it("without it, hands the static key and endpoint from config under the CLI's names", () => {
    const env = buildAgentEnv({ base: { ANTHROPIC_API_KEY: "sk-x" }, config: config({ modelAuthToken: "static-key", modelBaseUrl: "http://gateway.local" }) });
    expect(env).toMatchObject({ ANTHROPIC_AUTH_TOKEN: "static-key", ANTHROPIC_BASE_URL: "http://gateway.local", ANTHROPIC_API_KEY: "sk-x" });
    expect(env.CLAUDE_CODE_OAUTH_TOKEN).toBeUndefined();
  });

  it("keeps the service's own secrets from the agent", () => {
    const env = buildAgentEnv({
      base: {
        SERVICE_API_KEYS: "k1",
        GITHOST_TOKEN: "ghp_x",
        REDIS_URL: "redis://:pw@h",
        TRACING_SECRET_KEY: "sk-lf",
        KB_ROUTER_TOKEN: "t",
        LLM_API_KEY: "l",
        LANG: "C",
      },
      config: config(),
    });
    expect(Object.keys(env).sort()).toEqual(["HOME", "LANG"]);
  });

  it("sets HOME to the agent home and applies extra variables", () => {
    const env = buildAgentEnv({
      base: { HOME: "/root" },
      config: config({ claudeConfigDir: "/cfg" }),
      extra: { OTEL_LOGS_EXPORTER: "otlp", ANTHROPIC_AUTH_TOKEN: "sneaky" },
    });
    expect(env).toMatchObject({ HOME: "/home/agent", CLAUDE_CONFIG_DIR: "/cfg", OTEL_LOGS_EXPORTER: "otlp" });
    const oauth = buildAgentEnv({ base: {}, config: config({ modelOauthToken: "o" }), extra: { ANTHROPIC_AUTH_TOKEN: "sneaky" } });
    expect(oauth.ANTHROPIC_AUTH_TOKEN).toBeUndefined();
  });

  it("hands on only its allowlist of the service's environment, plus the names SERVICE_AGENT_ENV adds", () => {
    const base = {
      PATH: "/bin",
      TERM: "xterm",
      TMPDIR: "/tmp/x",
      LANG: "C.UTF-8",
      LC_ALL: "C.UTF-8",
      IS_SANDBOX: "1",
      ANTHROPIC_API_KEY: "sk-ant",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      AWS_SECRET_ACCESS_KEY: "aws",
      OPENAI_API_KEY: "oai",
      PGPASSWORD: "pg",
      MYAPP_DEBUG: "1",
      MYAPP_MODE: "x",
      SOME_TOOL_HOME: "/opt/tool",
    };
    const plain = buildAgentEnv({ base, config: config() });
    expect(Object.keys(plain).sort()).toEqual(
      ["ANTHROPIC_API_KEY", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "HOME", "IS_SANDBOX", "LANG", "LC_ALL", "PATH", "TERM", "TMPDIR"].sort(),
    );
    const added = buildAgentEnv({ base, config: config({ agentEnv: ["MYAPP_*", "SOME_TOOL_HOME", "KB_ROUTER_TOKEN"] }) });
    expect(added).toMatchObject({ MYAPP_DEBUG: "1", MYAPP_MODE: "x", SOME_TOOL_HOME: "/opt/tool" });
    expect(added.AWS_SECRET_ACCESS_KEY).toBeUndefined();
    // A secret of the service never passes, even named.
    expect(buildAgentEnv({ base: { KB_ROUTER_TOKEN: "t" }, config: config({ agentEnv: ["KB_ROUTER_TOKEN", "KB_*"] }) }).KB_ROUTER_TOKEN).toBeUndefined();
  });
});
