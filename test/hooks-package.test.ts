// The hooks-package contract (issue 16 part 4) against the fixture package under
// test/fixtures/hooks-package, with the orchestrator as a real process in agent mode: the
// package is cloned once to <CLONE_ROOT>/<dir-from-url>, its init runs at start with
// HOOKS_PROFILE and --bundle <bundle clone>, again before every completion with the agent's
// mcp_categories (the MCP whitelist render), and after /admin/sync; a synced hub is taken up
// without a restart (package copied again, runners re-run, system prompt reloaded), whether the
// service synced it (/admin/sync) or `service-cli hooks sync` did behind its back; and a restart
// reuses the clone rather than cloning again.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { cpSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dirFromUrl } from "../src/orchestrator/profiles/load";
import { gitEnv, gitSync } from "./fixtures/git-remote";
import { AGENT, FAKE_AGENT_ENV, FAKE_CLAUDE, flagOf, hubFiles, KEY, makeHub, recordedStarts } from "./support/agent-mode";
import { runCompiled } from "./support/cli";
import { type MainProcess, REPO, startMain, tempDir } from "./support/main-process";

let main: MainProcess;
let home: string;
let hub: string;
const record = () => join(home, "hooks-record.jsonl");
const inits = (): Array<{ argv: string[]; cwd: string; profile: string }> =>
  existsSync(record())
    ? readFileSync(record(), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];

function repoOf(dir: string, files: Record<string, string> | undefined, from?: string): string {
  mkdirSync(dir, { recursive: true });
  if (from) cpSync(from, dir, { recursive: true });
  for (const [rel, text] of Object.entries(files ?? {})) writeFileSync(join(dir, rel), text);
  const env = gitEnv(home);
  gitSync(["init", "-q", "-b", "main"], dir, env);
  gitSync(["add", "-A"], dir, env);
  gitSync(["commit", "-q", "-m", "init"], dir, env);
  return `file://${dir}`;
}

const chat = (text: string) =>
  fetch(`${main.orchestratorUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-conversation-id": crypto.randomUUID() },
    body: JSON.stringify({ model: AGENT, messages: [{ role: "user", content: text }] }),
  });

let hooksUrl: string;
let bundleUrl: string;
let hubUrl: string;
let mainEnv: Record<string, string>;
const clones = () => join(home, "clones");
/** Each run of the hub's runners, one line each (the runner says which version of the hub it is). */
const runs = () => (existsSync(join(home, "runs.log")) ? readFileSync(join(home, "runs.log"), "utf8").split("\n").filter(Boolean) : []);
const runner = (version: string) => `echo "${version}" >> ${join(home, "runs.log")}\n`;
const head = (dir: string) => gitSync(["rev-parse", "HEAD"], dir, gitEnv(home)).trim();

beforeAll(async () => {
  home = tempDir("hooks-pkg-home");
  // The package as a team would host it: a bare repository (pushed to from a working copy).
  repoOf(join(home, "src", "team-hooks"), undefined, join(REPO, "test", "fixtures", "hooks-package"));
  gitSync(["clone", "-q", "--bare", join(home, "src", "team-hooks"), join(home, "src", "team-hooks.git")], home, gitEnv(home));
  hooksUrl = `file://${join(home, "src", "team-hooks.git")}`;
  bundleUrl = repoOf(join(home, "src", "team-bundle"), { "README.md": "bundle\n" });
  hub = join(home, "src", "hub");
  hubUrl = await makeHub(hub, hubFiles({ [`agents/${AGENT}/package/runners/01-first.sh`]: runner("v1") }));
  mainEnv = {
    HOME: home,
    SERVICE_API_KEYS: KEY,
    SERVICE_OTEL_ENABLED: "false",
    SERVICE_HUB_URL: hubUrl,
    HUB_AGENT: AGENT,
    SERVICE_CLAUDE_BINARY: FAKE_CLAUDE,
    FAKE_CLAUDE_RECORD: join(home, "claude-record.jsonl"),
    SERVICE_AGENT_ENV: FAKE_AGENT_ENV,
    SERVICE_CLONE_ROOT: clones(),
    SERVICE_PACKAGE_DIR: join(home, "package"),
    SERVICE_HOOKS_URL: hooksUrl,
    SERVICE_HOOKS_BUNDLE_URL: bundleUrl,
    HOOKS_PROFILE: "review",
    HOOKS_RECORD: record(),
  };
  main = await startMain(["--only", "orchestrator"], mainEnv, { expect: ["orchestrator"], timeoutMs: 30_000 });
}, 60_000);

afterAll(async () => {
  await main?.stop();
});

