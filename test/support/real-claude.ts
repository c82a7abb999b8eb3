// The real Claude Code CLI (the pinned devDependency) pointed at the fixture Anthropic API:
// its binary, and the environment it needs to run non-interactively and offline. Found by
// experiment with 2.1.331 and 2.1.332: in `-p` mode it needs no onboarding or trust answers; as root it
// refuses `--permission-mode bypassPermissions` unless IS_SANDBOX=1.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./main-process";

/** The version package.json pins; the README names it as the one tested. */
export const REAL_CLAUDE_VERSION = "2.1.332";

const ROOT = join(import.meta.dir, "..", "..");

/** Path of the platform binary bun installed with @anthropic-ai/claude-code. */
export function realClaudeBinary(): string {
  const bin = join(ROOT, "node_modules", "@anthropic-ai", `claude-code-${process.platform}-${process.arch}`, "claude");
  if (!existsSync(bin)) throw new Error(`the real Claude Code CLI is not installed at ${bin}: run bun install`);
  return bin;
}

/** What keeps the CLI quiet and offline: no update checks, no telemetry, no side traffic. */
export const OFFLINE_ENV = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_AUTOUPDATER: "1",
  // Tests run as root here; the CLI refuses bypassPermissions as root without it.
  IS_SANDBOX: "1",
} as const;

export interface RealClaude {
  binary: string;
  /** A fresh HOME (its .claude/ is the CLI's config and transcript directory). */
  home: string;
  /** The full environment for spawning the CLI directly. */
  env: Record<string, string>;
}

export interface RealClaudeOptions {
  /** The fixture API's URL (ANTHROPIC_BASE_URL). */
  baseUrl: string;
  apiKey?: string;
  home?: string;
}

/** Binary and environment for spawning the real CLI directly against `baseUrl`. */
export function realClaude(opts: RealClaudeOptions): RealClaude {
  const home = opts.home ?? tempDir("claude-home");
  mkdirSync(join(home, ".claude"), { recursive: true });
  return {
    binary: realClaudeBinary(),
    home,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      CLAUDE_CONFIG_DIR: join(home, ".claude"),
      ANTHROPIC_BASE_URL: opts.baseUrl,
      ANTHROPIC_API_KEY: opts.apiKey ?? "sk-ant-fixture-key",
      ...OFFLINE_ENV,
    },
  };
}

/** Settings for the orchestrator process so its jobs run the real CLI against `baseUrl`
 *  (the service hands MODEL_* to the agent as ANTHROPIC_*; the rest is inherited). */
export function realClaudeServiceEnv(baseUrl: string, apiKey = "sk-ant-fixture-key"): Record<string, string> {
  return {
    SERVICE_CLAUDE_BINARY: realClaudeBinary(),
    MODEL_BASE_URL: baseUrl,
    MODEL_AUTH_TOKEN: apiKey,
    ...OFFLINE_ENV,
  };
}
