// Repositories: what the job service validates at submission, and what executeJob uses.
export { ensureClone, cachedRepo, type CachedRepo } from "./clone-cache";
export { gitAuthFor, resolveGitCredentials, GitCredentialsError, type GitCredentials } from "./credentials";
export { GitError } from "./git";
export { openPullRequest, type AutoPrResult } from "./pr";
export { configSecrets, redact } from "./redact";
export { InvalidRepoUrlError, parseRepoUrl, repoHash, type RepoUrl } from "./url";
export { addWorktree, removeWorktree, InvalidBaseRefError, validateBaseRef, type Worktree } from "./worktree";
