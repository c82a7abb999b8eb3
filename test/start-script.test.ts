// `bun run start` on a fresh machine: both services answer /health with no configuration,
// because a router token is generated into ~/.router/.env (never printed) when none is set.
import { describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseDotenv } from "dotenv";
import { REPO, tempDir } from "./support/main-process";
import { until } from "./support/until";

async function startScript(home: string, env: Record<string, string> = {}) {
  const proc = Bun.spawn(["bun", join(REPO, "scripts", "start.ts"), "--vault", join(home, "vault")], {
    cwd: home,
    env: { PATH: process.env.PATH ?? "", HOME: home, PORT_BRAIN_API: "0", PORT_BRAIN_MCP: "0", SERVICE_PORT: "0", TICK_INTERVAL_SECONDS: "0", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  const decoder = new TextDecoder();
  void (async () => {
    for await (const c of proc.stdout) out += decoder.decode(c, { stream: true });
  })();
  void (async () => {
    for await (const c of proc.stderr) out += decoder.decode(c, { stream: true });
  })();
  const [router, orch] = await until(
    () => {
      if (proc.exitCode !== null) throw new Error(`start.ts exited (${proc.exitCode}):\n${out}`);
      const router = /knowledge router on (http:\/\/\S+?:\d+)/.exec(out)?.[1];
      const orch = /job orchestrator on (http:\/\/\S+?:\d+)/.exec(out)?.[1];
      return router && orch ? [router, orch] : undefined;
    },
    { ms: 15_000, what: () => `start.ts to start:\n${out}` },
  );
  return { proc, router, orch, output: () => out };
}

describe("bun run start", () => {
  it("generates a router token on a fresh machine, so both /health answer ok", async () => {
    const home = tempDir("start-home");
    const s = await startScript(home);
    try {
      expect(((await (await fetch(`${s.router}/health`)).json()) as { status: string }).status).toBe("ok");
      expect(((await (await fetch(`${s.orch}/health`)).json()) as { status: string }).status).toBe("ok");
      const envFile = join(home, ".router", ".env");
      const token = parseDotenv(readFileSync(envFile, "utf8")).KB_ROUTER_TOKEN!;
      expect(token).toMatch(/^[0-9a-f]{48}$/);
      expect((statSync(envFile).mode & 0o777).toString(8)).toBe("600");
      expect(s.output()).not.toContain(token);
      expect((await fetch(`${s.router}/feed`)).status).toBe(401);
      expect((await fetch(`${s.router}/feed`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    } finally {
      s.proc.kill("SIGTERM");
      expect(await s.proc.exited).toBe(0);
    }
  });

  it("keeps a configured token and writes nothing", async () => {
    const home = tempDir("start-home");
    mkdirSync(join(home, ".router"));
    writeFileSync(join(home, ".router", ".env"), "KB_ROUTER_TOKEN=mine\n");
    const s = await startScript(home);
    try {
      expect(readFileSync(join(home, ".router", ".env"), "utf8")).toBe("KB_ROUTER_TOKEN=mine\n");
      expect((await fetch(`${s.router}/feed`, { headers: { authorization: "Bearer mine" } })).status).toBe(200);
    } finally {
      s.proc.kill("SIGTERM");
      await s.proc.exited;
    }
  });

  it("--only orchestrator (the image's orchestrator container) generates no router token", async () => {
    const home = tempDir("start-home");
    const proc = Bun.spawn(["bun", join(REPO, "scripts", "start.ts"), "--only", "orchestrator"], {
      cwd: home,
      env: { PATH: process.env.PATH ?? "", HOME: home, SERVICE_PORT: "0" },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      let out = "";
      const decoder = new TextDecoder();
      for (const stream of [proc.stdout, proc.stderr]) {
        void (async () => {
          for await (const c of stream) out += decoder.decode(c, { stream: true });
        })();
      }
      await until(() => /job orchestrator on http/.test(out) || proc.exitCode !== null, {
        ms: 15_000,
        what: "the orchestrator to start or the process to exit",
      });
      expect(out).toContain("job orchestrator on http");
      expect(existsSync(join(home, ".router", ".env"))).toBe(false);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  });
});
