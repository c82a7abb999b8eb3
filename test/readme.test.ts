// The README stays true: its configuration tables match the settings in code, its two
// commands are the ones CI and package.json run, its command tables list exactly the commands
// each CLI has, the files it names exist, and nothing points outside the repository.
import { describe, expect, it } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { README, renderReadme } from "../scripts/readme-config";
import { REPO } from "./support/main-process";

const readme = readFileSync(README, "utf8");
const commandAfter = (marker: string) => {
  const lines = readme.split("\n");
  const i = lines.indexOf(marker);
  return i >= 0 ? lines[i + 2] : undefined;
};

describe("README", () => {
  it("has configuration tables current with the code (bun scripts/readme-config.ts)", () => {
    expect(renderReadme(readme)).toBe(readme);
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
      expect(readme).toContain(`\`${v}\``);
    }
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

  it("points at nothing outside the repository, and the repository files it names exist", () => {
    expect(readme).not.toMatch(/\.\.\/shared|\]\(\.\.\//);
    const named = [...readme.matchAll(/`((?:src|test|scripts|cli|examples|openapi|deploy)\/[\w./-]+\.(?:ts|md|json|yaml|yml|env|sh|py))`/g)].map(
      (m) => m[1] ?? "",
    );
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((path) => !existsSync(join(REPO, path)))).toEqual([]);
  });
});
