// Agent mode at start-up: the hub (a local git repository made here, cloned over file://, or a
// directory used as-is), agent.yml, the package copy, its validation, runners/ and the cached
// system prompt; a broken package stops start-up with a message naming the file.
import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadAgentMode } from "../src/orchestrator/agent-mode/load";
import { loadOrchestratorConfig } from "../src/orchestrator/config";
import { AGENT, hubFiles, makeHub, tempHome } from "./support/agent-mode";
import { runMain } from "./support/main-process";

let t: Awaited<ReturnType<typeof tempHome>>;
beforeEach(async () => {
  t = await tempHome("agent-package-");
});
afterEach(() => t.cleanup());

const configFor = (env: Record<string, string>) =>
  loadOrchestratorConfig({ SERVICE_CLONE_ROOT: join(t.home, "clones"), SERVICE_PACKAGE_DIR: join(t.home, "package"), ...env }, t.home);

async function load(files = hubFiles(), env: Record<string, string> = {}) {
  const hub = join(t.home, "hub");
  const url = await makeHub(hub, files);
  return loadAgentMode(configFor({ SERVICE_HUB_URL: url, HUB_AGENT: AGENT, ...env }), { env: { PATH: process.env.PATH } });
}

describe("agent mode start-up", () => {
  it("is off when HUB_AGENT or the hub is not set", async () => {
    expect(await loadAgentMode(configFor({}))).toBeUndefined();
    expect(await loadAgentMode(configFor({ SERVICE_HUB_URL: "file:///nowhere" }))).toBeUndefined();
    await expect(loadAgentMode(configFor({ HUB_AGENT: AGENT }))).rejects.toThrow("set SERVICE_HUB_URL");
  });

  it("clones the hub, validates agent.yml, copies the package, runs runners/ in order and caches the system prompt", async () => {
    const mode = (await load())!;
    expect(mode.agentId).toBe(AGENT);
    expect(mode.manifest).toMatchObject({
      name: AGENT,
      model: "sonnet",
      max_turns: 12,
      permission_mode: "bypassPermissions",
      mcp_categories: ["knowledge", "deploy"],
    });
    expect(mode.hubDir).toBe(join(t.home, "clones", "hub"));
    expect(existsSync(join(mode.hubDir, ".git"))).toBe(true);
    expect(mode.packageDir).toBe(join(t.home, "package"));
    for (const f of ["CLAUDE.md", "system.md", ".claude/settings.json", ".mcp.json", "prompts/triage.md"]) {
      expect(existsSync(join(mode.packageDir, f))).toBe(true);
    }
    expect(existsSync(join(mode.packageDir, "evaluation"))).toBe(false);
    expect(mode.runners).toEqual(["01-first.sh", "02-second.sh"]);
    expect(await readFile(join(mode.packageDir, "runner.log"), "utf8")).toBe(`first ${AGENT}\nsecond\n`);
    expect(mode.systemPrompt).toBe("# Deploy helper\nYou answer questions about deployments.\n\nBe brief.");
  });

  it("starts again over its own earlier copy (a restart), fetching the hub instead of cloning it", async () => {
    await load();
    const again = await loadAgentMode(configFor({ SERVICE_HUB_URL: `file://${join(t.home, "hub")}`, HUB_AGENT: AGENT }), { env: { PATH: process.env.PATH } });
    // A fresh copy: the runners' output of the first start is gone, theirs of this start is there.
    expect(await readFile(join(again!.packageDir, "runner.log"), "utf8")).toBe(`first ${AGENT}\nsecond\n`);
  });

  it("uses SERVICE_HUB_PATH as-is when no URL is set", async () => {
    const hub = join(t.home, "local-hub");
    await makeHub(hub);
    const mode = await loadAgentMode(configFor({ SERVICE_HUB_PATH: hub, HUB_AGENT: AGENT }), { env: { PATH: process.env.PATH } });
    expect(mode!.hubDir).toBe(hub);
    expect(existsSync(join(t.home, "clones"))).toBe(false);
  });

  it("refuses to replace a package directory it did not make", async () => {
    await mkdir(join(t.home, "package"), { recursive: true });
    await writeFile(join(t.home, "package", "precious.txt"), "keep me");
    await expect(load()).rejects.toThrow(/package is not empty and was not made by this service/);
  });
});

