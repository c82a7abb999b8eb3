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
});
