// service-cli update [--source SRC]: replace this compiled binary (and router-cli beside it) with
// the latest from an install source (spec: "update moves to the latest available from the chosen
// install source"). A compiled binary cannot reinstall itself through a package manager, so:
//   - a path: a brain-stack checkout (built with `bun install` + `bun run build`), or a compiled
//     service-cli file to copy;
//   - a git URL (https://, ssh://, git://, file://, user@host:path, *.git): cloned shallow, built;
//   - anything else is an npm package name (default: this package), optionally name@version: its
//     tarball comes from the npm registry (NPM_CONFIG_REGISTRY, else registry.npmjs.org); its
//     dist/service-cli is used when it runs here, else it is built from the package's sources.
// The new binary must run and print its version before it replaces the old one (an atomic rename
// beside it). Building needs bun on PATH.
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { defineCommand } from "citty";
import { consola } from "consola";
import pkg from "../../package.json" with { type: "json" };
import { VERSION } from "../../src/common/version";
import { usage } from "../_errors";

const BINARIES = ["service-cli", "router-cli"] as const;

export default defineCommand({
  meta: { name: "update", description: "Replace this binary with the latest from an install source" },
  args: {
    source: { type: "string", default: pkg.name, description: "npm package name[@version], git URL, or path (a checkout or a compiled binary)" },
  },
  async run({ args }) {
    const target = compiledBinary();
    const source = args.source.trim();
    if (!source) usage("--source must not be empty");
    const work = mkdtempSync(join(tmpdir(), "service-cli-update-"));
    try {
      const built = await fetchBinaries(source, work);
      return await install(target, built, source);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  },
});

/** The running compiled binary; from source there is nothing to replace. */
function compiledBinary(): string {
  if (!Bun.main.startsWith("/$bunfs/")) {
    usage("update replaces a compiled service-cli; this one runs from source: update the checkout instead (git pull)");
  }
  return process.execPath;
}

type Kind = "path" | "git" | "npm";

export function sourceKind(source: string): Kind {
  if (/^(https?|ssh|git|file):\/\//.test(source) || /^[\w.-]+@[\w.-]+:/.test(source) || source.endsWith(".git")) return "git";
  if (source.startsWith("/") || source.startsWith("./") || source.startsWith("../") || source.startsWith("~/") || source === "." || existsSync(source))
    return "path";
  return "npm";
}

/** The new binaries by name (service-cli always; router-cli when the source has it). */
async function fetchBinaries(source: string, work: string): Promise<Map<string, string>> {
  const kind = sourceKind(source);
  if (kind === "path") {
    const path = resolve(source.startsWith("~/") ? join(process.env.HOME || homedir(), source.slice(2)) : source);
    if (!existsSync(path)) usage(`--source ${source}: no such file or directory`);
    if (statSync(path).isFile()) return new Map([["service-cli", path]]);
    return build(path, work);
  }
  if (kind === "git") {
    const dir = join(work, "checkout");
    consola.info(`cloning ${source}`);
    await run(["git", "clone", "--quiet", "--depth", "1", "--", source, dir], work, "git clone");
    return build(dir, work);
  }
  return fromRegistry(source, work);
}

async function fromRegistry(spec: string, work: string): Promise<Map<string, string>> {
  const at = spec.lastIndexOf("@");
  const [name, version] = at > 0 ? [spec.slice(0, at), spec.slice(at + 1)] : [spec, "latest"];
  if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(name)) usage(`--source ${spec}: not a path, a git URL or an npm package name`);
  const registry = (process.env.NPM_CONFIG_REGISTRY || process.env.npm_config_registry || "https://registry.npmjs.org").replace(/\/+$/, "");
  const metaUrl = `${registry}/${name.replace("/", "%2F")}/${encodeURIComponent(version)}`;
  const res = await fetch(metaUrl, { signal: AbortSignal.timeout(30_000) }).catch((err: Error) => {
    throw new Error(`cannot reach the npm registry at ${registry}: ${err.message}`);
  });
  if (res.status === 404) throw new Error(`the npm registry ${registry} has no ${name}@${version}`);
  if (!res.ok) throw new Error(`the npm registry answered ${res.status} for ${name}@${version}`);
  const meta = (await res.json()) as { version?: string; dist?: { tarball?: string } };
  if (!meta.version || !meta.dist?.tarball) throw new Error(`the npm registry's entry for ${name}@${version} has no version or tarball`);
  consola.info(`${name}@${meta.version} from ${registry}`);
  const tgz = await fetch(meta.dist.tarball, { signal: AbortSignal.timeout(5 * 60_000) });
  if (!tgz.ok) throw new Error(`downloading ${meta.dist.tarball} answered ${tgz.status}`);
  const file = join(work, "package.tgz");
  await Bun.write(file, tgz);
  await run(["tar", "-xzf", file, "-C", work], work, "tar");
  const dir = join(work, "package");
  const shipped = join(dir, "dist", "service-cli");
  if (existsSync(shipped) && (await versionOf(shipped)) !== undefined) {
    return new Map(BINARIES.map((b) => [b, join(dir, "dist", b)] as const).filter(([, p]) => existsSync(p)));
  }
  return build(dir, work);
}

/** `bun install` and `bun run build --outdir` in a checkout. */
async function build(dir: string, work: string): Promise<Map<string, string>> {
  if (!existsSync(join(dir, "package.json"))) usage(`${dir} is not a brain-stack checkout (no package.json)`);
  const bun = Bun.which("bun");
  if (!bun) throw new Error("building from source needs bun on PATH (https://bun.sh)");
  const out = join(work, "dist");
  consola.info(`building in ${dir}`);
  await run([bun, "install", ...(existsSync(join(dir, "bun.lock")) ? ["--frozen-lockfile"] : [])], dir, "bun install");
  await run([bun, "run", "build", "--outdir", out], dir, "bun run build");
  if (!existsSync(join(out, "service-cli"))) throw new Error(`bun run build in ${dir} made no service-cli in ${out}`);
  return new Map(BINARIES.map((b) => [b, join(out, b)] as const).filter(([, p]) => existsSync(p)));
}

async function run(cmd: string[], cwd: string, what: string): Promise<void> {
  const proc = Bun.spawn(cmd, { cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${what} failed (exit ${code}): ${(err.trim() || out.trim()).split("\n").slice(-3).join(" ")}`);
}

/** The version a binary reports with `version` ("service-cli 1.2.3"), or undefined when it does not run. */
async function versionOf(binary: string): Promise<string | undefined> {
  try {
    chmodSync(binary, 0o755);
    const proc = Bun.spawn([binary, "version"], { stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 15_000 });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    return code === 0 ? /^\S+ (\S+)\s*$/m.exec(out.trim())?.[1] : undefined;
  } catch {
    return undefined;
  }
}

async function install(target: string, built: Map<string, string>, source: string): Promise<number> {
  const fresh = built.get("service-cli")!;
  const version = await versionOf(fresh);
  if (version === undefined) throw new Error(`the service-cli from ${source} does not run here (\`${fresh} version\` failed)`);
  if (sameFile(fresh, target)) {
    consola.success(`service-cli is up to date (${VERSION}, ${source})`);
    return 0;
  }
  replace(fresh, target);
  consola.success(`service-cli ${VERSION} → ${version} (${target})`);
  // router-cli travels with it when it sits beside this binary.
  const router = built.get("router-cli");
  const beside = join(dirname(target), "router-cli");
  if (router && existsSync(beside) && !sameFile(router, beside) && (await versionOf(router)) !== undefined) {
    replace(router, beside);
    consola.success(`router-cli updated too (${beside})`);
  }
  return 0;
}

const sameFile = (a: string, b: string) => existsSync(b) && statSync(a).size === statSync(b).size && readFileSync(a).equals(readFileSync(b));

/** Copy beside the target, then rename over it: the old binary is never half-written. */
function replace(from: string, to: string): void {
  const temp = join(dirname(to), `.${basename(to)}.update-${process.pid}`);
  try {
    copyFileSync(from, temp);
    chmodSync(temp, 0o755);
    renameSync(temp, to);
  } catch (err) {
    rmSync(temp, { force: true });
    throw new Error(`cannot replace ${to}: ${(err as Error).message}`);
  }
}
