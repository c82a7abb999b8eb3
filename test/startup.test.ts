// Start-up and shutdown of the one process: ports, configuration, flags, signals.
import { afterEach, describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type MainProcess, runMain, startMain, tempDir } from "./support/main-process";

const running: MainProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((m) => m.stop("SIGKILL")));
});

describe("start-up", () => {
  it("serves both services from one process and scaffolds the vault", async () => {
    const vault = join(tempDir("vault"), "my-vault");
    const main = await startMain(["--vault", vault], { KB_ROUTER_TOKEN: "t" });
    running.push(main);
    const router = (await (await fetch(`${main.routerUrl}/health`)).json()) as { service: string };
    const orchestrator = (await (await fetch(`${main.orchestratorUrl}/health`)).json()) as { service: string };
    expect(router.service).toBe("knowledge-router");
    expect(orchestrator.service).toBe("job-orchestrator");
    for (const dir of ["left/reference", "raw", "brain-feed"]) expect(existsSync(join(vault, dir))).toBe(true);
    expect(JSON.parse(readFileSync(join(vault, ".brain-schema"), "utf8")).version).toBe(1);
  });

  it("--only orchestrator starts no router", async () => {
    const main = await startMain(["--only", "orchestrator"], {}, { expect: ["orchestrator"] });
    running.push(main);
    expect(main.output()).not.toContain("knowledge router on");
  });

  it("refuses an unknown --only value with exit 2", async () => {
    const { code, stderr } = await runMain(["--only", "both"], {});
    expect(code).toBe(2);
    expect(stderr).toContain("--only must be router or orchestrator");
  });

  it("exits 1 with one line naming the port and its variable when the port is taken", async () => {
    const squatter = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("busy") });
    try {
      const { code, stderr } = await runMain(["--only", "router"], { PORT_BRAIN_API: String(squatter.port), KB_ROUTER_TOKEN: "t" });
      expect(code).toBe(1);
      const lines = stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`port ${squatter.port}`);
      expect(lines[0]).toContain("PORT_BRAIN_API");
    } finally {
      squatter.stop(true);
    }
  });

  it("stops the router again when the orchestrator's port is taken (never half-started)", async () => {
    const squatter = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("busy") });
    const routerPort = Bun.serve({ port: 0, fetch: () => new Response() });
    const port = routerPort.port;
    routerPort.stop(true);
    try {
      const { code, stderr } = await runMain([], { PORT_BRAIN_API: String(port), SERVICE_PORT: String(squatter.port), KB_ROUTER_TOKEN: "t" });
      expect(code).toBe(1);
      expect(stderr).toContain("SERVICE_PORT");
      // The router's port is free again: the process exited with nothing left bound.
      const probe = Bun.serve({ port, hostname: "127.0.0.1", fetch: () => new Response() });
      probe.stop(true);
    } finally {
      squatter.stop(true);
    }
  });

  it("exits 1 naming the variable and the file for a bad environment value", async () => {
    const { code, stderr } = await runMain([], { SERVICE_PORT: "abc", KB_ROUTER_TOKEN: "t" });
    expect(code).toBe(1);
    expect(stderr).toContain("SERVICE_PORT");
    expect(stderr).toContain('"abc"');
    expect(stderr).toContain(".service/config.yml");
  });

  it("exits 1 naming the YAML key and the file for a bad config.yml value", async () => {
    const home = tempDir("home");
    mkdirSync(join(home, ".service"));
    writeFileSync(join(home, ".service", "config.yml"), "server:\n  max_parallel: 1\nrepos:\n  max_parallel_jobs: lots\n");
    const { code, stderr } = await runMain(["--only", "orchestrator"], { HOME: home });
    expect(code).toBe(1);
    expect(stderr).toContain(`repos.max_parallel_jobs in ${join(home, ".service", "config.yml")}`);
    expect(stderr).toContain("SERVICE_MAX_PARALLEL_JOBS");
  });

  it("exits 1 for a config.yml that is not YAML", async () => {
    const home = tempDir("home");
    mkdirSync(join(home, ".service"));
    writeFileSync(join(home, ".service", "config.yml"), "server: [unclosed\n");
    const { code, stderr } = await runMain(["--only", "orchestrator"], { HOME: home });
    expect(code).toBe(1);
    expect(stderr).toContain("config.yml is not valid YAML");
  });

  it("exits 1 for a bad router value in ~/.router/.env, naming the file", async () => {
    const home = tempDir("home");
    mkdirSync(join(home, ".router"));
    writeFileSync(join(home, ".router", ".env"), "PORT_BRAIN_API=eighty\nKB_ROUTER_TOKEN=t\n");
    const { code, stderr } = await runMain(["--only", "router"], { HOME: home, PORT_BRAIN_API: "" });
    expect(code).toBe(1);
    expect(stderr).toContain(`PORT_BRAIN_API in ${join(home, ".router", ".env")}`);
  });

  it("refuses to serve the orchestrator without keys on a non-loopback bind", async () => {
    const { code, stderr } = await runMain(["--only", "orchestrator"], { SERVICE_HOST: "0.0.0.0", SERVICE_PORT: "0" });
    expect(code).toBe(1);
    expect(stderr).toContain("SERVICE_API_KEYS is not set");
    expect(stderr).toContain("SERVICE_ALLOW_NO_AUTH=1");
  });

  it("serves without keys on a non-loopback bind when SERVICE_ALLOW_NO_AUTH=1, loudly", async () => {
    const main = await startMain(["--only", "orchestrator"], { SERVICE_HOST: "0.0.0.0", SERVICE_ALLOW_NO_AUTH: "1" }, { expect: ["orchestrator"] });
    running.push(main);
    expect(main.output()).toContain("WITHOUT auth");
  });
});

describe("shutdown", () => {
  it("exits 0 on SIGTERM and on SIGINT", async () => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const main = await startMain([], { KB_ROUTER_TOKEN: "t" });
      expect(await main.stop(signal)).toBe(0);
    }
  });

  it("lets a request in flight finish before exiting", async () => {
    const main = await startMain(["--only", "router"], { KB_ROUTER_TOKEN: "t", LOG_LEVEL: "4" }, { expect: ["router"] });
    running.push(main);
    // A body that arrives slowly keeps the request in flight while SIGTERM lands.
    let push!: (s: string) => void;
    let end!: () => void;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (s) => controller.enqueue(new TextEncoder().encode(s));
        end = () => controller.close();
      },
    });
    const pending = fetch(`${main.routerUrl}/nothing`, {
      method: "POST",
      headers: { authorization: "Bearer t", "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    push("{");
    await main.waitForOutput("-> POST /nothing");
    main.proc.kill("SIGTERM");
    await main.waitForOutput("SIGTERM: finishing in-flight requests");
    push("}");
    end();
    const res = await pending;
    expect(res.status).toBe(404);
    expect(await main.proc.exited).toBe(0);
  });
});
