// The README stays true: its configuration tables match the settings in code, and its two
// commands are the ones CI and package.json run.
import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
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
    expect(scripts.start).toBe("bun scripts/start.ts");
    expect(scripts.test).toStartWith("bun test");
  });

  it("documents every orchestrator and router variable", () => {
    for (const v of ["SERVICE_API_KEYS", "SERVICE_PORT", "KB_ROUTER_TOKENS", "PORT_BRAIN_API", "MAX_BODY_BYTES"]) {
      expect(readme).toContain(`\`${v}\``);
    }
  });
});
