import { describe, expect, it } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDumbGitServer } from "../../../test/fixtures/dumb-git-server";
import { gitEnv, gitSync, makeRemote } from "../../../test/fixtures/git-remote";
import { httpErrorOf } from "../../common/http-error";
import { ensureClone } from "./clone-cache";
import { gitAuthFor } from "./credentials";
import { GitError } from "./git";
import { parseRepoUrl, repoHash } from "./url";
import { addWorktree, InvalidBaseRefError, removeWorktree } from "./worktree";

const ENSURE_CLONE = join(import.meta.dir, "../../../test/fixtures/ensure-clone.ts");
const temp = (p: string) => mkdtempSync(join(tmpdir(), `${p}-`));

const setup = (remoteOpts: Parameters<typeof makeRemote>[0] = {}) => {
  const home = temp("repos-home");
  const remote = makeRemote(remoteOpts);
  return { home, remote, env: gitEnv(home), root: join(home, "service-repos"), worktrees: join(home, "worktrees") };
};

describe("clone cache", () => {
  it("clones once into <root>/{hash}/repo, then fetches", async () => {
    const { remote, env, root } = setup();
    const repo = parseRepoUrl(remote.url);
    const first = await ensureClone(repo, { root, env });
    expect(first.action).toBe("cloned");
    expect(first.dir).toBe(join(root, repoHash(repo), "repo"));
    expect(existsSync(join(first.dir, ".git", "HEAD"))).toBe(true);

    const sha = remote.commit({ "NEW.md": "new\n" }, "second");
    const second = await ensureClone(repo, { root, env });
    expect(second.action).toBe("fetched");
    expect(gitSync(["rev-parse", "origin/main"], second.dir, env)).toBe(sha);
    // Nothing left behind but the clone and its lock.
    expect(readdirSync(first.hashDir).filter((n) => n.startsWith(".clone-"))).toEqual([]);
  });

  it("skips a fetch only when one that began after the job's submission has succeeded: a job submitted after a push sees it", async () => {
    const { remote, env, root } = setup();
    const repo = parseRepoUrl(remote.url);
    expect((await ensureClone(repo, { root, env })).action).toBe("cloned");
    const head = (dir: string) => gitSync(["rev-parse", "origin/main"], dir, env);

    // Pushed after the clone, then a job is submitted: the clone is too old, so it fetches.
    const second = remote.commit({ "TWO.md": "two\n" }, "second");
    const submitted = Date.now() - 1;
    const fetched = await ensureClone(repo, { root, env, freshAfter: submitted });
    expect(fetched.action).toBe("fetched");
    expect(head(fetched.dir)).toBe(second);
    // A sibling submitted at the same moment needs no fetch of its own; without a submission time it always fetches.
    expect((await ensureClone(repo, { root, env, freshAfter: submitted })).action).toBe("fresh");
    expect((await ensureClone(repo, { root, env })).action).toBe("fetched");

    // A push, then a job submitted after it: the earlier fetches do not count.
    const third = remote.commit({ "THREE.md": "three\n" }, "third");
    const later = await ensureClone(repo, { root, env, freshAfter: Date.now() });
    expect(later.action).toBe("fetched");
    expect(head(later.dir)).toBe(third);
  });

  it("jobs of one process waiting together share one fetch, in turn", async () => {
    const { remote, env, home, root } = setup();
    const repo = parseRepoUrl(remote.url);
    await ensureClone(repo, { root, env });
    const sha = remote.commit({ "NEW.md": "new\n" }, "second");
    const trace = join(home, "git-trace.log");
    const submitted = Date.now() - 1;
    const results = await Promise.all(Array.from({ length: 5 }, () => ensureClone(repo, { root, env: { ...env, GIT_TRACE: trace }, freshAfter: submitted })));
    expect(results.map((r) => r.action).sort()).toEqual(["fetched", "fresh", "fresh", "fresh", "fresh"]);
    expect(
      readFileSync(trace, "utf8")
        .split("\n")
        .filter((l) => /built-in: git fetch /.test(l)),
    ).toHaveLength(1);
    expect(gitSync(["rev-parse", "origin/main"], results[0]!.dir, env)).toBe(sha);
  });

  it("clones once when two processes race on the same repository", async () => {
    const { remote, home, root } = setup({ files: 300 });
    const trace = join(home, "git-trace.log");
    const spawnOne = () =>
      Bun.spawn(["bun", ENSURE_CLONE, root, remote.url], {
        env: { ...gitEnv(home), GIT_TRACE: trace },
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
      });
    const procs = [spawnOne(), spawnOne()];
    const readers = procs.map((p) => p.stdout.getReader());
    const decoder = new TextDecoder();
    const readLine = async (r: (typeof readers)[number]) => decoder.decode((await r.read()).value).trim();
    // Both are up before either starts: the race is real.
    expect(await Promise.all(readers.map(readLine))).toEqual(["ready", "ready"]);
    for (const p of procs) {
      p.stdin.write("go\n");
      await p.stdin.flush();
    }
    const rest = async (r: (typeof readers)[number]) => {
      let out = "";
      for (let c = await r.read(); !c.done; c = await r.read()) out += decoder.decode(c.value);
      return out.split("\n").find((l) => l.startsWith("action:"));
    };
    const actions = await Promise.all(readers.map(rest));
    await Promise.all(procs.map((p) => p.exited));
    expect(actions.sort()).toEqual(["action:cloned", "action:fetched"]);
    const clones = readFileSync(trace, "utf8")
      .split("\n")
      .filter((l) => /built-in: git clone /.test(l));
    expect(clones).toHaveLength(1);
  });

  it("reports a clone that fails, with the cache left clean", async () => {
    const { env, root } = setup();
    const repo = parseRepoUrl("file:///nonexistent/repo.git");
    const err = await ensureClone(repo, { root, env }).catch((e) => e);
    expect(err).toBeInstanceOf(GitError);
    expect(existsSync(join(root, repoHash(repo), "repo"))).toBe(false);
  });

  it("sends the token as a header over HTTP, and never stores it", async () => {
    const { remote, env, root } = setup();
    gitSync(["update-server-info"], remote.bare, env);
    const token = "ghp_cloneCacheSecret123";
    const header = `Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
    const server = startDumbGitServer(remote.bare, { requireAuth: header });
    try {
      const repo = parseRepoUrl(server.url);
      // Without credentials the host refuses, and git does not prompt.
      const denied = await ensureClone(repo, { root, env }).catch((e) => e);
      expect(denied).toBeInstanceOf(GitError);

      const auth = gitAuthFor(repo, { token, source: "pat", hostname: "127.0.0.1", origin: repo.origin! });
      const cloned = await ensureClone(repo, { root, env, auth, secrets: [token] });
      expect(cloned.action).toBe("cloned");
      expect(server.authorizations).toContain(header);
      const config = readFileSync(join(cloned.dir, ".git", "config"), "utf8");
      expect(config).toContain(`url = ${server.url}`);
      expect(config).not.toContain(token);
      expect(config).not.toContain(header);
    } finally {
      server.stop();
    }
  });

  it("keeps the token out of a failed clone's message", async () => {
    const { env, root } = setup();
    const token = "ghp_failingCloneSecret";
    const repo = parseRepoUrl("http://127.0.0.1:9/org/repo.git");
    const auth = gitAuthFor(repo, { token, source: "pat", hostname: "127.0.0.1", origin: "http://127.0.0.1:9/" });
    const err = (await ensureClone(repo, { root, env: { ...env, GIT_CURL_VERBOSE: "1", GIT_TRACE: "1" }, auth, secrets: [token] }).catch((e) => e)) as GitError;
    expect(err).toBeInstanceOf(GitError);
    expect(err.stderr.length).toBeGreaterThan(0);
    const basic = Buffer.from(`x-access-token:${token}`).toString("base64");
    for (const text of [err.message, err.stderr, err.command]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(basic);
    }
  });
});

describe("worktrees", () => {
  it("gives a job its own worktree on a new branch from the default branch, removed after with the branch kept", async () => {
    const { remote, env, root, worktrees } = setup({ defaultBranch: "trunk" });
    const cached = await ensureClone(parseRepoUrl(remote.url), { root, env });
    const wt = await addWorktree(cached, { jobId: "00000001-0000-4000-8000-00003f2a9c1e", root: worktrees, env });
    expect(wt).toMatchObject({
      path: join(worktrees, "00000001-0000-4000-8000-00003f2a9c1e"),
      branch: "agent/3f2a9c1e",
      base: "origin/trunk",
      baseBranch: "trunk",
    });
    expect(gitSync(["branch", "--show-current"], wt.path, env)).toBe("agent/3f2a9c1e");
    expect(existsSync(join(wt.path, "README.md"))).toBe(true);

    await removeWorktree(cached, wt.path, env);
    expect(existsSync(wt.path)).toBe(false);
    expect(gitSync(["worktree", "list"], cached.dir, env)).not.toContain(wt.path);
    expect(gitSync(["rev-parse", "--verify", "refs/heads/agent/3f2a9c1e"], cached.dir, env)).toBe(wt.baseCommit);
  });

  it("starts from base_ref: a branch, a tag or a commit; a second job whose id ends the same gets its own branch", async () => {
    const { remote, env, root, worktrees } = setup();
    const dev = remote.commit({ "dev.txt": "dev\n" }, "dev work", "dev");
    const cached = await ensureClone(parseRepoUrl(remote.url), { root, env });
    gitSync(["tag", "v1", dev], cached.dir, env);

    const onDev = await addWorktree(cached, { jobId: "1-aaaaaaaa", baseRef: "dev", root: worktrees, env });
    expect(onDev).toMatchObject({ baseCommit: dev, baseBranch: "dev", base: "origin/dev" });
    const onTag = await addWorktree(cached, { jobId: "2-aaaaaaaa", baseRef: "v1", root: worktrees, env });
    expect(onTag).toMatchObject({ baseCommit: dev, baseBranch: "main", base: "v1" });
    expect(onDev.branch).toBe("agent/aaaaaaaa");
    expect(onTag.branch).toBe("agent/2-aaaaaaaa");
    const onSha = await addWorktree(cached, { jobId: "cccccccc", baseRef: dev, root: worktrees, env });
    expect(onSha.baseCommit).toBe(dev);
  });

  it("refuses an unknown or malformed base_ref with a 400", async () => {
    const { remote, env, root, worktrees } = setup();
    const cached = await ensureClone(parseRepoUrl(remote.url), { root, env });
    for (const baseRef of ["no-such-branch", "--orphan", "a..b", "a b"]) {
      const err = await addWorktree(cached, { jobId: "dddddddd", baseRef, root: worktrees, env }).catch((e) => e);
      expect(err).toBeInstanceOf(InvalidBaseRefError);
      expect(httpErrorOf(err)).toMatchObject({ status: 400, code: "invalid_base_ref" });
    }
  });
});
