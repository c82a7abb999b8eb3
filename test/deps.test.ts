// No import circles (issue 38 part 5): dependency-cruiser, with the repository's rules
// (.dependency-cruiser.cjs), finds no module that imports its importer, type-only imports
// included, across src/, cli/, scripts/ and test/; and no bench reaching into src/ past its
// public seams (part 7).
import { describe, expect, it, setDefaultTimeout } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO, tempDir } from "./support/main-process";

// One cruise parses every module with swc: tens of seconds on a loaded 2-core machine.
setDefaultTimeout(180_000);

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
  cycle?: Array<{ name: string }>;
}

/** `bun run deps`' cruise over `paths` (relative to `cwd`), as JSON. */
function cruise(paths: string[], cwd = REPO): { violations: Violation[]; modules: number } {
  const run = Bun.spawnSync(
    [
      process.execPath,
      "--bun",
      join(REPO, "node_modules", ".bin", "depcruise"),
      ...paths,
      "--config",
      join(REPO, ".dependency-cruiser.cjs"),
      "--output-type",
      "json",
    ],
    { cwd, stdout: "pipe", stderr: "pipe" },
  );
  const out = run.stdout.toString();
  if (!out.trim().startsWith("{")) throw new Error(`depcruise printed no report (exit ${run.exitCode}): ${run.stderr.toString()}`);
  const report = JSON.parse(out) as { summary: { violations: Violation[]; totalCruised: number } };
  return { violations: report.summary.violations, modules: report.summary.totalCruised };
}

describe("module dependencies", () => {
  it("have no import circles in src/, cli/, scripts/ or test/, and no bench past its public seams", () => {
    const { violations, modules } = cruise(["src", "cli", "scripts", "test"]);
    expect(modules).toBeGreaterThan(400);
    const circles = violations.filter((v) => v.rule.name === "no-circular").map((v) => [v.from, ...(v.cycle ?? []).map((c) => c.name)].join(" → "));
    expect(circles).toEqual([]);
    const pastSeams = violations.filter((v) => v.rule.name === "bench-public-seams").map((v) => `${v.from} → ${v.to}`);
    expect(pastSeams).toEqual([]);
  });

  it("a bench may import the index's public module and the clients, not the index's internals", () => {
    const dir = tempDir("deps-seams");
    mkdirSync(join(dir, "src", "router", "index"), { recursive: true });
    mkdirSync(join(dir, "scripts", "bench"), { recursive: true });
    writeFileSync(join(dir, "tsconfig.json"), "{}");
    writeFileSync(join(dir, "src", "router", "index", "sqlite.ts"), "export const openSqliteIndex = () => 1;\n");
    writeFileSync(join(dir, "src", "router", "index", "index.ts"), 'export { openSqliteIndex as openIndexStore } from "./sqlite.ts";\n');
    writeFileSync(join(dir, "src", "router", "client.ts"), "export class RouterClient {}\n");
    writeFileSync(
      join(dir, "scripts", "bench", "public.ts"),
      'import { openIndexStore } from "../../src/router/index/index.ts";\nimport { RouterClient } from "../../src/router/client.ts";\nconsole.log(openIndexStore, RouterClient);\n',
    );
    writeFileSync(
      join(dir, "scripts", "bench", "internal.ts"),
      'import { openSqliteIndex } from "../../src/router/index/sqlite.ts";\nconsole.log(openSqliteIndex);\n',
    );
    const { violations } = cruise(["scripts", "src"], dir);
    expect(violations.filter((v) => v.rule.name === "bench-public-seams").map((v) => `${v.from} → ${v.to}`)).toEqual([
      "scripts/bench/internal.ts → src/router/index/sqlite.ts",
    ]);
  });

  it("the check sees a circle, a type-only one too", () => {
    const dir = tempDir("deps-circle");
    mkdirSync(join(dir, "src"));
    writeFileSync(join(dir, "tsconfig.json"), "{}");
    writeFileSync(join(dir, "src", "app.ts"), 'import { register } from "./route";\nexport type App = { name: string };\nregister({ name: "x" });\n');
    writeFileSync(join(dir, "src", "route.ts"), 'import type { App } from "./app";\nexport function register(app: App): void {}\n');
    const { violations } = cruise(["src"], dir);
    expect(violations.map((v) => v.rule.name)).toContain("no-circular");
  });
});
