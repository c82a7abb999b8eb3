// The companion repositories (spec: job-orchestrator, Configuration): the hooks package
// (SERVICE_HOOKS_URL or SERVICE_HOOKS_PATH, SERVICE_HOOKS_BRANCH), its bundle
// (SERVICE_HOOKS_BUNDLE_URL) and the agent hub (SERVICE_HUB_URL). Each configured one is
// cloned to <SERVICE_CLONE_ROOT, else SERVICE_SHARED_FS_ROOT, else ~/.service>/<dir-from-url>
// (where profiles/load.ts looks for the hooks package's profiles), or fetched and reset to its
// remote ref when already there. POST /admin/sync runs this.
import { existsSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { withFileLock } from "../../common/file-lock";
import type { OrchestratorConfig } from "../config";
import { dirFromUrl } from "../profiles/load";
import { gitAuthFor, gitOrigin } from "./credentials";
import { type GitAuth, gitEnv } from "./git";
import { parseRepoUrl } from "./url";

export const SYNC_TARGETS = ["agentihooks", "bundle", "agentihub"] as const;
export type SyncTarget = (typeof SYNC_TARGETS)[number];

export interface SyncResult {
  target: SyncTarget;
  status: "synced" | "skipped" | "failed";
  detail: string;
}

type CompanionConfig = Pick<
  OrchestratorConfig,
  | "hooksUrl"
  | "hooksPath"
  | "hooksBranch"
  | "hooksBundleUrl"
  | "hubUrl"
  | "cloneRoot"
  | "sharedFsRoot"
  | "stateDir"
  | "githostToken"
  | "githostApiUrl"
  | "githostUrl"
>;

interface Source {
  url: string;
  branch?: string;
  /** The setting that names it, for messages. */
  setting: string;
}

const GIT_TIMEOUT_MS = 5 * 60_000;

export function companionParent(config: CompanionConfig): string {
  return config.cloneRoot || config.sharedFsRoot || config.stateDir;
}

function sourceOf(config: CompanionConfig, target: SyncTarget): Source | { skip: string } {
  switch (target) {
    case "agentihooks":
      if (config.hooksPath) return { skip: `SERVICE_HOOKS_PATH=${config.hooksPath} is used as-is (no clone)` };
      if (!config.hooksUrl) return { skip: "SERVICE_HOOKS_URL is not set" };
      return { url: config.hooksUrl, branch: config.hooksBranch || undefined, setting: "SERVICE_HOOKS_URL" };
    case "bundle":
      if (!config.hooksBundleUrl) return { skip: "SERVICE_HOOKS_BUNDLE_URL is not set" };
      return { url: config.hooksBundleUrl, setting: "SERVICE_HOOKS_BUNDLE_URL" };
    case "agentihub":
      if (!config.hubUrl) return { skip: "SERVICE_HUB_URL is not set" };
      return { url: config.hubUrl, setting: "SERVICE_HUB_URL" };
  }
}

export function createCompanionSync(config: CompanionConfig) {
  return {
    /** One result per target; "all" syncs each configured one in turn. */
    async sync(target: SyncTarget | "all"): Promise<SyncResult[]> {
      const targets = target === "all" ? SYNC_TARGETS : [target];
      const results: SyncResult[] = [];
      for (const t of targets) results.push(await syncOne(config, t));
      return results;
    },
  };
}
export type CompanionSync = ReturnType<typeof createCompanionSync>;

async function syncOne(config: CompanionConfig, target: SyncTarget): Promise<SyncResult> {
  const source = sourceOf(config, target);
  if ("skip" in source) return { target, status: "skipped", detail: source.skip };
  const dir = join(companionParent(config), dirFromUrl(source.url));
  const git = gitRunner(companionAuth(config, source.url), config.githostToken);
  try {
    await mkdir(dirname(dir), { recursive: true });
    // Two pods on one shared filesystem never clone into the same directory at once.
    const detail = await withFileLock(dir, async () => {
      if (existsSync(join(dir, ".git"))) {
        const before = await git(["rev-parse", "--short", "HEAD"], dir).catch(() => "none");
        await git(["remote", "set-url", "origin", source.url], dir);
        await git(["fetch", "--prune", "origin", source.branch ?? "HEAD"], dir);
        await git(["reset", "--hard", "--quiet", "FETCH_HEAD"], dir);
        const after = await git(["rev-parse", "--short", "HEAD"], dir);
        return before === after ? `${dir} is current at ${after}` : `${dir} updated ${before} → ${after}`;
      }
      // Clone beside the target and rename, so a failed clone leaves no half-made directory.
      const temp = `${dir}.clone-${process.pid}-${Date.now()}`;
      try {
        await git(["clone", "--quiet", ...(source.branch ? ["--branch", source.branch] : []), "--", source.url, temp]);
        await rm(dir, { recursive: true, force: true });
        await rename(temp, dir);
      } finally {
        await rm(temp, { recursive: true, force: true });
      }
      return `cloned to ${dir} at ${await git(["rev-parse", "--short", "HEAD"], dir)}`;
    });
    return { target, status: "synced", detail };
  } catch (err) {
    return { target, status: "failed", detail: `${source.setting}: ${(err as Error).message}` };
  }
}

/**
 * GITHOST_TOKEN for a companion URL under the same rule as a job's clone (repos/credentials.ts):
 * only over https, only to the git host of GITHOST_API_URL on its port.
 */
function companionAuth(config: Pick<CompanionConfig, "githostToken" | "githostApiUrl" | "githostUrl">, url: string): GitAuth | undefined {
  if (!config.githostToken) return undefined;
  let repo;
  try {
    repo = parseRepoUrl(url);
  } catch {
    return undefined;
  }
  const origin = gitOrigin(config);
  const creds = { token: config.githostToken, source: "pat" as const, hostname: new URL(origin).hostname, origin };
  return gitAuthFor(repo, creds);
}

/**
 * Runs git without a prompt. The token goes in as an HTTP header scoped to its origin
 * (http.<origin>.extraHeader) through git's GIT_CONFIG_* environment: never on the command
 * line, never in a stored remote URL.
 */
function gitRunner(auth: GitAuth | undefined, token: string | undefined) {
  const env = gitEnv({ ...process.env, GIT_ASKPASS: "true" }, auth);
  return async (args: string[], cwd?: string): Promise<string> => {
    const proc = Bun.spawn(["git", ...args], { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: GIT_TIMEOUT_MS });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) {
      const message = (err.trim() || out.trim() || `exit ${code}`).split("\n").slice(-3).join(" ");
      throw new Error(`git ${args[0]} failed: ${token ? message.replaceAll(token, "****") : message}`);
    }
    return out.trim();
  };
}
