// The clone cache: one clone per repository at <root>/{hash}/repo, cloned once and fetched
// when cached, every git operation on it under a cross-process file lock in {hash}/, so two
// service processes (or pods on a shared filesystem) never clone or fetch the same repo at
// once. A clone lands in a temp directory and is renamed into place: a clone cut short
// (cancel, crash) never looks cached. Within one process the lock is handed from job to job
// in order (no polling back-off between siblings), and a job skips its fetch when a fetch of
// the same cache that began after the job was submitted has already succeeded here: that
// fetch saw everything the job could have seen.
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { withFileLock } from "../../common/file-lock";
import { log } from "../../common/logger";
import { type GitAuth, git } from "./git";
import { type RepoUrl, repoHash } from "./url";

const logger = log("repos");

/** A clone may take minutes; another process waiting for the same repo waits that long. */
const LOCK_TIMEOUT_MS = 30 * 60_000;

export interface RepoCacheOptions {
  /** SERVICE_REPOS_ROOT, or {shared root}/repos. */
  root: string;
  env: Record<string, string | undefined>;
  auth?: GitAuth;
  secrets?: readonly string[];
  signal?: AbortSignal;
  /**
   * The job's submission (ms since the epoch): a fetch of this cache by this process that began
   * after it makes a new fetch pointless. Unset: always fetch.
   */
  freshAfter?: number;
}

export interface CachedRepo {
  hash: string;
  /** <root>/{hash} */
  hashDir: string;
  /** <root>/{hash}/repo: a clone without a checkout; jobs work in worktrees of it. */
  dir: string;
}

const cachedRepo = (repo: RepoUrl, root: string): CachedRepo => {
  const hash = repoHash(repo);
  const hashDir = join(root, hash);
  return { hash, hashDir, dir: join(hashDir, "repo") };
};

/** Callers of this process waiting for a cache's lock, in order: each hands over to the next at once. */
const turns = new Map<string, Promise<unknown>>();

function inTurn<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const next = (turns.get(key) ?? Promise.resolve()).then(fn);
  const tail = next.catch(() => {});
  turns.set(key, tail);
  void tail.then(() => {
    if (turns.get(key) === tail) turns.delete(key);
  });
  return next;
}

/** Runs fn holding the repo's lock, {hash}/.lock (spec: job-orchestrator, file layout). */
export const withRepoLock = <T>(cached: CachedRepo, fn: () => Promise<T>): Promise<T> =>
  inTurn(cached.hashDir, () => withFileLock(cached.dir, fn, { timeoutMs: LOCK_TIMEOUT_MS, lockPath: join(cached.hashDir, ".lock") }));

/** When the last successful fetch (or clone) of each cache by this process began. */
const lastFetchBegan = new Map<string, number>();

const isCloned = (dir: string) => existsSync(join(dir, ".git", "HEAD"));

export type CacheAction = "cloned" | "fetched" | "fresh";

/**
 * Clones the repository into the cache, or fetches it when already there ("fresh": a fetch
 * that began after opts.freshAfter has already succeeded, so none is needed).
 */
export async function ensureClone(repo: RepoUrl, opts: RepoCacheOptions): Promise<CachedRepo & { action: CacheAction }> {
  const cached = cachedRepo(repo, opts.root);
  await mkdir(cached.hashDir, { recursive: true });
  return withRepoLock(cached, async () => {
    const run = { env: opts.env, auth: opts.auth, secrets: opts.secrets, signal: opts.signal };
    const began = Date.now();
    if (isCloned(cached.dir)) {
      const last = lastFetchBegan.get(cached.dir);
      if (opts.freshAfter !== undefined && last !== undefined && last > opts.freshAfter) {
        logger.debug(`${repo.key}: fetched after this job was submitted; not fetching again`);
        return { ...cached, action: "fresh" as const };
      }
      await git(["fetch", "--prune", "--quiet", "origin"], { ...run, cwd: cached.dir });
      lastFetchBegan.set(cached.dir, began);
      logger.debug(`fetched ${repo.key} in ${cached.dir}`);
      return { ...cached, action: "fetched" as const };
    }
    lastFetchBegan.delete(cached.dir);
    await removeLeftovers(cached.hashDir);
    const temp = join(cached.hashDir, `.clone-${randomBytes(4).toString("hex")}`);
    try {
      await git(["clone", "--no-checkout", "--quiet", "--", repo.url, temp], run);
      await rm(cached.dir, { recursive: true, force: true });
      await rename(temp, cached.dir);
    } catch (err) {
      await rm(temp, { recursive: true, force: true });
      throw err;
    }
    lastFetchBegan.set(cached.dir, began);
    logger.info(`cloned ${repo.key} into ${cached.dir}`);
    return { ...cached, action: "cloned" as const };
  });
}

async function removeLeftovers(hashDir: string): Promise<void> {
  for (const name of await readdir(hashDir).catch(() => [] as string[])) {
    if (name.startsWith(".clone-")) await rm(join(hashDir, name), { recursive: true, force: true });
  }
}
