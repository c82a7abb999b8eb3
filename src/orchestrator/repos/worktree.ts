// One worktree per job at <worktree root>/{job-id}, on a new branch (agent/<last 8 of the id>) from the
// base ref; removed after the job while its branch stays in the cached clone (a failed push
// loses nothing). Worktree changes touch the clone's metadata, so they run under its lock.
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { DomainError } from "../../common/domain-error";
import { type CachedRepo, withRepoLock } from "./clone-cache";
import { GitError, git } from "./git";

export class InvalidBaseRefError extends DomainError {
  constructor(message: string) {
    super("invalid", "invalid_base_ref", message);
    this.name = "InvalidBaseRefError";
  }
}

const REF = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*@\{)[A-Za-z0-9._/+-]+(?<![./])$/;

/** A branch, tag or commit name: no leading '-', no '..', no spaces or special characters. */
export function validateBaseRef(ref: string): string {
  if (!REF.test(ref) || ref.length > 255) throw new InvalidBaseRefError(`base_ref ${JSON.stringify(ref)} is not a valid branch, tag or commit name`);
  return ref;
}

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function assertJobId(id: string): string {
  if (!SAFE_ID.test(id)) throw new Error(`job id ${JSON.stringify(id)} cannot name a directory or branch`);
  return id;
}

export interface Worktree {
  path: string;
  branch: string;
  /** What the branch starts from (e.g. origin/main or a commit). */
  base: string;
  baseCommit: string;
  /** The branch a pull request targets: base_ref when it is a branch, else the default branch. */
  baseBranch: string;
}

export interface WorktreeOptions {
  jobId: string;
  baseRef?: string;
  /** SERVICE_WORKTREE_ROOT */
  root: string;
  env: Record<string, string | undefined>;
  secrets?: readonly string[];
}

const exists = async (repoDir: string, ref: string, env: Record<string, string | undefined>) => {
  try {
    return (await git(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { cwd: repoDir, env })).trim();
  } catch {
    return undefined;
  }
};

async function defaultBranch(repoDir: string, env: Record<string, string | undefined>): Promise<string> {
  try {
    const head = (await git(["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"], { cwd: repoDir, env })).trim();
    if (head.startsWith("origin/")) return head.slice("origin/".length);
  } catch {
    // no origin/HEAD (an empty remote when cloned, or removed): fall back to main
  }
  return "main";
}

export async function addWorktree(cached: CachedRepo, opts: WorktreeOptions): Promise<Worktree> {
  const id = assertJobId(opts.jobId);
  const path = join(opts.root, id);
  const run = { cwd: cached.dir, env: opts.env, secrets: opts.secrets };
  await mkdir(opts.root, { recursive: true });
  return withRepoLock(cached, async () => {
    const fallback = await defaultBranch(cached.dir, opts.env);
    let base: string | undefined;
    let baseCommit: string | undefined;
    let baseBranch = fallback;
    if (opts.baseRef) {
      const ref = validateBaseRef(opts.baseRef);
      for (const candidate of [`refs/remotes/origin/${ref}`, `refs/tags/${ref}`, ref]) {
        baseCommit = await exists(cached.dir, candidate, opts.env);
        if (baseCommit) {
          base = candidate === ref ? ref : candidate.replace(/^refs\/(remotes|tags)\//, "");
          if (candidate.startsWith("refs/remotes/")) baseBranch = ref;
          break;
        }
      }
      if (!base) throw new InvalidBaseRefError(`base_ref ${JSON.stringify(ref)} is not a branch, tag or commit of the repository`);
    } else {
      base = `origin/${fallback}`;
      baseCommit = await exists(cached.dir, `refs/remotes/${base}`, opts.env);
      if (!baseCommit) throw new InvalidBaseRefError(`the repository has no ${fallback} branch (and no default branch): pass base_ref`);
    }

    // A worktree left by a crashed run of this job id goes first.
    if (existsSync(path)) await dropWorktree(cached, path, opts.env);
    const branch = await freeBranch(cached.dir, id, opts.env);
    await git(["worktree", "add", "--quiet", "--no-track", "-b", branch, path, baseCommit!], run);
    return { path, branch, base, baseCommit: baseCommit!, baseBranch };
  });
}

async function freeBranch(repoDir: string, id: string, env: Record<string, string | undefined>): Promise<string> {
  // The id's last 8 characters: random in a UUIDv7 (its first 8 are the time, shared by every job
  // of the same minute), so the short name is nearly always free.
  const short = id.replaceAll("-", "").slice(-8);
  const candidates = [`agent/${short}`, `agent/${id}`, `agent/${id}-${Date.now().toString(36)}`];
  for (const b of candidates) {
    if (!(await exists(repoDir, `refs/heads/${b}`, env))) return b;
  }
  return candidates[candidates.length - 1]!;
}

/** Removes the job's worktree (the branch stays in the clone). */
export async function removeWorktree(cached: CachedRepo, path: string, env: Record<string, string | undefined>): Promise<void> {
  await withRepoLock(cached, () => dropWorktree(cached, path, env));
}

async function dropWorktree(cached: CachedRepo, path: string, env: Record<string, string | undefined>): Promise<void> {
  try {
    await git(["worktree", "remove", "--force", "--force", path], { cwd: cached.dir, env });
  } catch (err) {
    if (!(err instanceof GitError)) throw err;
    await rm(path, { recursive: true, force: true });
  }
  await git(["worktree", "prune"], { cwd: cached.dir, env });
}