describe("the hooks package", () => {
  it("is cloned to <CLONE_ROOT>/<dir-from-url> and its init runs at start with HOOKS_PROFILE and --bundle", () => {
    const dir = join(clones(), dirFromUrl(hooksUrl));
    expect(existsSync(join(dir, "bin", "init"))).toBe(true);
    const first = inits()[0]!;
    expect(first.cwd).toBe(dir);
    expect(first.profile).toBe("review");
    expect(first.argv).toEqual(["--profile", "review", "--bundle", join(clones(), dirFromUrl(bundleUrl))]);
  });

  it("renders the MCP whitelist from agent.yml's mcp_categories before every completion", async () => {
    const before = inits().length;
    for (const text of ["one", "two"]) expect((await chat(text)).status).toBe(200);
    const turns = inits().slice(before);
    expect(turns).toHaveLength(2);
    for (const t of turns) {
      expect(flagOf(t.argv, "--mcp-categories")).toBe("knowledge,deploy");
      expect(flagOf(t.argv, "--target")).toBe(join(home, "package"));
    }
    expect(JSON.parse(readFileSync(join(home, "package", ".mcp-whitelist.json"), "utf8"))).toEqual({ mcp_categories: "knowledge,deploy" });
  });

  it("after /admin/sync re-runs init and takes up the hub's new package without a restart", async () => {
    const files = hubFiles();
    const claudeMd = Object.keys(files).find((k) => k.endsWith("package/CLAUDE.md"))!;
    writeFileSync(join(hub, claudeMd), "You are the deploy helper, version two.\n");
    writeFileSync(join(hub, "agents", AGENT, "package", "runners", "01-first.sh"), runner("v2"));
    gitSync(["commit", "-q", "-am", "v2"], hub, gitEnv(home));
    expect(runs()).toEqual(["v1"]);
    const before = inits().length;
    const res = await fetch(`${main.orchestratorUrl}/admin/sync`, { method: "POST", headers: { authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    const results = body.results ?? body;
    expect(results.find((r: any) => r.target === "agentihub")).toMatchObject({ status: "synced" });
    expect(inits().length).toBeGreaterThan(before);
    expect(readFileSync(join(home, "package", "CLAUDE.md"), "utf8")).toContain("version two");
    // The runners ran again, from the hub's new package.
    expect(runs()).toEqual(["v1", "v2"]);
    expect((await chat("three")).status).toBe(200);
    const last = (await recordedStarts(join(home, "claude-record.jsonl"))).at(-1)!;
    expect(flagOf(last.argv, "--append-system-prompt")).toContain("version two");
  });

  it("takes up a hub that `service-cli hooks sync` moved, at the next turn, without a restart", async () => {
    writeFileSync(join(hub, "agents", AGENT, "package", "CLAUDE.md"), "You are the deploy helper, version three.\n");
    writeFileSync(join(hub, "agents", AGENT, "package", "runners", "01-first.sh"), runner("v3"));
    gitSync(["commit", "-q", "-am", "v3"], hub, gitEnv(home));
    const cli = await runCompiled("service-cli", ["hooks", "sync", "--target", "agentihub", "--json"], {
      env: { HOME: home, SERVICE_CLONE_ROOT: clones(), SERVICE_HUB_URL: hubUrl, HUB_AGENT: AGENT, SERVICE_ALLOW_LOCAL_REPOS: "1" },
    });
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout).results).toEqual([expect.objectContaining({ target: "agentihub", status: "synced" })]);
    // The service was not told; nothing ran yet.
    expect(runs()).toEqual(["v1", "v2"]);
    expect((await chat("four")).status).toBe(200);
    expect(runs()).toEqual(["v1", "v2", "v3"]);
    const last = (await recordedStarts(join(home, "claude-record.jsonl"))).at(-1)!;
    expect(flagOf(last.argv, "--append-system-prompt")).toContain("version three");
    // Once taken up, the next turn does not reload again.
    expect((await chat("five")).status).toBe(200);
    expect(runs()).toEqual(["v1", "v2", "v3"]);
  }, 60_000);

  it("is cloned once: a restart reuses the clone (same directory, same commit) and runs init again", async () => {
    const dir = join(clones(), dirFromUrl(hooksUrl));
    const commit = head(dir);
    const inode = statSync(dir).ino;
    writeFileSync(join(dir, "left-by-the-first-start"), "x\n"); // a fresh clone would not have it
    // The package moves on upstream: a restart must not pick that up (only /admin/sync does).
    const src = join(home, "src", "team-hooks");
    writeFileSync(join(src, "CHANGELOG"), "upstream moved\n");
    gitSync(["add", "-A"], src, gitEnv(home));
    gitSync(["commit", "-q", "-m", "moved"], src, gitEnv(home));
    gitSync(["push", "-q", join(home, "src", "team-hooks.git"), "main"], src, gitEnv(home));
    expect(head(join(home, "src", "team-hooks.git"))).not.toBe(commit);

    await main.stop();
    const before = inits().length;
    main = await startMain(["--only", "orchestrator"], mainEnv, { expect: ["orchestrator"], timeoutMs: 30_000 });
    expect(statSync(dir).ino).toBe(inode);
    expect(head(dir)).toBe(commit);
    expect(existsSync(join(dir, "left-by-the-first-start"))).toBe(true);
    expect(existsSync(join(dir, "CHANGELOG"))).toBe(false);
    const again = inits().slice(before);
    expect(again[0]).toMatchObject({ cwd: dir, profile: "review", argv: ["--profile", "review", "--bundle", join(clones(), dirFromUrl(bundleUrl))] });
  }, 60_000);
});
