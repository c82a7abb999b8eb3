// service-cli agent and push drive the docker CLI (no engine runs here): the compiled binary
// with the fixture `docker` on PATH, which records its argv. Exact invocations and exit codes.
import { beforeAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compiledClis, fixturePath } from "./support/cli";
import { tempDir } from "./support/main-process";
import { svc } from "./support/service-cli";

// Each test starts processes (servers, the compiled CLI): more room than bun's 5 s default.
setDefaultTimeout(30_000);

interface Setup {
  home: string;
  /** A checkout: Dockerfile and compose.yml at its root. */
  repo: string;
  /** Where the CLI runs: a folder inside the checkout. */
  cwd: string;
  record: string;
  env: Record<string, string>;
}

function setup(extra: Record<string, string> = {}): Setup {
  const home = tempDir("cli-home");
  const repo = tempDir("checkout");
  writeFileSync(join(repo, "Dockerfile"), "FROM scratch\n");
  writeFileSync(join(repo, "compose.yml"), "services:\n  orchestrator:\n    image: x\n");
  const cwd = join(repo, "src", "deep");
  mkdirSync(cwd, { recursive: true });
  const record = join(tempDir("docker-record"), "argv.jsonl");
  return { home, repo, cwd, record, env: { HOME: home, PATH: fixturePath({ docker: "fake-docker" }), FAKE_DOCKER_RECORD: record, ...extra } };
}

