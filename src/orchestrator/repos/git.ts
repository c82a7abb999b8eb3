// Runs git for the clone cache, worktrees and auto-PR. Never prompts (a private repository
// without credentials fails instead of hanging), carries an auth header only through the
// environment (GIT_CONFIG_* — never in argv, a URL or a config file), and redacts stderr
// before it goes anywhere.
import { log } from "../../common/logger";
import { redact } from "./redact";

const logger = log("git");

const GIT_TIMEOUT_MS = 30 * 60_000;

/** An HTTP auth header for one origin (scheme://host[:port]/). */
export interface GitAuth {
  origin: string;
  header: string;
}

export interface GitRunOptions {
  cwd?: string;
  /** The inherited environment (PATH, HOME, GIT_TRACE, …). */
  env: Record<string, string | undefined>;
  auth?: GitAuth;
  /** Redacted from stderr and error messages. */
  secrets?: readonly string[];
  signal?: AbortSignal;
  timeoutMs?: number;
}

export class GitError extends Error {
  readonly code = "git_failed";
  constructor(
    readonly command: string,
    readonly exitCode: number | null,
    /** Redacted. */
    readonly stderr: string,
  ) {
    super(`git ${command} failed${exitCode === null ? "" : ` (exit ${exitCode})`}: ${stderr.trim().split("\n").slice(-5).join(" | ") || "no output"}`);
    this.name = "GitError";
  }
}

export function gitEnv(base: Record<string, string | undefined>, auth?: GitAuth): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  env.GIT_TERMINAL_PROMPT = "0";
  env.GCM_INTERACTIVE = "never";
  env.GIT_SSH_COMMAND ??= "ssh -o BatchMode=yes";
  if (auth) {
    // Same effect as `git -c http.<origin>.extraHeader=…`, without putting the token in argv (ps).
    const n = Number(env.GIT_CONFIG_COUNT ?? 0) || 0;
    env.GIT_CONFIG_COUNT = String(n + 1);
    env[`GIT_CONFIG_KEY_${n}`] = `http.${auth.origin}.extraHeader`;
    env[`GIT_CONFIG_VALUE_${n}`] = auth.header;
  }
  return env;
}

export async function git(args: string[], opts: GitRunOptions): Promise<string> {
  const secrets = [...(opts.secrets ?? []), ...(opts.auth ? [opts.auth.header] : [])];
  const command = redact(args.join(" "), secrets);
  const proc = Bun.spawn(["git", ...args], {
    cwd: opts.cwd,
    env: gitEnv(opts.env, opts.auth),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: opts.timeoutMs ?? GIT_TIMEOUT_MS,
    signal: opts.signal,
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) {
    const clean = redact(stderr, secrets);
    logger.debug(`git ${command} → ${code}: ${clean.trim()}`);
    throw new GitError(command, proc.signalCode ? null : code, opts.signal?.aborted ? `cancelled\n${clean}` : clean);
  }
  return stdout;
}
