// `bun run start` (scripts/start.ts), the README's start command: the router fails closed
// without a token, so a first start writes a generated KB_ROUTER_TOKEN into ~/.router/.env
// (mode 600) under a comment naming what wrote it, the router takes it, and a later start keeps it.
import { describe, expect, it, setDefaultTimeout } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { REPO, startMain, tempDir } from "./support/main-process";

setDefaultTimeout(60_000);

const START = join(REPO, "scripts", "start.ts");
const start = (home: string) =>
  startMain(
    ["--only", "router", "--vault", join(home, "vault")],
    { HOME: home, TICK_INTERVAL_SECONDS: "0" },
    { expect: ["router"], entry: START, timeoutMs: 30_000 },
  );

describe("bun run start", () => {
  it("writes a generated router token on a first start, stamped as its own, and keeps it after", async () => {
    const home = tempDir("start-home");
    const envFile = join(home, ".router", ".env");
    const first = await start(home);
    const text = readFileSync(envFile, "utf8");
    expect(text).toMatch(/^# added by bun run start \d{4}-\d{2}-\d{2}\nKB_ROUTER_TOKEN=[0-9a-f]{48}\n$/);
    expect(text).not.toContain("router-cli install");
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    const token = /KB_ROUTER_TOKEN=(\w+)/.exec(text)?.[1] ?? "";
    expect(first.output()).toContain(`generated a router token as KB_ROUTER_TOKEN in ${envFile}`);
    expect(first.output()).not.toContain(token);
    // The router it started takes that token (and, failing closed, nothing else).
    expect((await fetch(`${first.routerUrl}/feed`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await fetch(`${first.routerUrl}/feed`)).status).toBe(401);
    expect(await first.stop()).toBe(0);

    const second = await start(home);
    expect(readFileSync(envFile, "utf8")).toBe(text);
    expect(second.output()).not.toContain("generated a router token");
    expect(await second.stop()).toBe(0);
  });
});
