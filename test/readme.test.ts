// The README and docs/ stay true: the configuration tables match the settings in code, the
// README's two commands are the ones CI and package.json run, its command tables list exactly the
// commands each CLI has, every page is reachable from the README, the files and pages they name
// exist, and nothing points outside the repository.
import { describe, expect, it } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CONFIG_DOC, renderConfigTables } from "../scripts/config-tables";
import { REPO } from "./support/main-process";

const readme = readFileSync(join(REPO, "README.md"), "utf8");
const configDoc = readFileSync(CONFIG_DOC, "utf8");
const pages = readdirSync(join(REPO, "docs"))
  .filter((f) => f.endsWith(".md"))
  .map((f) => `docs/${f}`);
const docs = [["README.md", readme] as const, ...pages.map((p) => [p, readFileSync(join(REPO, p), "utf8")] as const)];
const commandAfter = (marker: string) => {
  const lines = readme.split("\n");
  const i = lines.indexOf(marker);
  return i >= 0 ? lines[i + 2] : undefined;
};

describe("README", () => {
  it("has configuration tables current with the code (bun scripts/config-tables.ts)", () => {
    expect(renderConfigTables(configDoc)).toBe(configDoc);
  });

  it("starts with a start command and a test command that use package.json's scripts", () => {
    const scripts = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).scripts as Record<string, string>;
    expect(commandAfter("<!-- start-command -->")).toBe("npx --yes bun install && npx --yes bun run start");
    expect(commandAfter("<!-- test-command -->")).toBe("npx --yes bun install && npx --yes bun run test");
    // Bun's own head limit raised past the service's 16 KiB, so an over-long head gets the JSON error shape.
    expect(scripts.start).toBe("bun --max-http-header-size=65536 scripts/start.ts");
    expect(scripts.test).toStartWith("bun test");
  });

  it("documents every orchestrator and router variable", () => {
    for (const v of ["SERVICE_API_KEYS", "SERVICE_PORT", "KB_ROUTER_TOKENS", "PORT_BRAIN_API", "MAX_BODY_BYTES"]) {
      expect(configDoc).toContain(`\`${v}\``);
    }
  });

  it("is a short manual that links every page of docs/, and every link between pages resolves", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(400);
    for (const page of pages) expect(readme).toContain(`](${page})`);
    const broken: string[] = [];
    for (const [file, text] of docs) {
      for (const m of text.matchAll(/\]\(([^)#\s]+\.md)(?:#[^)]*)?\)/g)) {
        const target = join(REPO, dirname(file), m[1] ?? "");
        if (!m[1]?.startsWith("http") && !existsSync(target)) broken.push(`${file} → ${m[1]}`);
      }
    }
    expect(broken).toEqual([]);
  });

  /** The command words in the first column of a section's table (`| \`run <task>\` |` → run; `| \`up\` / \`down\` |` → up, down). */
  const tableCommands = (section: string) => {
    const start = readme.indexOf(`\n## ${section}\n`);
    const body = readme.slice(start + 1, readme.indexOf("\n## ", start + 1));
    const firstCells = [...body.matchAll(/^\| ([^|]*`[^|]*)\|/gm)].map((m) => m[1] ?? "");
    return new Set(firstCells.flatMap((cell) => [...cell.matchAll(/`([a-z][a-z-]*)/g)].map((m) => m[1] ?? "")));
  };
  /** The commands a CLI declares, from its --help USAGE line. */
  const cliCommands = (entry: string) => {
    const out = Bun.spawnSync(["bun", join(REPO, "cli", entry), "--help"], { cwd: REPO, env: { ...process.env, NO_COLOR: "1" } });
    const usage = out.stdout
      .toString()
      .split("\n")
      .find((l) => l.startsWith("USAGE "))!;
    return new Set((usage.split(" ")[2] ?? "").split("|"));
  };

  it("lists exactly the commands each CLI has", () => {
    expect([...tableCommands("router-cli")].sort()).toEqual([...cliCommands("router-cli.ts")].sort());
    expect([...tableCommands("service-cli")].sort()).toEqual([...cliCommands("service-cli.ts")].sort());
  });

  it("points at nothing outside the repository, and the repository files the pages name exist", () => {
    const all = docs.map(([, text]) => text).join("\n");
    expect(all).not.toMatch(/\.\.\/shared/);
    expect(readme).not.toMatch(/\]\(\.\.\//);
    for (const [file, text] of docs) if (file !== "README.md") expect(text).not.toMatch(/\]\(\.\.\/(?!README\.md)/);
    const named = [...all.matchAll(/`((?:src|test|scripts|cli|examples|openapi|deploy|docs)\/[\w./-]+\.(?:ts|md|json|yaml|yml|env|sh|py))`/g)].map(
      (m) => m[1] ?? "",
    );
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((path) => !existsSync(join(REPO, path)))).toEqual([]);
  });
});
