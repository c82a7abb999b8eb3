// The compiled CLIs, as users run them: built once per test run into a temp dir, then
// spawned with the given environment (a temp HOME, a fixture on PATH…).
import { mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { REPO } from "./main-process";

let built: Promise<string> | undefined;

export function compiledClis(): Promise<string> {
  built ??= (async () => {
    const outdir = mkdtempSync(join(tmpdir(), "brain-cli-"));
    const proc = Bun.spawn([process.execPath, "run", "build", "--outdir", outdir], { cwd: REPO, stdout: "pipe", stderr: "pipe" });
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) throw new Error(`bun run build failed (exit ${code}):\n${stderr}`);
    return outdir;
  })();
  return built;
}

/** A PATH holding the named fixtures (as their real names) and bun, nothing else of ours. */
export function fixturePath(fixtures: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "fixture-bin-"));
  for (const [name, file] of Object.entries(fixtures)) symlinkSync(join(REPO, "test", "fixtures", file), join(dir, name));
  return `${dir}:${dirname(process.execPath)}:/usr/bin:/bin`;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCompiled(
  name: "router-cli" | "service-cli",
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  const dir = await compiledClis();
  const cwd = opts.cwd ?? mkdtempSync(join(tmpdir(), "cli-cwd-"));
  mkdirSync(cwd, { recursive: true });
  const proc = Bun.spawn([join(dir, name), ...args], {
    cwd,
    env: { PATH: "/usr/bin:/bin", NO_COLOR: "1", ...opts.env },
    stdout: "pipe",
    stderr: "pipe",
    timeout: opts.timeoutMs ?? 30_000,
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}
