// Habits in CI (issue 19 part 5): the lint rules hold on the whole repository, and .ci/run
// checks the types and runs Biome (lint and format) before it runs a single test.
import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./support/main-process";

describe("lint and CI habits", () => {
  it("bun run lint finds nothing: no error, no warning", () => {
    const run = Bun.spawnSync([process.execPath, "run", "lint"], { cwd: REPO, stdout: "pipe", stderr: "pipe" });
    const out = `${run.stdout.toString()}${run.stderr.toString()}`;
    expect(out).not.toContain("Found");
    expect(run.exitCode).toBe(0);
  });

  it(".ci/run runs the typecheck and biome ci before the README's test command", () => {
    const ci = readFileSync(join(REPO, ".ci", "run"), "utf8");
    const at = (command: string) => ci.split("\n").findIndex((l) => l.trim().startsWith(command));
    const typecheck = at("bun run typecheck ||");
    const biome = at("bunx biome ci");
    const tests = at('bash -c "$test_cmd"');
    expect(typecheck).toBeGreaterThan(-1);
    expect(biome).toBeGreaterThan(typecheck);
    expect(tests).toBeGreaterThan(biome);
  });
});
