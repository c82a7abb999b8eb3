// The stack commands drive `docker compose`. Deployment detection (spec, in priority order):
// (1) a compose.yml found walking up from the current directory; (2) the stack holding the
// container named router_brain_api; (3) the path pinned as ROUTER_REPO in ~/.router/.env;
// (4) the installed stack under ~/.router/. One stack per machine: other compose projects
// holding our container names are brought down first; volumes always survive (never -v).
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { consola } from "consola";
import { usage } from "../_errors";
import { envFilePath, readEnvFile, routerDir } from "./_context";

export const MAIN_CONTAINER = "router_brain_api";
export const CONTAINER_PREFIX = "router_";
export const COMPOSE_FILES = ["compose.yml", "compose.yaml", "docker-compose.yml", "docker-compose.yaml"];

export interface Deployment {
  /** The compose file to pass with -f (absent when only a running project was found). */
  file?: string;
  /** The compose project name to pass with -p. */
  project?: string;
  how: "cwd" | "container" | "ROUTER_REPO" | "installed";
}

export async function docker(args: string[], opts: { capture?: boolean; quiet?: boolean } = {}): Promise<{ code: number; stdout: string }> {
  if (!opts.quiet) consola.debug(`docker ${args.join(" ")}`);
  let proc;
  try {
    proc = Bun.spawn(["docker", ...args], { stdout: opts.capture ? "pipe" : "inherit", stderr: opts.capture ? "pipe" : "inherit", stdin: "inherit" });
  } catch {
    consola.error("the docker client is not installed (or not on PATH)");
    return { code: 127, stdout: "" };
  }
  const stdout = opts.capture ? await new Response(proc.stdout as ReadableStream).text() : "";
  return { code: await proc.exited, stdout };
}

function composeFileIn(dir: string): string | undefined {
  for (const name of COMPOSE_FILES) if (existsSync(join(dir, name))) return join(dir, name);
  return undefined;
}

function walkUp(from: string): string | undefined {
  let dir = resolve(from);
  for (;;) {
    const found = composeFileIn(dir);
    if (found) return found;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

export async function detectDeployment(cwd = process.cwd()): Promise<Deployment | undefined> {
  const here = walkUp(cwd);
  if (here) return { file: here, how: "cwd" };
  const inspect = await docker(
    [
      "inspect",
      MAIN_CONTAINER,
      "--format",
      '{{ index .Config.Labels "com.docker.compose.project" }}|{{ index .Config.Labels "com.docker.compose.project.config_files" }}',
    ],
    { capture: true, quiet: true },
  );
  if (inspect.code === 0 && inspect.stdout.trim()) {
    const [project, files] = inspect.stdout.trim().split("|");
    const file = files?.split(",")[0];
    return { project: project || undefined, file: file && existsSync(file) ? file : undefined, how: "container" };
  }
  const pinned = readEnvFile().ROUTER_REPO;
  if (pinned) {
    const file = composeFileIn(pinned);
    if (file) return { file, how: "ROUTER_REPO" };
  }
  const installed = composeFileIn(routerDir());
  if (installed) return { file: installed, how: "installed" };
  return undefined;
}

export const NO_DEPLOYMENT_HINT =
  "no deployment found: no compose.yml here or above, no running router_brain_api container, no ROUTER_REPO in ~/.router/.env and no stack under ~/.router/. Run `router-cli install` or cd into a checkout.";

/**
 * `docker compose [-p P] [-f F] [--env-file …] …` for a deployment. The stack must run with
 * the client's token: an installed stack reads ~/.router/.env as its own .env; any other
 * compose file gets it as an --env-file (after the file's own .env, so the client's values win).
 */
export function composeArgs(d: Deployment, ...rest: string[]): string[] {
  const envFiles: string[] = [];
  const client = envFilePath();
  if (d.file && existsSync(client) && resolve(dirname(d.file)) !== resolve(routerDir())) {
    const own = join(dirname(d.file), ".env");
    if (existsSync(own)) envFiles.push("--env-file", own);
    envFiles.push("--env-file", client);
  }
  return ["compose", ...(d.project ? ["-p", d.project] : []), ...(d.file ? ["-f", d.file] : []), ...envFiles, ...rest];
}

/** Compose projects (other than `keep`) holding containers named router_*. */
export async function otherProjects(keep: Deployment): Promise<string[]> {
  const ps = await docker(["ps", "-a", "--filter", `name=^${CONTAINER_PREFIX}`, "--format", '{{.Label "com.docker.compose.project"}}'], {
    capture: true,
    quiet: true,
  });
  if (ps.code !== 0) return [];
  const mine = keep.project ?? (await projectOf(keep));
  return [
    ...new Set(
      ps.stdout
        .split("\n")
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ].filter((p) => p !== mine);
}

/** The project name compose would use for a deployment's file (its `name:`, else its folder). */
export async function projectOf(d: Deployment): Promise<string | undefined> {
  if (d.project) return d.project;
  if (!d.file) return undefined;
  const text = await Bun.file(d.file).text();
  const named = /^name:\s*["']?([\w.-]+)["']?\s*$/m.exec(text)?.[1];
  return (
    named ??
    dirname(d.file)
      .split("/")
      .pop()
      ?.toLowerCase()
      .replace(/[^a-z0-9_-]/g, "")
  );
}

/** One stack per machine: bring down other projects holding our container names. */
export async function bringDownOthers(d: Deployment): Promise<void> {
  for (const project of await otherProjects(d)) {
    consola.info(`bringing down compose project ${project} (it holds router_* containers; volumes are kept)`);
    await docker(["compose", "-p", project, "down"]);
  }
}

export const NO_COMPOSE_HINT =
  "docker compose is not available (`docker compose version` fails): the stack commands need Docker's Compose plugin. Install it (Debian and Ubuntu: apt-get install docker-compose-plugin; elsewhere https://docs.docker.com/compose/install/), then run the command again.";
export const NO_DOCKER_HINT =
  "the docker client is not installed (or not on PATH): the stack commands need Docker with its Compose plugin (https://docs.docker.com/engine/install/).";

/**
 * The stack commands' prerequisite: without the Compose plugin, `docker compose -f …` is docker's
 * own usage text ("unknown shorthand flag: 'f'"), which says nothing of what is missing.
 */
export async function requireCompose(): Promise<void> {
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    proc = Bun.spawn(["docker", "compose", "version"], { stdout: "ignore", stderr: "ignore", stdin: "ignore" });
  } catch {
    usage(NO_DOCKER_HINT);
  }
  if ((await proc.exited) !== 0) usage(NO_COMPOSE_HINT);
}

export async function requireDeployment(): Promise<Deployment> {
  await requireCompose();
  const d = await detectDeployment();
  if (!d) {
    usage(NO_DEPLOYMENT_HINT);
  }
  consola.debug(`deployment: ${d.file ?? d.project} (found by ${d.how})`);
  return d;
}
