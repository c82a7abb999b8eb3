// The compiled clients, as a user runs them: built by `bun run build` into a temp dir,
// then spawned by absolute path with an empty PATH, so no `bun` is there to lean on.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };

const root = join(import.meta.dir, "..");
let outdir = "";

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), "brain-stack-cli-"));
  const build = Bun.spawn([process.execPath, "run", "build", "--outdir", outdir], {
    cwd: root,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stderr, code] = await Promise.all([new Response(build.stderr).text(), build.exited]);
  if (code !== 0) throw new Error(`bun run build failed (exit ${code}):\n${stderr}`);
}, 60_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

async function cli(name: string, ...args: string[]) {
  const proc = Bun.spawn([join(outdir, name), ...args], {
    cwd: outdir, // no package.json, bunfig.toml or .env to find
    env: { PATH: "" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

for (const name of ["router-cli", "service-cli"]) {
  describe(name, () => {
    it("prints the same line with --version, -v and the version command", async () => {
      for (const flag of ["--version", "-v"]) {
        const { stdout, code } = await cli(name, flag);
        expect(code).toBe(0);
        expect(stdout).toBe(`${name} ${pkg.version}\n`);
      }
    });

    it("prints its name and version with the version command", async () => {
      const { stdout, code } = await cli(name, "version");
      expect(code).toBe(0);
      expect(stdout).toBe(`${name} ${pkg.version}\n`);
    });

    it("exits 2 with a message on stderr for an unknown command", async () => {
      const { stdout, stderr, code } = await cli(name, "no-such-command");
      expect(code).toBe(2);
      expect(stderr).toContain("Unknown command no-such-command");
      expect(stderr).toContain(`${name} --help`);
      expect(stdout).toBe("");
    });

    it("prints help without colour when stdout is not a terminal", async () => {
      const { stdout, code } = await cli(name, "--help");
      expect(code).toBe(0);
      expect(stdout).toContain("USAGE");
      expect(stdout).not.toContain("\u001b[");
    });

    it("runs with no bun on PATH", async () => {
      expect(Bun.which("bun", { PATH: "" })).toBeNull();
      const { stdout, code } = await cli(name, "version");
      expect(code).toBe(0);
      expect(stdout).toContain(pkg.version);
    });
  });
}

// Strict arguments: a mistyped flag or a stray word is a usage error (exit 2) naming it, and the
// command does nothing — before this, `service-cli run x --wiat` submitted a job and exited 0.
describe("strict arguments", () => {
  const cases: [string, string[], string][] = [
    ["service-cli", ["run", "x", "--wiat"], "unknown flag --wiat"],
    ["service-cli", ["jobs", "--stauts", "failed"], "unknown flag --stauts"],
    ["service-cli", ["jobs", "extra"], 'unexpected argument "extra"'],
    ["service-cli", ["run", "task", "second"], 'unexpected argument "second"'],
    ["service-cli", ["cancel", "-q", "0190a0b0-0000-7000-8000-000000000000"], "unknown flag -q"],
    ["service-cli", ["hooks", "sync", "--fast"], "unknown flag --fast"],
    ["router-cli", ["tick", "--wiat"], "unknown flag --wiat"],
    ["router-cli", ["check", "--jsn"], "unknown flag --jsn"],
    ["router-cli", ["status", "extra"], 'unexpected argument "extra"'],
  ];
  for (const [name, args, message] of cases) {
    it(`${name} ${args.join(" ")} exits 2 naming ${message}`, async () => {
      const { stdout, stderr, code } = await cli(name, ...args);
      expect(code).toBe(2);
      expect(stderr).toContain(message);
      expect(stderr).toContain(`${name} ${args[0]}`);
      expect(stdout).toBe("");
    });
  }

  it("still takes declared flags in every spelling: --flag=value, aliases, --no-flag", async () => {
    // No orchestrator answers here: getting past argument checking means exit 1 (unreachable), not 2.
    for (const args of [
      ["jobs", "--limit=3", "--json"],
      ["jobs", "-n", "3", "-s", "failed"],
      ["run", "task", "--base-ref", "dev", "-r", "https://example.com/r.git", "--no-wait"],
    ]) {
      const { stderr, code } = await cli("service-cli", ...args);
      expect({ args, code, unknown: stderr.includes("unknown flag") }).toEqual({ args, code: 1, unknown: false });
    }
  });

  it("lets a command that takes many words take them", async () => {
    const { stderr } = await cli("router-cli", "build", "brain-api", "mcp");
    expect(stderr).not.toContain("unexpected argument");
  });
});
