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
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { stdout, stderr, code };
}

for (const name of ["router-cli", "service-cli"]) {
  describe(name, () => {
    it("prints exactly the package version with --version", async () => {
      const { stdout, code } = await cli(name, "--version");
      expect(code).toBe(0);
      expect(stdout).toBe(`${pkg.version}\n`);
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

    it("runs with no bun on PATH", async () => {
      expect(Bun.which("bun", { PATH: "" })).toBeNull();
      const { stdout, code } = await cli(name, "version");
      expect(code).toBe(0);
      expect(stdout).toContain(pkg.version);
    });
  });
}
