// The one error idiom of both CLIs (cli/_errors.ts), as a user meets it: the compiled router-cli
// and service-cli against the real router and orchestrator print the same one line on stderr,
// nothing on stdout, and the same exit code for the same kind of trouble — a server that does
// not answer (1), a refused or missing credential (1), a mistake in what was typed or a body the
// server rejects as invalid (2).
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { join } from "node:path";
import { compiledClis, runCompiled } from "./support/cli";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { type Orchestrator, startOrchestrator } from "./support/orchestrator-process";
import { deadPort, envFor, jobRecord, lines, writeJob } from "./support/service-cli";

setDefaultTimeout(30_000);

const TOKEN = "cli-errors-token";
let router: MainProcess;
let orchestrator: Orchestrator;

beforeAll(async () => {
  [router, orchestrator] = await Promise.all([
    startMain(
      ["--only", "router", "--vault", join(tempDir("cli-errors"), "v")],
      { KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0" },
      { expect: ["router"] },
    ),
    startOrchestrator(),
    compiledClis(),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all([router?.stop(), orchestrator?.stop()]);
});

interface Cli {
  name: "router-cli" | "service-cli";
  server: string;
  /** a command that calls the server */
  call: string[];
  /** the environment that reaches the live server with a good credential */
  env: () => Record<string, string>;
  dead: () => Record<string, string>;
  wrongCredential: () => Record<string, string>;
  noCredential: () => Record<string, string>;
  credential: string;
  credentialVar: string;
  /** a flag value the CLI itself refuses */
  badFlag: string[];
  /** input only the server can judge, and refuses with 400 */
  badInput: string[];
}

const CLIS: Cli[] = [
  {
    name: "router-cli",
    server: "router",
    call: ["search", "anything"],
    env: () => ({ HOME: tempDir("cli-home"), BRAIN_URL: router.routerUrl!, KB_ROUTER_TOKEN: TOKEN }),
    dead: () => ({ HOME: tempDir("cli-home"), BRAIN_URL: `http://127.0.0.1:${deadPort()}`, KB_ROUTER_TOKEN: TOKEN }),
    wrongCredential: () => ({ HOME: tempDir("cli-home"), BRAIN_URL: router.routerUrl!, KB_ROUTER_TOKEN: "wrong" }),
    noCredential: () => ({ HOME: tempDir("cli-home"), BRAIN_URL: router.routerUrl! }),
    credential: "router token",
    credentialVar: "KB_ROUTER_TOKEN",
    badFlag: ["get", "raw/x.md", "--max-chars", "0"],
    badInput: ["recent", "--limit", "100000"],
  },
  {
    name: "service-cli",
    server: "orchestrator",
    call: ["jobs"],
    env: () => envFor(orchestrator),
    dead: () => envFor(orchestrator, { SERVICE_PORT: deadPort() }),
    wrongCredential: () => envFor(orchestrator, { SERVICE_API_KEY: "wrong" }),
    noCredential: () => {
      const { SERVICE_API_KEY: _, ...env } = envFor(orchestrator);
      return env;
    },
    credential: "API key",
    credentialVar: "SERVICE_API_KEY",
    badFlag: ["jobs", "--limit", "0"],
    badInput: ["run", "Explain it", "--repo", "not a url"],
  },
];

/** The one line a failure prints (consola's ERROR tag aside). */
async function failing(cli: Cli, args: string[], env: Record<string, string>): Promise<{ code: number; line: string }> {
  const r = await runCompiled(cli.name, args, { env });
  expect(r.stdout).toBe("");
  const printed = lines(r.stderr);
  expect(printed).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\bat .*\.(ts|js):\d+/); // no stack trace
  return { code: r.code, line: printed[0]!.replace(/^ERROR\s+/, "") };
}

for (const cli of CLIS) {
  describe(`${cli.name}: the shared failure lines`, () => {
    it("works against the live server (the cases below differ only in what they break)", async () => {
      const r = await runCompiled(cli.name, cli.call, { env: cli.env() });
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    });

    it("a server that does not answer: exit 1, naming the server, the URL and why", async () => {
      const env = cli.dead();
      const url = env.BRAIN_URL ?? `http://127.0.0.1:${env.SERVICE_PORT}`;
      const { code, line } = await failing(cli, cli.call, env);
      expect(code).toBe(1);
      expect(line.startsWith(`the ${cli.server} does not answer at ${url} (connection refused): `)).toBe(true);
    });

    it("a refused credential: exit 1, saying where the credential came from and where to set it", async () => {
      const { code, line } = await failing(cli, cli.call, cli.wrongCredential());
      expect(code).toBe(1);
      expect(line).toStartWith(`the ${cli.credential} from ${cli.credentialVar} was refused (401 unauthorized): set ${cli.credentialVar}`);
    });

    it("no credential at all: exit 1, saying so rather than that one was refused", async () => {
      const { code, line } = await failing(cli, cli.call, cli.noCredential());
      expect(code).toBe(1);
      expect(line).toStartWith(`no ${cli.credential}: set ${cli.credentialVar}`);
    });

    it("a flag value the CLI refuses: exit 2 before any call, naming the flag", async () => {
      const { code, line } = await failing(cli, cli.badFlag, cli.dead());
      expect(code).toBe(2);
      expect(line).toContain(cli.badFlag[cli.badFlag.length - 2]!);
    });

    it("input the server rejects as invalid (400): exit 2 with the server's code and message", async () => {
      const { code, line } = await failing(cli, cli.badInput, cli.env());
      expect(code).toBe(2);
      expect(line).toMatch(/^400 [a-z_]+: \S/);
    });

    it("an unknown flag: exit 2, naming it", async () => {
      const r = await runCompiled(cli.name, [...cli.call, "--wiat"], { env: cli.dead() });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain("unknown flag --wiat");
    });
  });
}

describe("router-cli hook: its fast path takes exactly `hook <event>`", () => {
  it("refuses a stray flag after the event like any command (exit 2), and never runs the hook then", async () => {
    const r = await runCompiled("router-cli", ["hook", "prompt", "--wiat"], { env: CLIS[0]!.env() });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("unknown flag --wiat");
    expect(r.stderr).not.toContain("router-cli hook:");
  });
});

describe("router-cli: the credential's source in the refused line", () => {
  it("names --token when the token came from the command line", async () => {
    const { code, line } = await failing(CLIS[0]!, [...CLIS[0]!.call, "--token", "wrong"], CLIS[0]!.noCredential());
    expect(code).toBe(1);
    expect(line).toStartWith("the router token from --token was refused (401 unauthorized)");
  });
});

describe("the exit after a command", () => {
  it("never cuts a long answer to a slow reader short (service-cli jobs --json, ~4 MB)", async () => {
    for (let i = 0; i < 1000; i++) writeJob(orchestrator.jobsDir, jobRecord({ task: `Long ${i}`, output: "o".repeat(4_000) }));
    const cli = join(await compiledClis(), "service-cli");
    // The reader starts late on purpose: that is the slow consumer under test (a pager, a busy
    // pipeline). A write still queued when the CLI exits would be lost.
    const proc = Bun.spawn(["sh", "-c", `"${cli}" jobs --json --limit 1000 | (sleep 0.5; cat)`], {
      env: { ...envFor(orchestrator), PATH: "/usr/bin:/bin" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout.length).toBeGreaterThan(4_000_000);
    expect((JSON.parse(stdout) as { jobs: unknown[] }).jobs).toHaveLength(1000);
  });
});
