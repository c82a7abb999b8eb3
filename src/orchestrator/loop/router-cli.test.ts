// Which router-cli the hooks run by default, in each place the service runs from.
import { describe, expect, it } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shippedRouterCli } from "./router-cli";

const dir = () => mkdtempSync(join(tmpdir(), "router-cli-choice-"));
const touch = (path: string) => {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, "");
};
const none = () => null;

describe("the router-cli shipped with the service", () => {
  it("in a checkout: dist/router-cli when built, else cli/router-cli.ts through this bun", () => {
    const root = dir();
    touch(join(root, "cli", "router-cli.ts"));
    expect(shippedRouterCli({ root, execPath: "/usr/bin/bun", which: none }).argv).toEqual(["/usr/bin/bun", join(root, "cli", "router-cli.ts")]);
    touch(join(root, "dist", "router-cli"));
    expect(shippedRouterCli({ root, execPath: "/usr/bin/bun", which: none }).argv).toEqual([join(root, "dist", "router-cli")]);
  });

  it("in the image (no cli sources): the compiled router-cli on PATH; none found: by name, said so", () => {
    const root = dir();
    expect(shippedRouterCli({ root, execPath: "/usr/local/bin/bun", which: () => "/usr/local/bin/router-cli" }).argv).toEqual(["/usr/local/bin/router-cli"]);
    const lost = shippedRouterCli({ root, execPath: "/usr/local/bin/bun", which: none });
    expect(lost.argv).toEqual(["router-cli"]);
    expect(lost.why).toContain("ROUTER_CLI_BINARY");
  });

  it("under a compiled service-cli: the router-cli beside it", () => {
    const bin = dir();
    touch(join(bin, "router-cli"));
    expect(shippedRouterCli({ root: dir(), execPath: join(bin, "service-cli"), which: none }).argv).toEqual([join(bin, "router-cli")]);
  });
});