describe("a broken package stops start-up, naming the file", () => {
  const pkg = `agents/${AGENT}/package`;

  it("no agent directory for HUB_AGENT", async () => {
    await expect(load(hubFiles({}, "someone-else"))).rejects.toThrow(`agents/${AGENT} is missing`);
  });

  it("agent.yml missing", async () => {
    await expect(load(hubFiles({ [`agents/${AGENT}/agent.yml`]: null }))).rejects.toThrow(`agents/${AGENT}/agent.yml is missing`);
  });

  it("agent.yml invalid: each failing field named", async () => {
    const bad = `name: ${AGENT}\nmodel: sonnet\nmax_turns: lots\npermission_mode: yolo\n`;
    const err = await load(hubFiles({ [`agents/${AGENT}/agent.yml`]: bad })).then(
      () => new Error("it loaded"),
      (e: Error) => e,
    );
    expect(err.message).toContain(`agents/${AGENT}/agent.yml is invalid`);
    expect(err.message).toContain("max_turns");
    expect(err.message).toContain("permission_mode");
  });

  it("agent.yml not YAML", async () => {
    await expect(load(hubFiles({ [`agents/${AGENT}/agent.yml`]: "name: [unclosed\n" }))).rejects.toThrow(`agent.yml is not valid YAML`);
  });

  it("CLAUDE.md missing", async () => {
    await expect(load(hubFiles({ [`${pkg}/CLAUDE.md`]: null }))).rejects.toThrow(`${pkg}/CLAUDE.md is missing`);
  });

  it("a JSON file that does not parse (.mcp.json, .claude/settings.json)", async () => {
    await expect(load(hubFiles({ [`${pkg}/.mcp.json`]: "{ mcpServers: " }))).rejects.toThrow(`${pkg}/.mcp.json is not valid JSON`);
    await t.cleanup();
    t = await tempHome("agent-package-");
    await expect(load(hubFiles({ [`${pkg}/.claude/settings.json`]: "[1,]" }))).rejects.toThrow(`${pkg}/.claude/settings.json is not valid JSON`);
  });

  it("a runner that fails, with its exit code and output", async () => {
    const err = await load(hubFiles({ [`${pkg}/runners/02-second.sh`]: 'echo "cannot reach the registry" >&2\nexit 4\n' })).then(
      () => new Error("it loaded"),
      (e: Error) => e,
    );
    expect(err.message).toContain(`${pkg}/runners/02-second.sh exited with code 4: cannot reach the registry`);
  });

  it("a runner with no way to run it", async () => {
    await expect(load(hubFiles({ [`${pkg}/runners/03-third.rb`]: "puts 1\n" }))).rejects.toThrow(`${pkg}/runners/03-third.rb is not executable`);
  });
});

describe("the service process with a broken package", () => {
  it("exits 1 at start-up with one line naming the file, and never listens", async () => {
    const url = await makeHub(join(t.home, "hub"), hubFiles({ [`agents/${AGENT}/package/.mcp.json`]: "{ broken" }));
    const { code, stdout, stderr } = await runMain(["--only", "orchestrator"], {
      HOME: t.home,
      SERVICE_PORT: "0",
      SERVICE_HUB_URL: url,
      HUB_AGENT: AGENT,
      SERVICE_CLONE_ROOT: join(t.home, "clones"),
      SERVICE_PACKAGE_DIR: join(t.home, "package"),
      SERVICE_OTEL_ENABLED: "false",
    });
    expect(code).toBe(1);
    expect(stderr).toContain(`agents/${AGENT}/package/.mcp.json is not valid JSON`);
    // A message, not a stack trace.
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(`${stdout}${stderr}`).not.toContain("job orchestrator on http://");
    expect(existsSync(join(t.home, "package"))).toBe(false);
  });
});
