// router-cli's stack commands and install, run as the compiled binary with a fixture
// `docker` on PATH that records its argv: deployment detection order, one stack per machine,
// volumes kept, and install's five rules against a temporary HOME.
import { beforeAll, describe, expect, it } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseDotenv } from "dotenv";
import { VERSION } from "../src/common/version";
import { compiledClis, fixturePath, runCompiled } from "./support/cli";
import { tempDir } from "./support/main-process";

interface Env {
  home: string;
  cwd: string;
  record: string;
  env: Record<string, string>;
}

function setup(extra: Record<string, string> = {}): Env {
  const home = tempDir("cli-home");
  const cwd = tempDir("cli-cwd");
  const record = join(tempDir("docker-record"), "argv.jsonl");
  return { home, cwd, record, env: { HOME: home, PATH: fixturePath({ docker: "fake-docker" }), FAKE_DOCKER_RECORD: record, ...extra } };
}

const calls = (e: Env): string[][] =>
  existsSync(e.record)
    ? readFileSync(e.record, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
/** The compose commands run (the `docker compose version` probe every stack command makes aside). */
const composeCalls = (e: Env) => calls(e).filter((a) => a[0] === "compose" && a[1] !== "version");
const cli = (e: Env, ...args: string[]) => runCompiled("router-cli", args, { env: e.env, cwd: e.cwd });
const writeCompose = (dir: string) => {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "compose.yml"), "name: brain\nservices:\n  brain-api:\n    image: x\n");
  return join(dir, "compose.yml");
};

beforeAll(async () => {
  await compiledClis();
}, 60_000);

describe("deployment detection", () => {
  it("exits 2 with a hint when no deployment is found", async () => {
    const e = setup();
    const r = await cli(e, "up");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no deployment found");
    expect(r.stderr).toContain("router-cli install");
    expect(composeCalls(e)).toEqual([]);
  });

  it("without the Compose plugin, every stack command exits 2 with a hint instead of docker's usage text", async () => {
    for (const command of ["status", "build", "down", "logs", "up"]) {
      const e = setup({ FAKE_DOCKER_NO_COMPOSE: "1" });
      writeCompose(e.cwd);
      const r = await cli(e, command);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("docker compose is not available");
      expect(r.stderr).toContain("docker-compose-plugin");
      expect(r.stderr).not.toContain("unknown shorthand flag");
      expect(r.stdout).toBe("");
      // Only the probe ran: nothing was started, stopped or listed.
      expect(calls(e).filter((a) => a[0] === "compose")).toEqual([["compose", "version"]]);
    }
  });

  it("without a docker client at all, a stack command exits 2 saying so", async () => {
    const e = setup({ PATH: fixturePath({}) });
    writeCompose(e.cwd);
    const r = await cli(e, "status");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("the docker client is not installed");
  });

  it("1. uses a compose.yml found walking up from the current directory", async () => {
    const e = setup();
    const file = writeCompose(e.cwd);
    const deeper = join(e.cwd, "a", "b");
    mkdirSync(deeper, { recursive: true });
    writeCompose(join(e.home, ".router"));
    const r = await runCompiled("router-cli", ["down"], { env: e.env, cwd: deeper });
    expect(r.code).toBe(0);
    expect(composeCalls(e)[0]).toEqual(["compose", "-f", file, "down"]);
  });

  it("2. else the stack holding the container router_brain_api", async () => {
    const repo = tempDir("running-stack");
    const file = writeCompose(repo);
    const e = setup({ FAKE_DOCKER_CONTAINER: `teamstack|${file}` });
    writeCompose(join(e.home, ".router"));
    const r = await cli(e, "down");
    expect(r.code).toBe(0);
    expect(calls(e)[0]).toEqual(["compose", "version"]);
    expect(calls(e)[1]?.[0]).toBe("inspect");
    expect(composeCalls(e)[0]).toEqual(["compose", "-p", "teamstack", "-f", file, "down"]);
  });

  it("3. else the path pinned as ROUTER_REPO in ~/.router/.env", async () => {
    const e = setup();
    const repo = tempDir("pinned");
    const file = writeCompose(repo);
    mkdirSync(join(e.home, ".router"), { recursive: true });
    writeFileSync(join(e.home, ".router", ".env"), `ROUTER_REPO=${repo}\n`);
    writeCompose(join(e.home, ".router"));
    const r = await cli(e, "down");
    expect(r.code).toBe(0);
    // A stack outside ~/.router/ runs with the client's env file (the token the client sends).
    expect(composeCalls(e)[0]).toEqual(["compose", "-f", file, "--env-file", join(e.home, ".router", ".env"), "down"]);
  });

  it("4. else the installed stack under ~/.router/", async () => {
    const e = setup();
    const file = writeCompose(join(e.home, ".router"));
    const r = await cli(e, "down");
    expect(r.code).toBe(0);
    expect(composeCalls(e)[0]).toEqual(["compose", "-f", file, "down"]);
  });
});

