import { afterAll, describe, expect, it } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gitHead } from "./git-head";

const root = mkdtempSync(join(tmpdir(), "git-head-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]) => {
  const r = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(r.stderr.toString());
  return r.stdout.toString().trim();
};

describe("gitHead", () => {
  const repo = join(root, "repo");
  mkdirSync(repo);
  git(repo, "init", "-q", "-b", "main");
  writeFileSync(join(repo, "a"), "1\n");
  git(repo, "add", "a");
  git(repo, "commit", "-q", "-m", "one");

  it("reads the branch's commit from a loose ref, then from packed-refs, as git does", async () => {
    expect(await gitHead(repo)).toBe(git(repo, "rev-parse", "HEAD"));
    writeFileSync(join(repo, "a"), "2\n");
    git(repo, "commit", "-q", "-am", "two");
    git(repo, "pack-refs", "--all");
    expect(await gitHead(repo)).toBe(git(repo, "rev-parse", "HEAD"));
  });

  it("reads a detached HEAD", async () => {
    const first = git(repo, "rev-list", "--max-parents=0", "HEAD");
    git(repo, "checkout", "-q", "--detach", first);
    expect(await gitHead(repo)).toBe(first);
    git(repo, "checkout", "-q", "main");
  });

  it("asks git when .git is a file (a worktree), and says undefined for no checkout", async () => {
    const wt = join(root, "wt");
    git(repo, "worktree", "add", "-q", "--detach", wt);
    expect(await gitHead(wt)).toBe(git(wt, "rev-parse", "HEAD"));
    const plain = join(root, "plain");
    mkdirSync(plain);
    expect(await gitHead(plain)).toBeUndefined();
    expect(await gitHead(join(root, "missing"))).toBeUndefined();
  });
});