const calls = (s: Setup): string[][] =>
  existsSync(s.record)
    ? readFileSync(s.record, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
const cli = (s: Setup, ...args: string[]) => svc(args, s.env, { cwd: s.cwd });
const INSPECT = ["inspect", "--format", "{{.State.Running}}", "brain-stack-agent"];

beforeAll(async () => {
  await compiledClis();
}, 120_000);

describe("agent", () => {
  it("--build / -b builds brain-stack:local (the name compose.yml runs) from the Dockerfile found walking up", async () => {
    const s = setup();
    expect((await cli(s, "agent", "--build")).code).toBe(0);
    expect((await cli(s, "agent", "-b")).code).toBe(0);
    expect(calls(s)).toEqual([
      ["build", "-t", "brain-stack:local", s.repo],
      ["build", "-t", "brain-stack:local", s.repo],
    ]);
  });

  it("--build builds the image BRAIN_IMAGE names instead, as compose.yml would run it", async () => {
    const s = setup({ BRAIN_IMAGE: "brain-stack:0.1.0" });
    expect((await cli(s, "agent", "--build")).code).toBe(0);
    expect(calls(s)).toEqual([["build", "-t", "brain-stack:0.1.0", s.repo]]);
  });

  it("--run / -r starts it detached, port 8200 on 127.0.0.1, with the .env found walking up", async () => {
    const s = setup();
    writeFileSync(join(s.repo, ".env"), "HUB_AGENT=deploy-helper\n");
    const r = await cli(s, "agent", "--run");
    expect(r.code).toBe(0);
    expect(calls(s)).toEqual([
      INSPECT,
      [
        "run",
        "-d",
        "--name",
        "brain-stack-agent",
        "-p",
        "127.0.0.1:8200:8200",
        "--env-file",
        join(s.repo, ".env"),
        "-e",
        "SERVICE_ALLOW_NO_AUTH=1",
        "brain-stack:local",
        "--only",
        "orchestrator",
      ],
    ]);
    expect(r.stdout + r.stderr).toContain("http://127.0.0.1:8200");
  });

  it("-r publishes on SERVICE_PORT, takes ~/.service/.env when there is none above, and replaces a stopped container", async () => {
    const s = setup({ SERVICE_PORT: "8300", FAKE_DOCKER_CONTAINER: "false" });
    mkdirSync(join(s.home, ".service"), { recursive: true });
    writeFileSync(join(s.home, ".service", ".env"), "SERVICE_API_KEYS=k\n");
    expect((await cli(s, "agent", "-r")).code).toBe(0);
    expect(calls(s)).toEqual([
      INSPECT,
      ["rm", "brain-stack-agent"],
      [
        "run",
        "-d",
        "--name",
        "brain-stack-agent",
        "-p",
        "127.0.0.1:8300:8200",
        "--env-file",
        join(s.home, ".service", ".env"),
        "-e",
        "SERVICE_ALLOW_NO_AUTH=1",
        "brain-stack:local",
        "--only",
        "orchestrator",
      ],
    ]);
  });

  it("--run leaves a running container alone", async () => {
    const s = setup({ FAKE_DOCKER_CONTAINER: "true" });
    const r = await cli(s, "agent", "--run");
    expect(r.code).toBe(0);
    expect(calls(s)).toEqual([INSPECT]);
    expect(r.stderr).toContain("already running");
  });

  it("--enter / -e opens bash in the running container; exit 1 when it is not running", async () => {
    const up = setup({ FAKE_DOCKER_CONTAINER: "true" });
    expect((await cli(up, "agent", "-e")).code).toBe(0);
    expect(calls(up)).toEqual([INSPECT, ["exec", "-it", "brain-stack-agent", "bash"]]);
    const down = setup();
    const r = await cli(down, "agent", "--enter");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("service-cli agent --run");
    expect(calls(down)).toEqual([INSPECT]);
  });

  it("--stop / -s stops and removes it; nothing to do when there is none", async () => {
    const up = setup({ FAKE_DOCKER_CONTAINER: "true" });
    expect((await cli(up, "agent", "--stop")).code).toBe(0);
    expect(calls(up)).toEqual([INSPECT, ["stop", "brain-stack-agent"], ["rm", "brain-stack-agent"]]);
    const stopped = setup({ FAKE_DOCKER_CONTAINER: "false" });
    expect((await cli(stopped, "agent", "-s")).code).toBe(0);
    expect(calls(stopped)).toEqual([INSPECT, ["rm", "brain-stack-agent"]]);
    const none = setup();
    expect((await cli(none, "agent", "-s")).code).toBe(0);
    expect(calls(none)).toEqual([INSPECT]);
  });

  it("--logs / -l follows its logs", async () => {
    const s = setup({ FAKE_DOCKER_CONTAINER: "true" });
    expect((await cli(s, "agent", "-l")).code).toBe(0);
    expect(calls(s)).toEqual([INSPECT, ["logs", "-f", "brain-stack-agent"]]);
  });

  it("--list lists the containers", async () => {
    const s = setup();
    expect((await cli(s, "agent", "--list")).code).toBe(0);
    expect(calls(s)).toEqual([["ps", "-a", "--format", "table {{.Names}}\t{{.Status}}\t{{.Image}}\t{{.Ports}}"]]);
  });

  it("--compose-up, --compose-down, --compose-enter, --compose-logs use the compose file found walking up", async () => {
    const s = setup();
    const file = join(s.repo, "compose.yml");
    for (const a of ["--compose-up", "--compose-down", "--compose-enter", "--compose-logs"]) expect((await cli(s, "agent", a)).code).toBe(0);
    expect(calls(s)).toEqual([
      ["compose", "-f", file, "up", "--build", "-d", "orchestrator"],
      ["compose", "-f", file, "down"],
      ["compose", "-f", file, "exec", "orchestrator", "bash"],
      ["compose", "-f", file, "logs", "-f", "orchestrator"],
    ]);
  });

  it("exits 1 when docker fails", async () => {
    const s = setup({ FAKE_DOCKER_FAIL: "build" });
    expect((await cli(s, "agent", "--build")).code).toBe(1);
  });

  it("exits 2 with no action, two actions, no Dockerfile or no compose file — and runs no docker", async () => {
    const s = setup();
    expect((await cli(s, "agent")).code).toBe(2);
    expect((await cli(s, "agent", "--build", "--run")).code).toBe(2);
    const bare = { ...s, cwd: tempDir("no-checkout") };
    expect((await cli(bare, "agent", "--build")).code).toBe(2);
    expect((await cli(bare, "agent", "--compose-up")).code).toBe(2);
    expect(calls(s)).toEqual([]);
  });
});

describe("push", () => {
  const REGISTRY = { DOCKER_REGISTRY: "registry.example/acme" };

  it("--main builds and pushes $DOCKER_REGISTRY/brain-stack:latest", async () => {
    const s = setup(REGISTRY);
    const r = await cli(s, "push", "--main");
    expect(r.code).toBe(0);
    expect(calls(s)).toEqual([
      ["build", "-t", "registry.example/acme/brain-stack:latest", s.repo],
      ["push", "registry.example/acme/brain-stack:latest"],
    ]);
  });

  it("-a -t 1.2.3 --no-cache builds without the cache under the tag", async () => {
    const s = setup(REGISTRY);
    expect((await cli(s, "push", "-a", "-t", "1.2.3", "--no-cache")).code).toBe(0);
    expect(calls(s)).toEqual([
      ["build", "--no-cache", "-t", "registry.example/acme/brain-stack:1.2.3", s.repo],
      ["push", "registry.example/acme/brain-stack:1.2.3"],
    ]);
  });

  it("--build-only builds, --push-only pushes", async () => {
    const b = setup(REGISTRY);
    expect((await cli(b, "push", "-m", "--build-only")).code).toBe(0);
    expect(calls(b)).toEqual([["build", "-t", "registry.example/acme/brain-stack:latest", b.repo]]);
    const p = setup(REGISTRY);
    expect((await cli(p, "push", "-m", "--push-only", "--tag", "v2")).code).toBe(0);
    expect(calls(p)).toEqual([["push", "registry.example/acme/brain-stack:v2"]]);
  });

  it("exits 1 when the build fails, and pushes nothing", async () => {
    const s = setup({ ...REGISTRY, FAKE_DOCKER_FAIL: "build" });
    expect((await cli(s, "push", "--main")).code).toBe(1);
    expect(calls(s)).toEqual([["build", "-t", "registry.example/acme/brain-stack:latest", s.repo]]);
  });

  it("exits 2 without DOCKER_REGISTRY, without --main/--all, with both --build-only and --push-only, or a bad tag", async () => {
    const s = setup();
    const noRegistry = await cli(s, "push", "--main");
    expect(noRegistry.code).toBe(2);
    expect(noRegistry.stderr).toContain("DOCKER_REGISTRY");
    const r = setup(REGISTRY);
    const unnamed = await cli(r, "push");
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain("push needs --main or --all");
    expect((await cli(r, "push", "-m", "--build-only", "--push-only")).code).toBe(2);
    expect((await cli(r, "push", "-m", "-t", "no/slashes")).code).toBe(2);
    expect([...calls(s), ...calls(r)]).toEqual([]);
  });
});