describe("stack commands", () => {
  it("up brings down other projects holding our names first, starts, migrates, lists", async () => {
    const e = setup({ FAKE_DOCKER_PS_PROJECTS: "old-brain,brain" });
    const file = writeCompose(e.cwd);
    const r = await cli(e, "up");
    expect(r.code).toBe(0);
    expect(composeCalls(e)).toEqual([
      ["compose", "-p", "old-brain", "down"],
      ["compose", "-f", file, "up", "-d"],
      ["compose", "-f", file, "exec", "-T", "brain-api", "router-cli", "migrate"],
      ["compose", "-f", file, "ps"],
    ]);
  });

  it("a checkout's stack runs with the client's env file, after the checkout's own .env", async () => {
    const e = setup();
    const file = writeCompose(e.cwd);
    writeFileSync(join(e.cwd, ".env"), "POSTGRES_PASSWORD=local\n");
    mkdirSync(join(e.home, ".router"), { recursive: true });
    writeFileSync(join(e.home, ".router", ".env"), "KB_ROUTER_TOKEN=from-install\n");
    expect((await cli(e, "up")).code).toBe(0);
    expect(composeCalls(e)[0]).toEqual(["compose", "-f", file, "--env-file", join(e.cwd, ".env"), "--env-file", join(e.home, ".router", ".env"), "up", "-d"]);
  });

  it("up exits 1 when docker compose fails", async () => {
    const e = setup({ FAKE_DOCKER_FAIL: "compose up" });
    writeCompose(e.cwd);
    expect((await cli(e, "up")).code).toBe(1);
  });

  it("down removes every stack and never removes volumes", async () => {
    const e = setup({ FAKE_DOCKER_PS_PROJECTS: "other" });
    const file = writeCompose(e.cwd);
    expect((await cli(e, "down")).code).toBe(0);
    expect(composeCalls(e)).toEqual([
      ["compose", "-f", file, "down"],
      ["compose", "-p", "other", "down"],
    ]);
    for (const argv of calls(e)) expect(argv.some((a) => a === "-v" || a === "--volumes")).toBe(false);
  });

  it("build [SERVICE...] brings down other stacks, rebuilds, recreates and lists", async () => {
    const e = setup({ FAKE_DOCKER_PS_PROJECTS: "old-brain" });
    const file = writeCompose(e.cwd);
    expect((await cli(e, "build", "brain-api", "mcp")).code).toBe(0);
    expect(composeCalls(e)).toEqual([
      ["compose", "-p", "old-brain", "down"],
      ["compose", "-f", file, "build", "brain-api", "mcp"],
      ["compose", "-f", file, "up", "-d", "--force-recreate", "brain-api", "mcp"],
      ["compose", "-f", file, "ps"],
    ]);
  });

  it("logs passes -f, --since and --tail through", async () => {
    const e = setup();
    const file = writeCompose(e.cwd);
    expect((await cli(e, "logs", "brain-api", "-f", "--since", "10m", "--tail", "50")).code).toBe(0);
    expect(composeCalls(e)).toEqual([["compose", "-f", file, "logs", "--follow", "--since", "10m", "--tail", "50", "brain-api"]]);
    expect((await cli(e, "logs", "--tail", "lots")).code).toBe(2);
  });

  it("status lists the containers, then says clearly that /health does not answer", async () => {
    const e = setup({ BRAIN_URL: "http://127.0.0.1:1" });
    const file = writeCompose(e.cwd);
    const r = await cli(e, "status");
    expect(composeCalls(e)).toEqual([["compose", "-f", file, "ps"]]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("does not answer at http://127.0.0.1:1");
  });

  it("uninstall --dry-run prints the plan and does nothing; uninstall stops stacks and unlinks, keeping config", async () => {
    const e = setup({ FAKE_DOCKER_PS_PROJECTS: "brain" });
    await cli(e, "install", "--no-stack");
    const link = join(e.home, ".claude", "profiles", "brain");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    const before = calls(e).length;
    const dry = await cli(e, "uninstall", "--dry-run");
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`remove the link ${link}`);
    expect(calls(e).filter((a) => a[0] === "compose").length).toBe(composeCalls(e).length);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    const real = await cli(e, "uninstall");
    expect(real.code).toBe(0);
    expect(
      calls(e)
        .slice(before)
        .filter((a) => a[0] === "compose"),
    ).toContainEqual(["compose", "-p", "brain", "down"]);
    expect(existsSync(link)).toBe(false);
    expect(existsSync(join(e.home, ".router", ".env"))).toBe(true);
  });
});

