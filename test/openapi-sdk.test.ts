// The API documents as an SDK generator sees them: redocly lint clean, an operationId on every
// operation, the right error shape per route, and a client generated with openapi-typescript +
// openapi-fetch that type-checks and works against the live services.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { copyFileSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeHub } from "./support/agent-mode";
import { type MainProcess, REPO, startMain, tempDir } from "./support/main-process";
import { KEY, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";

type Operation = { operationId?: string; responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> };
const FILES = ["router.json", "service.json"];
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const operations = (file: string) => {
  const doc = JSON.parse(readFileSync(join(REPO, "openapi", file), "utf8")) as { paths: Record<string, Record<string, Operation>> };
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, path, op })),
  );
};
const run = async (cmd: string[], cwd = REPO, env: Record<string, string> = {}) => {
  const proc = Bun.spawn(cmd, { cwd, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
};

describe("openapi/*.json for SDK generators", () => {
  for (const file of FILES) {
    it(`${file}: every operation has a camelCase operationId (SDK method names)`, () => {
      const missing = operations(file)
        .filter(({ op }) => !op.operationId)
        .map(({ name }) => name);
      if (missing.length > 0) {
        throw new Error(`${file}: no operationId on ${missing.join(", ")}: add operationId to each route's createRoute, then bun run openapi`);
      }
      for (const { name, op } of operations(file)) expect(`${name}: ${op.operationId}`).toMatch(/: [a-z][A-Za-z0-9]*$/);
    });

    it(`${file}: error answers declare the shape they send (OpenAI's under /v1)`, () => {
      for (const { name, path, op } of operations(file)) {
        const errors = Object.entries(op.responses).filter(([status]) => /^[45]/.test(status));
        // The two open pages without input (liveness, the console's HTML) have no 4xx to declare.
        if (name !== "GET /health" && name !== "GET /console") expect(`${name}: ${errors.some(([s]) => s.startsWith("4"))}`).toBe(`${name}: true`);
        const want = path === "/v1" || path.startsWith("/v1/") ? "#/components/schemas/OpenAIError" : "#/components/schemas/Error";
        for (const [status, res] of errors) {
          expect(`${name} ${status}: ${res.content?.["application/json"]?.schema?.$ref}`).toBe(`${name} ${status}: ${want}`);
        }
      }
    });

    it(`${file}: lists the default local server`, () => {
      const doc = JSON.parse(readFileSync(join(REPO, "openapi", file), "utf8")) as { servers: Array<{ url: string }> };
      expect(doc.servers.map((s) => s.url)).toEqual([file === "router.json" ? "http://127.0.0.1:8103" : "http://127.0.0.1:8200"]);
    });

    it(`${file}: redocly lint (redocly.yaml) finds 0 errors and 0 warnings`, async () => {
      const cli = join(REPO, "node_modules", "@redocly", "cli", "bin", "cli.js");
      const r = await run(["bun", cli, "lint", join("openapi", file), "--format=json"]);
      const report = JSON.parse(r.stdout) as {
        totals: { errors: number; warnings: number };
        problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }>;
      };
      const problems = report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
      expect(problems).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    }, 60_000);
  }
});

describe("a client generated with openapi-typescript + openapi-fetch", () => {
  const ROUTER_TOKEN = "sdk-router-token";
  const work = tempDir("sdk-client");
  let router: MainProcess;
  let orchestrator: Orchestrator;

  beforeAll(async () => {
    const agentHome = tempDir("sdk-agent");
    const hubUrl = await makeHub(join(agentHome, "hub-repo"));
    [router, orchestrator] = await Promise.all([
      startMain(
        ["--only", "router", "--vault", join(work, "vault")],
        { KB_ROUTER_TOKEN: ROUTER_TOKEN, ORCHESTRATOR_URL: "http://127.0.0.1:1" },
        { expect: ["router"] },
      ),
      startOrchestrator({
        env: {
          SERVICE_HUB_URL: hubUrl,
          HUB_AGENT: "deploy-helper",
          SERVICE_CLONE_ROOT: join(agentHome, "clones"),
          SERVICE_PACKAGE_DIR: join(agentHome, "package"),
        },
      }),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([router?.stop(), orchestrator?.stop()]);
  });

  it("generates, type-checks, and calls ingest, search, jobs and chat on the live services", async () => {
    // The README's commands: the types, then a program using them with openapi-fetch.
    const gen = await run(["bun", "run", "sdk-types", work]);
    expect(gen.stderr + gen.stdout).toContain("service.d.ts");
    expect(gen.code).toBe(0);
    copyFileSync(join(REPO, "test", "fixtures", "sdk-client", "program.ts"), join(work, "program.ts"));
    symlinkSync(join(REPO, "node_modules"), join(work, "node_modules"));
    writeFileSync(
      join(work, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ESNext",
          module: "Preserve",
          moduleResolution: "bundler",
          lib: ["ESNext"],
          types: ["bun"],
          strict: true,
          noUncheckedIndexedAccess: true,
          noEmit: true,
        },
        include: ["*.ts"],
      }),
    );

    const tsc = await run([join(REPO, "node_modules", ".bin", "tsc"), "-p", join(work, "tsconfig.json")], work);
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.code).toBe(0);

    const r = await run(["bun", "program.ts"], work, {
      ROUTER_URL: router.routerUrl!,
      ROUTER_TOKEN,
      SERVICE_URL: orchestrator.url,
      SERVICE_KEY: KEY,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.ingested.kind).toBe("note");
    expect(out.hits.length).toBeGreaterThan(0);
    expect(out.ingested.paths).toContain(out.hits[0]);
    expect(out.refused).toEqual({ status: 400, code: "invalid_request", field: "limit" });
    expect(out.job.status).toBe("succeeded");
    expect(out.job.output.length).toBeGreaterThan(0);
    expect(out.listed).toContain(out.job.id);
    expect(typeof out.reply).toBe("string");
    expect(out.reply.length).toBeGreaterThan(0);
    expect(out.unknownModel).toEqual({ status: 404, type: "not_found_error" });
  }, 120_000);
});
