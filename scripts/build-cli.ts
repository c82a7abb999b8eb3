// `bun run build`: compiles router-cli and service-cli into standalone executables.
// `--outdir DIR` writes them elsewhere than dist/ (the tests build into a temp dir).
// One `bun build --compile` per binary: --compile takes one entry and an --outfile.
import { mkdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import pkg from "../package.json" with { type: "json" };

const root = join(import.meta.dir, "..");
const { values } = parseArgs({ options: { outdir: { type: "string", default: join(root, "dist") } } });
const outdir = resolve(values.outdir);
const BINARIES = ["router-cli", "service-cli"] as const;

async function run(cmd: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(cmd, { cwd: root, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

async function compile(name: string): Promise<string> {
  const outfile = join(outdir, name);
  const build = await run([
    process.execPath,
    "build",
    join("cli", `${name}.ts`),
    "--compile",
    "--outfile",
    outfile,
    "--minify",
    // --bytecode defaults to CJS, where std-env's `import.meta.env` (inside consola) is a
    // SyntaxError at start-up; bun only warns "Failed to generate bytecode" and exits 0.
    "--bytecode",
    "--format=esm",
    // One chunk per lazily imported command: a command (a Claude Code hook above all) loads
    // only its own chunk and what it imports, not the whole CLI, so a hook starts fast
    // (scripts/bench/cli.ts keeps it in sight).
    "--splitting",
    "--define",
    `BRAIN_STACK_VERSION=${JSON.stringify(pkg.version)}`,
    // Otherwise the build machine's NODE_ENV (e.g. "test" under bun test) is baked in, and
    // consola reads it to pick a quieter default level.
    "--define",
    `process.env.NODE_ENV=${JSON.stringify("production")}`,
    // A CLI run inside some project must not pick up that project's bunfig.toml or .env;
    // the clients read their own settings (e.g. ~/.router/.env) explicitly.
    "--no-compile-autoload-bunfig",
    "--no-compile-autoload-dotenv",
  ]);
  if (build.code !== 0) throw new Error(`bun build ${name} failed (exit ${build.code}):\n${build.stderr}`);
  // bun can exit 0 with a binary that dies at start-up (see --format above), so run it once.
  const smoke = await run([outfile, "--version"]);
  if (smoke.code !== 0 || smoke.stdout.trim() !== `${name} ${pkg.version}`) {
    throw new Error(`${name} --version printed ${JSON.stringify(smoke.stdout)} (exit ${smoke.code}):\n${smoke.stderr}`);
  }
  return outfile;
}

mkdirSync(outdir, { recursive: true });
try {
  for (const name of BINARIES) {
    const outfile = await compile(name);
    const mb = (statSync(outfile).size / 1024 / 1024).toFixed(1);
    console.log(`${relative(process.cwd(), outfile) || outfile}  ${mb} MiB`);
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
