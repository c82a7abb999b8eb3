// POST /admin/sync's work against real git: local bare repositories as the remotes.
import { afterEach, describe, expect, it } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadOrchestratorConfig } from "../config";
import { createCompanionSync } from "./companions";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function git(args: string[], cwd?: string): Promise<string> {
  const proc = Bun.spawn(["git", ...args], {
    cwd,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" },
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`git ${args.join(" ")}: ${err}`);
  return out.trim();
}

/** A bare repository `name`.git with one commit on main holding README.md = `content`; returns a push function. */
async function remote(root: string, name: string, content: string) {
  const bare = join(root, `${name}.git`);
  const work = join(root, `${name}-work`);
  await git(["init", "--quiet", "--bare", "--initial-branch=main", bare]);
  await git(["init", "--quiet", "--initial-branch=main", work]);
  const commit = async (text: string, branch = "main") => {
    await git(["checkout", "--quiet", "-B", branch], work);
    writeFileSync(join(work, "README.md"), text);
    await git(["add", "README.md"], work);
    await git(["commit", "--quiet", "-m", text], work);
    await git(["push", "--quiet", bare, `${branch}:${branch}`], work);
  };
  await commit(content);
  return { url: `file://${bare}`, commit };
}

async function setup(env: Record<string, string> = {}) {
  const root = await mkdtemp(join(tmpdir(), "companions-"));
  dirs.push(root);
  const hooks = await remote(root, "agentihooks", "hooks v1");
  const hub = await remote(root, "agentihub", "hub v1");
  const cloneRoot = join(root, "clones");
  const config = loadOrchestratorConfig({ SERVICE_HOOKS_URL: hooks.url, SERVICE_HUB_URL: hub.url, SERVICE_CLONE_ROOT: cloneRoot, ...env }, join(root, "home"));
  return { root, hooks, hub, cloneRoot, sync: createCompanionSync(config) };
}

describe("companion repo sync", () => {
  it("clones each configured repo to <clone root>/<dir-from-url> and skips the rest", async () => {
    const { sync, cloneRoot } = await setup();
    const results = await sync.sync("all");
    expect(results.map((r) => [r.target, r.status])).toEqual([
      ["agentihooks", "synced"],
      ["bundle", "skipped"],
      ["agentihub", "synced"],
    ]);
    expect(results[1]!.detail).toContain("SERVICE_HOOKS_BUNDLE_URL");
    expect(readFileSync(join(cloneRoot, "agentihooks", "README.md"), "utf8")).toBe("hooks v1");
    expect(readFileSync(join(cloneRoot, "agentihub", "README.md"), "utf8")).toBe("hub v1");
  });

  it("fetches and resets an existing clone to the remote's latest commit", async () => {
    const { sync, cloneRoot, hub } = await setup();
    await sync.sync("agentihub");
    await hub.commit("hub v2");
    const [result] = await sync.sync("agentihub");
    expect(result).toMatchObject({ target: "agentihub", status: "synced" });
    expect(result!.detail).toContain("→");
    expect(readFileSync(join(cloneRoot, "agentihub", "README.md"), "utf8")).toBe("hub v2");
    expect((await sync.sync("agentihub"))[0]!.detail).toContain("is current");
  });

  it("checks out SERVICE_HOOKS_BRANCH", async () => {
    const { root } = await setup();
    const hooks = await remote(join(root), "hooks-branchy", "main text");
    await hooks.commit("release text", "release");
    const config = loadOrchestratorConfig(
      { SERVICE_HOOKS_URL: hooks.url, SERVICE_HOOKS_BRANCH: "release", SERVICE_CLONE_ROOT: join(root, "c2") },
      join(root, "home"),
    );
    const sync = createCompanionSync(config);
    expect((await sync.sync("agentihooks"))[0]!.status).toBe("synced");
    expect(readFileSync(join(root, "c2", "hooks-branchy", "README.md"), "utf8")).toBe("release text");
    await hooks.commit("release v2", "release");
    await sync.sync("agentihooks");
    expect(readFileSync(join(root, "c2", "hooks-branchy", "README.md"), "utf8")).toBe("release v2");
  });

  it("uses SERVICE_HOOKS_PATH as-is (skipped, no clone)", async () => {
    const { sync } = await setup({ SERVICE_HOOKS_PATH: "/opt/hooks" });
    const [result] = await sync.sync("agentihooks");
    expect(result).toMatchObject({ status: "skipped" });
    expect(result!.detail).toContain("SERVICE_HOOKS_PATH");
  });

  it("reports a failed target with git's reason and leaves no half-made directory, the others still sync", async () => {
    const { root, cloneRoot } = await setup();
    const config = loadOrchestratorConfig(
      { SERVICE_HOOKS_URL: `file://${join(root, "missing.git")}`, SERVICE_HUB_URL: `file://${join(root, "agentihub.git")}`, SERVICE_CLONE_ROOT: cloneRoot },
      join(root, "home"),
    );
    const results = await createCompanionSync(config).sync("all");
    expect(results[0]).toMatchObject({ target: "agentihooks", status: "failed" });
    expect(results[0]!.detail).toContain("SERVICE_HOOKS_URL");
    expect(results[0]!.detail).toContain("git clone failed");
    expect(existsSync(join(cloneRoot, "missing"))).toBe(false);
    expect(results[2]).toMatchObject({ target: "agentihub", status: "synced" });
  });
});
