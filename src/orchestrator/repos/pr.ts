// Auto-PR (spec: States, "job finishes successfully, profile auto_pr true"): commit what the
// agent left uncommitted, push the job's branch, open the pull request with `gh pr create`,
// and read its URL from gh's stdout. A failing step is reported (stderr redacted) and the
// branch stays in the clone cache, so nothing the agent did is lost.
import { log } from "../../common/logger";
import { type GitAuth, GitError, git } from "./git";
import { redact } from "./redact";
import type { Worktree } from "./worktree";

const logger = log("auto-pr");

const GH_TIMEOUT_MS = 5 * 60_000;
const PR_URL = /https?:\/\/\S+\/pull\/\d+/g;

export interface AutoPrInput {
  worktree: Worktree;
  title: string;
  body: string;
  author: { name: string; email: string };
  env: Record<string, string | undefined>;
  auth?: GitAuth;
  /** GH_TOKEN for gh (the same credentials as the push). */
  ghToken?: string;
  secrets: readonly string[];
  signal?: AbortSignal;
}

export interface AutoPrResult {
  /** A commit was made from uncommitted changes. */
  committed: boolean;
  pushed: boolean;
  pr_url?: string;
  /** Why the branch was not pushed or the PR not opened (redacted). */
  error?: string;
  /** The branch has no commits beyond its base: nothing to push. */
  noChanges?: boolean;
}

export async function openPullRequest(input: AutoPrInput): Promise<AutoPrResult> {
  const { worktree: wt } = input;
  const secrets = [...input.secrets, ...(input.ghToken ? [input.ghToken] : [])];
  const run = { cwd: wt.path, env: input.env, secrets, signal: input.signal };
  const identity = ["-c", `user.name=${input.author.name}`, "-c", `user.email=${input.author.email}`];
  let committed = false;
  try {
    await git(["add", "--all"], run);
    const status = await git(["status", "--porcelain"], run);
    if (status.trim() !== "") {
      await git([...identity, "commit", "--quiet", "--no-verify", "-m", input.title, "-m", input.body], run);
      committed = true;
    }
    const ahead = Number((await git(["rev-list", "--count", `${wt.baseCommit}..HEAD`], run)).trim());
    if (ahead === 0) return { committed, pushed: false, noChanges: true };
  } catch (err) {
    return { committed, pushed: false, error: `auto-PR: could not commit the agent's changes: ${(err as Error).message}` };
  }

  try {
    await git(["push", "--quiet", "origin", `HEAD:refs/heads/${wt.branch}`], { ...run, auth: input.auth });
  } catch (err) {
    const message = err instanceof GitError ? err.message : String(err);
    logger.warn(`push of ${wt.branch} failed: ${message}`);
    return { committed, pushed: false, error: `auto-PR: push of ${wt.branch} failed (the branch is kept in the clone cache): ${message}` };
  }

  const pr = await ghPrCreate(input, secrets);
  return { committed, pushed: true, ...pr };
}

async function ghPrCreate(input: AutoPrInput, secrets: readonly string[]): Promise<{ pr_url?: string; error?: string }> {
  const { worktree: wt } = input;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.env)) if (v !== undefined) env[k] = v;
  if (input.ghToken) env.GH_TOKEN = input.ghToken;
  env.GH_PROMPT_DISABLED = "1";
  env.GH_NO_UPDATE_NOTIFIER = "1";
  env.NO_COLOR = "1";
  // --flag=value: a title starting with '-' must not read as a flag.
  const args = ["pr", "create", `--title=${input.title}`, `--body=${input.body}`, "--head", wt.branch, "--base", wt.baseBranch];
  let stdout: string;
  let stderr: string;
  let code: number;
  try {
    const proc = Bun.spawn(["gh", ...args], {
      cwd: wt.path,
      env,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      timeout: GH_TIMEOUT_MS,
      signal: input.signal,
    });
    [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  } catch (err) {
    return { error: `auto-PR: the branch ${wt.branch} was pushed but gh could not run: ${(err as Error).message}; install the GitHub CLI (gh)` };
  }
  if (code !== 0) {
    const why = redact(stderr.trim() || stdout.trim(), secrets)
      .split("\n")
      .slice(-5)
      .join(" | ");
    logger.warn(`gh pr create for ${wt.branch} failed (exit ${code}): ${why}`);
    return { error: `auto-PR: the branch ${wt.branch} was pushed but gh pr create failed (exit ${code}): ${why}` };
  }
  const url = stdout.match(PR_URL)?.pop();
  if (!url) return { error: `auto-PR: gh pr create printed no pull request URL: ${redact(stdout.trim(), secrets).slice(0, 300)}` };
  return { pr_url: url };
}
