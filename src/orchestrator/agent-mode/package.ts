// The agent package (spec: Resources, "Agent package"): agents/<name>/package/ of the hub is
// copied to the package directory (the agent's cwd), validated (CLAUDE.md present, every JSON
// file parses), its runners/ run in name order, and its system prompt read once.
import { existsSync } from "node:fs";
import { cp, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, extname, join, relative } from "node:path";
import { log } from "../../common/logger";
import { AgentPackageError } from "./errors";

const logger = log("agent-mode");

/** Written into a package directory we made: only such a directory is ever replaced. */
const PACKAGE_MARKER = ".brain-stack-package";
const RUNNER_TIMEOUT_MS = 10 * 60_000;
const SKIP_DIRS = new Set([".git", "node_modules"]);

/**
 * Copies `src` to `dest` whole: into a sibling first, then renamed over the old copy, so a
 * failed copy never leaves half a package. `dest` must be missing, empty, or ours.
 */
export async function installPackage(src: string, dest: string): Promise<void> {
  if (!existsSync(src) || !(await stat(src)).isDirectory()) throw new AgentPackageError(src, "is missing (the hub has no package/ for this agent)");
  if (existsSync(dest)) {
    const entries = await readdir(dest);
    if (entries.length > 0 && !entries.includes(PACKAGE_MARKER)) {
      throw new AgentPackageError(dest, `is not empty and was not made by this service; empty it or point SERVICE_PACKAGE_DIR at another directory`);
    }
  }
  await mkdir(dirname(dest), { recursive: true });
  const temp = `${dest}.new-${process.pid}-${Date.now()}`;
  try {
    await cp(src, temp, { recursive: true, filter: (s) => !SKIP_DIRS.has(basename(s)) || s === src });
    await writeFile(join(temp, PACKAGE_MARKER), `copied from ${src} at ${new Date().toISOString()}\n`);
    await rm(dest, { recursive: true, force: true });
    await rename(temp, dest);
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

async function* filesUnder(dir: string): AsyncGenerator<string> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) yield* filesUnder(p);
    } else if (e.isFile()) yield p;
  }
}

/** CLAUDE.md present; .claude/settings.json, .mcp.json and every other JSON file parse. */
export async function validatePackage(dir: string, shownAs = dir): Promise<void> {
  if (!existsSync(join(dir, "CLAUDE.md"))) throw new AgentPackageError(join(shownAs, "CLAUDE.md"), "is missing (it is the agent's system prompt)");
  for await (const file of filesUnder(dir)) {
    if (extname(file) !== ".json") continue;
    try {
      JSON.parse(await readFile(file, "utf8"));
    } catch (err) {
      throw new AgentPackageError(join(shownAs, relative(dir, file)), `is not valid JSON: ${(err as Error).message}`);
    }
  }
}

/** CLAUDE.md, then system.md when the package has one. */
export async function readSystemPrompt(dir: string): Promise<string> {
  const parts = [await readFile(join(dir, "CLAUDE.md"), "utf8")];
  if (existsSync(join(dir, "system.md"))) parts.push(await readFile(join(dir, "system.md"), "utf8"));
  return parts
    .map((p) => p.trim())
    .filter((p) => p !== "")
    .join("\n\n");
}

const INTERPRETERS: Record<string, string[]> = {
  ".sh": ["bash"],
  ".bash": ["bash"],
  ".py": ["python3"],
  ".ts": [process.execPath],
  ".js": [process.execPath],
  ".mjs": [process.execPath],
};
const NOT_RUNNERS = new Set([".md", ".txt"]);

/** Each file of runners/ in name order, in the package directory; the first failure stops start-up. */
export async function runRunners(dir: string, env: Record<string, string>, shownAs = dir): Promise<string[]> {
  const runnersDir = join(dir, "runners");
  if (!existsSync(runnersDir)) return [];
  const names = (await readdir(runnersDir, { withFileTypes: true }))
    .filter((e) => e.isFile() && !e.name.startsWith("."))
    .map((e) => e.name)
    .sort();
  const ran: string[] = [];
  for (const name of names) {
    const file = join(runnersDir, name);
    const shown = join(shownAs, "runners", name);
    const ext = extname(name);
    const executable = ((await stat(file)).mode & 0o111) !== 0;
    if (!executable && NOT_RUNNERS.has(ext)) continue;
    const cmd = executable ? [file] : INTERPRETERS[ext] ? [...INTERPRETERS[ext], file] : undefined;
    if (!cmd) throw new AgentPackageError(shown, "is not executable and has no known interpreter (.sh, .py, .ts, .js)");
    const started = performance.now();
    let proc;
    try {
      proc = Bun.spawn(cmd, { cwd: dir, env, stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: RUNNER_TIMEOUT_MS });
    } catch (err) {
      throw new AgentPackageError(shown, `could not be started: ${(err as Error).message}`);
    }
    const [out, errText, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) {
      const tail = (errText.trim() || out.trim()).split("\n").slice(-5).join(" | ");
      const how = proc.signalCode ? `was killed by ${proc.signalCode}` : `exited with code ${code}`;
      throw new AgentPackageError(shown, `${how}${tail ? `: ${tail}` : ""}`);
    }
    logger.info(`runner ${name} done in ${Math.round(performance.now() - started)} ms`);
    ran.push(name);
  }
  return ran;
}