describe("install", () => {
  const envOf = (e: Env) => parseDotenv(readFileSync(join(e.home, ".router", ".env"), "utf8"));
  const snapshot = (dir: string) =>
    (readdirSync(dir, { recursive: true }) as string[]).sort().map((f) => {
      const p = join(dir, f);
      const st = lstatSync(p);
      return `${f}:${st.isSymbolicLink() ? `->${readlinkSync(p)}` : st.isFile() ? readFileSync(p, "utf8") : "dir"}`;
    });

  it("renders the stack, scaffolds the vault, completes the env file, creates the outbox, starts the stack, links the profile", async () => {
    const e = setup();
    const r = await cli(e, "install");
    expect(r.code).toBe(0);
    const compose = readFileSync(join(e.home, ".router", "compose.yml"), "utf8");
    expect(compose).toContain("router_brain_api");
    expect(compose).not.toMatch(/^\s+build:/m);
    // The stack mounts the vault install scaffolded (VAULT_PATH), not a volume nobody sees.
    expect(compose).toContain("- ${VAULT_PATH:-vault}:/vault");
    expect(existsSync(join(e.home, ".router", "deploy", "otel-collector.yaml"))).toBe(true);
    expect(existsSync(join(e.home, ".router", "deploy", "otel-collector-tracing.yaml"))).toBe(true);
    expect(existsSync(join(e.home, "brain-vault", ".brain-schema"))).toBe(true);
    const env = envOf(e);
    expect(env.KB_ROUTER_TOKEN).toMatch(/^[0-9a-f]{48}$/);
    expect(env.BRAIN_URL).toBe("http://localhost:8103");
    expect(env.EMBEDDINGS_KEY_ID).toMatch(/^emb_/);
    expect(env.EMBEDDINGS_API_KEY).toMatch(/^[0-9a-f]{48}$/);
    expect(env).toMatchObject({ PORT_BRAIN_API: "8103", PORT_BRAIN_MCP: "8104", BIND_HOST: "0.0.0.0", TICK_INTERVAL_SECONDS: "7200", AMYGDALA_ENABLED: "1" });
    expect(env.VAULT_PATH).toBe(join(e.home, "brain-vault"));
    // Defaults built from other variables stay in the compose file.
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.BRAIN_OUTBOX).toBe(join(e.home, ".router", "outbox"));
    expect(existsSync(join(e.home, ".router", "outbox"))).toBe(true);
    expect(existsSync(join(e.home, ".router", "backlog"))).toBe(true);
    expect((lstatSync(join(e.home, ".router", ".env")).mode & 0o777).toString(8)).toBe("600");
    const file = join(e.home, ".router", "compose.yml");
    expect(composeCalls(e)).toEqual([
      ["compose", "-f", file, "up", "-d"],
      ["compose", "-f", file, "exec", "-T", "brain-api", "router-cli", "migrate"],
    ]);
    expect(readlinkSync(join(e.home, ".claude", "profiles", "brain"))).toBe(join(e.home, ".router", "profiles", "default"));
    expect(readFileSync(join(e.home, ".router", "profiles", "default", "CLAUDE.md"), "utf8")).toContain("@lesson");
  });

  it("in a checkout reuses its stack, brings down other stacks first and starts it with the client env file", async () => {
    const e = setup({ FAKE_DOCKER_PS_PROJECTS: "old-brain" });
    const file = writeCompose(e.cwd);
    const r = await cli(e, "install", "--no-link");
    expect(r.code).toBe(0);
    expect(existsSync(join(e.home, ".router", "compose.yml"))).toBe(false);
    const envFile = join(e.home, ".router", ".env");
    expect(composeCalls(e)).toEqual([
      ["compose", "-p", "old-brain", "down"],
      ["compose", "-f", file, "--env-file", envFile, "up", "-d"],
      ["compose", "-f", file, "--env-file", envFile, "exec", "-T", "brain-api", "router-cli", "migrate"],
    ]);
  });

  it("exits 1 when the stack does not start, after writing the env file", async () => {
    const e = setup({ FAKE_DOCKER_FAIL: "compose up" });
    const r = await cli(e, "install", "--no-link");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("docker compose up failed");
    expect(envOf(e).KB_ROUTER_TOKEN).toMatch(/^[0-9a-f]{48}$/);
  });

  it("changes nothing the second time", async () => {
    const e = setup();
    expect((await cli(e, "install")).code).toBe(0);
    const first = snapshot(e.home);
    expect((await cli(e, "install")).code).toBe(0);
    expect(snapshot(e.home)).toEqual(first);
  });

  it("--dry-run prints the plan and writes nothing", async () => {
    const e = setup();
    const r = await cli(e, "install", "--dry-run");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("1. render the bundled stack");
    expect(readdirSync(e.home)).toEqual([]);
    expect(composeCalls(e)).toEqual([]);
    // Nor over an existing, incomplete install: the plan names what a real run would add.
    mkdirSync(join(e.home, ".router"), { recursive: true });
    writeFileSync(join(e.home, ".router", ".env"), "KB_ROUTER_TOKEN=mine\nBRAIN_URL=http://localhost:8102\n");
    const before = snapshot(e.home);
    const again = await cli(e, "install", "--dry-run");
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("migrate BRAIN_URL");
    expect(snapshot(e.home)).toEqual(before);
    expect(composeCalls(e)).toEqual([]);
  });

  it("writes BRAIN_URL beside an existing bearer that lacks it (rule 5: else every marker POST answers 401)", async () => {
    const e = setup();
    mkdirSync(join(e.home, ".router"), { recursive: true });
    writeFileSync(join(e.home, ".router", ".env"), "KB_ROUTER_TOKEN=mine\nPORT_BRAIN_API=9103\n");
    expect((await cli(e, "install", "--no-stack", "--no-link")).code).toBe(0);
    expect(envOf(e)).toMatchObject({ KB_ROUTER_TOKEN: "mine", PORT_BRAIN_API: "9103", BRAIN_URL: "http://localhost:9103" });
  });

  it("keeps existing values and migrates retired client defaults", async () => {
    const e = setup();
    mkdirSync(join(e.home, ".router"), { recursive: true });
    writeFileSync(
      join(e.home, ".router", ".env"),
      `# mine\nKB_ROUTER_TOKEN=keep-me\nBRAIN_URL=http://localhost:8102\nCUSTOM=1\nPORT_BRAIN_API=8102\nBRAIN_OUTBOX=${e.home}/.brain/outbox\nAMYGDALA_MIN_SEVERITY=medium\nAMYGDALA_ENABLED=0\n`,
    );
    expect((await cli(e, "install", "--no-stack")).code).toBe(0);
    const text = readFileSync(join(e.home, ".router", ".env"), "utf8");
    expect(text).toStartWith(
      `# mine\nKB_ROUTER_TOKEN=keep-me\nBRAIN_URL=http://localhost:8103\nCUSTOM=1\nPORT_BRAIN_API=8103\nBRAIN_OUTBOX=${e.home}/.router/outbox\nAMYGDALA_MIN_SEVERITY=high\nAMYGDALA_ENABLED=0\n`,
    );
    expect(envOf(e).VAULT_PATH).toBe(join(e.home, "brain-vault"));

    // A retired port with no BRAIN_URL beside it yields the new default URL, not the old one.
    const e2 = setup();
    mkdirSync(join(e2.home, ".router"), { recursive: true });
    writeFileSync(join(e2.home, ".router", ".env"), "PORT_BRAIN_API=8102\n");
    expect((await cli(e2, "install", "--no-stack", "--no-link")).code).toBe(0);
    expect(envOf(e2)).toMatchObject({ PORT_BRAIN_API: "8103", BRAIN_URL: "http://localhost:8103" });
  });

  it("migrates the retired outbox however its home was written (~, $HOME, a trailing slash), to a path the hooks can use", async () => {
    for (const old of ["~/.brain/outbox", "$HOME/.brain/outbox", "~/.brain/outbox/", '"~/.brain/outbox"']) {
      const e = setup();
      mkdirSync(join(e.home, ".router"), { recursive: true });
      writeFileSync(join(e.home, ".router", ".env"), `KB_ROUTER_TOKEN=mine\nBRAIN_OUTBOX=${old}\n`);
      const r = await cli(e, "install", "--no-stack");
      expect(r.code).toBe(0);
      expect(readFileSync(join(e.home, ".router", ".env"), "utf8")).toStartWith(`KB_ROUTER_TOKEN=mine\nBRAIN_OUTBOX=${e.home}/.router/outbox\n`);
      // The hooks Claude Code runs get the same absolute outbox.
      const settings = JSON.parse(readFileSync(join(e.home, ".claude", "settings.json"), "utf8"));
      expect(settings.env.BRAIN_OUTBOX).toBe(join(e.home, ".router", "outbox"));
    }
    // Someone else's outbox under ~ is theirs: kept.
    const e = setup();
    mkdirSync(join(e.home, ".router"), { recursive: true });
    writeFileSync(join(e.home, ".router", ".env"), "KB_ROUTER_TOKEN=mine\nBRAIN_OUTBOX=~/my/outbox\n");
    expect((await cli(e, "install", "--no-stack", "--no-link")).code).toBe(0);
    expect(envOf(e).BRAIN_OUTBOX).toBe("~/my/outbox");
  });

  it("writes the model keys only when the compose file supplies them, and names those left to set", async () => {
    const e = setup();
    const r = await cli(e, "install", "--no-stack");
    const env = envOf(e);
    for (const k of ["LLM_API_KEY", "LLM_API_BASE", "INFERENCE_URL", "INFERENCE_API_KEY"]) expect(env[k]).toBeUndefined();
    expect(r.stderr + r.stdout).toContain("left to set");
    expect(r.stderr + r.stdout).toContain("LLM_API_KEY");

    const e2 = setup();
    writeFileSync(
      join(e2.cwd, "compose.yml"),
      "name: brain\nservices:\n  brain-api:\n    image: x\n    environment:\n      LLM_API_BASE: ${LLM_API_BASE:-http://gateway:4000/v1}\n",
    );
    await cli(e2, "install", "--no-stack");
    expect(envOf(e2).LLM_API_BASE).toBe("http://gateway:4000/v1");
    expect(existsSync(join(e2.home, ".router", "compose.yml"))).toBe(false);
  });

  it("with --brain-url is client-only: no stack, no vault; it needs --token", async () => {
    const e = setup();
    const bad = await cli(e, "install", "--brain-url", "https://brain.team.example");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--token");
    const r = await cli(e, "install", "--brain-url", "https://brain.team.example", "--token", "team-token");
    expect(r.code).toBe(0);
    const env = envOf(e);
    expect(env).toMatchObject({ BRAIN_URL: "https://brain.team.example", KB_ROUTER_TOKEN: "team-token" });
    expect(env.VAULT_PATH).toBeUndefined();
    expect(existsSync(join(e.home, ".router", "compose.yml"))).toBe(false);
    expect(existsSync(join(e.home, "brain-vault"))).toBe(false);
    expect(composeCalls(e)).toEqual([]);
    expect(existsSync(join(e.home, ".router", "outbox"))).toBe(true);
  });

  it("uses external object storage with --s3-bucket and --s3-endpoint (both or neither)", async () => {
    const e = setup();
    expect((await cli(e, "install", "--s3-bucket", "b")).code).toBe(2);
    expect((await cli(e, "install", "--no-stack", "--s3-bucket", "team-bundles", "--s3-endpoint", "https://s3.example")).code).toBe(0);
    const rendered = readFileSync(join(e.home, ".router", "compose.yml"), "utf8");
    expect(rendered).not.toMatch(/^ {2}object-store:/m);
    expect(rendered).not.toMatch(/^ {2}object-store-init:/m);
    expect(envOf(e)).toMatchObject({ S3_BUCKET: "team-bundles", S3_ENDPOINT: "https://s3.example" });
  });

  it("points the stack at your own Postgres and Redis with --postgres-url and --redis-url", async () => {
    const e = setup();
    expect(
      (await cli(e, "install", "--no-stack", "--postgres-url", "postgres://me@db.example:5432/brain", "--redis-url", "redis://cache.example:6379")).code,
    ).toBe(0);
    expect(envOf(e)).toMatchObject({ DATABASE_URL: "postgres://me@db.example:5432/brain", REDIS_URL: "redis://cache.example:6379" });
    const rendered = readFileSync(join(e.home, ".router", "compose.yml"), "utf8");
    expect(rendered).toContain("DATABASE_URL: ${DATABASE_URL:-");
    expect(rendered).toContain("REDIS_URL: ${REDIS_URL:-");
  });

  it("honours --vault, --name, --no-init, --no-link and refuses an unknown --profile or --for-target (exit 2)", async () => {
    const e = setup();
    const vault = join(e.cwd, "team-vault");
    expect((await cli(e, "install", "--no-stack", "--vault", vault, "--name", "work")).code).toBe(0);
    expect(existsSync(join(vault, ".brain-schema"))).toBe(true);
    expect(envOf(e).VAULT_PATH).toBe(vault);
    expect(readlinkSync(join(e.home, ".claude", "profiles", "work"))).toBe(join(e.home, ".router", "profiles", "default"));
    // uninstall --no-unlink keeps that link.
    expect((await cli(e, "uninstall", "--name", "work", "--no-unlink")).code).toBe(0);
    expect(lstatSync(join(e.home, ".claude", "profiles", "work")).isSymbolicLink()).toBe(true);

    const e2 = setup();
    expect((await cli(e2, "install", "--no-stack", "--no-init", "--no-link")).code).toBe(0);
    expect(existsSync(join(e2.home, "brain-vault"))).toBe(false);
    expect(existsSync(join(e2.home, ".claude"))).toBe(false);
    expect(existsSync(join(e2.home, ".router", ".env"))).toBe(true);

    const e3 = setup();
    const badProfile = await cli(e3, "install", "--profile", "nope");
    expect(badProfile.code).toBe(2);
    expect(badProfile.stderr).toContain("--profile must be one of: default");
    expect((await cli(e3, "install", "--for-target", "nope")).code).toBe(2);
    expect(readdirSync(e3.home)).toEqual([]);
  });

  it("bundles local inference with --ollama", async () => {
    const e = setup();
    expect((await cli(e, "install", "--no-stack", "--ollama")).code).toBe(0);
    expect(envOf(e)).toMatchObject({ COMPOSE_PROFILES: "ollama", INFERENCE_URL: "http://inference:11434" });
  });

  describe("the image (nobody publishes one: install builds it when it is not present locally)", () => {
    const image = `brain-stack:${VERSION}`;
    const fakeCheckout = (dir: string) => {
      writeCompose(dir);
      writeFileSync(join(dir, "Dockerfile"), "FROM oven/bun:1.4\n");
      writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "brain-stack" }));
      return dir;
    };
    const imageCalls = (e: Env) => calls(e).filter((a) => a[0] === "build" || a[0] === "image" || a[0] === "compose");

    it("in a checkout without the image: builds it from the checkout's Dockerfile, then starts the stack", async () => {
      const e = setup({ FAKE_DOCKER_IMAGES: "" });
      const dir = fakeCheckout(e.cwd);
      const r = await cli(e, "install", "--no-link");
      expect(r.code).toBe(0);
      expect(envOf(e).BRAIN_IMAGE).toBe(image);
      const seen = imageCalls(e);
      expect(seen[0]).toEqual(["image", "inspect", "--format", "{{.Id}}", image]);
      expect(seen[1]).toEqual(["build", "-t", image, "-f", join(dir, "Dockerfile"), dir]);
      expect(seen[2]!.slice(0, 3)).toEqual(["compose", "-f", join(dir, "compose.yml")]);
      expect(seen[2]).toContain("up");
    });

    it("an installed stack builds from --source, and the rendered compose file runs that image", async () => {
      const e = setup({ FAKE_DOCKER_IMAGES: "" });
      const src = fakeCheckout(tempDir("checkout"));
      const r = await cli(e, "install", "--no-link", "--source", src);
      expect(r.code).toBe(0);
      expect(calls(e).filter((a) => a[0] === "build")).toEqual([["build", "-t", image, "-f", join(src, "Dockerfile"), src]]);
      expect(readFileSync(join(e.home, ".router", "compose.yml"), "utf8")).toContain("image: ${BRAIN_IMAGE:-brain-stack:local}");
      expect(envOf(e).BRAIN_IMAGE).toBe(image);
    });

    it("does not build an image that is present", async () => {
      const e = setup({ FAKE_DOCKER_IMAGES: image });
      fakeCheckout(e.cwd);
      expect((await cli(e, "install", "--no-link")).code).toBe(0);
      expect(calls(e).filter((a) => a[0] === "build")).toEqual([]);
      expect(composeCalls(e).some((a) => a.includes("up"))).toBe(true);
    });

    it("without the image and without a checkout: exit 1 saying what to pass, and no stack started", async () => {
      const e = setup({ FAKE_DOCKER_IMAGES: "" });
      const r = await cli(e, "install", "--no-link");
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`the image ${image} is not present locally`);
      expect(r.stderr).toContain("--source");
      expect(calls(e).filter((a) => a[0] === "build")).toEqual([]);
      expect(composeCalls(e)).toEqual([]);
      // --source that is no checkout is named as such.
      const bad = await cli(e, "install", "--no-link", "--source", tempDir("not-a-checkout"));
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain("is not a brain-stack checkout");
    });

    it("exits 1 when the build fails, before starting anything", async () => {
      const e = setup({ FAKE_DOCKER_IMAGES: "", FAKE_DOCKER_FAIL: "build" });
      fakeCheckout(e.cwd);
      const r = await cli(e, "install", "--no-link");
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`docker build of ${image}`);
      expect(composeCalls(e).some((a) => a.includes("up"))).toBe(false);
    });

    it("migrates the unpublished registry name an older install wrote", async () => {
      const e = setup();
      mkdirSync(join(e.home, ".router"), { recursive: true });
      writeFileSync(join(e.home, ".router", ".env"), `KB_ROUTER_TOKEN=mine\nBRAIN_IMAGE=ghcr.io/brain-stack/brain-stack:${VERSION}\n`);
      expect((await cli(e, "install", "--no-stack", "--no-link")).code).toBe(0);
      expect(envOf(e).BRAIN_IMAGE).toBe(image);
    });
  });
});

describe("scaffold", () => {
  it("writes the layout at PATH, and a second run reports it complete", async () => {
    const e = setup();
    const vault = join(e.cwd, "my-vault");
    const first = await cli(e, "scaffold", vault);
    expect(first.code).toBe(0);
    expect(existsSync(join(vault, ".brain-schema"))).toBe(true);
    expect(existsSync(join(vault, "left", "reference"))).toBe(true);
    const second = await cli(e, "scaffold", vault);
    expect(second.code).toBe(0);
    expect(second.stdout + second.stderr).toContain("layout already complete");
  });

  it("exits 1 with a clear message when the path cannot be a folder", async () => {
    const e = setup();
    writeFileSync(join(e.cwd, "a-file"), "x");
    const r = await cli(e, "scaffold", join(e.cwd, "a-file"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("cannot scaffold");
  });
});
