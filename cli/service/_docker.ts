// The docker CLI for `agent` and `push`: one runner (argv in, exit code out, output passed
// through or captured) and the files they look for walking up from the current directory.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { consola } from "consola";
import { usage } from "../_errors";

/** The repository name `push` tags under DOCKER_REGISTRY. */
export const IMAGE_NAME = "brain-stack";
/**
 * The image `agent --build` makes and `agent --run` starts: BRAIN_IMAGE, else the local name
 * compose.yml and `router-cli install` build and run (`brain-stack:local`), so one build serves all three.
 */
export const LOCAL_IMAGE = process.env.BRAIN_IMAGE || `${IMAGE_NAME}:local`;
export const AGENT_CONTAINER = "brain-stack-agent";
/** The compose service of the orchestrator in compose.yml. */
export const COMPOSE_SERVICE = "orchestrator";
export const COMPOSE_FILES = ["compose.yml", "compose.yaml", "docker-compose.yml", "docker-compose.yaml"];

export async function docker(args: string[], opts: { capture?: boolean } = {}): Promise<{ code: number; stdout: string }> {
  let proc;
  try {
    proc = Bun.spawn(["docker", ...args], { stdin: "inherit", stdout: opts.capture ? "pipe" : "inherit", stderr: opts.capture ? "pipe" : "inherit" });
  } catch {
    consola.error("the docker client is not installed (or not on PATH)");
    return { code: 127, stdout: "" };
  }
  const stdout = opts.capture ? await new Response(proc.stdout as ReadableStream).text() : "";
  return { code: await proc.exited, stdout };
}

/** The first of `names` found in `from` or a directory above it. */
export function findUp(names: string[], from = process.cwd()): string | undefined {
  let dir = resolve(from);
  for (;;) {
    for (const name of names) if (existsSync(join(dir, name))) return join(dir, name);
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The build context: the folder of the Dockerfile found walking up, or exit 2. */
export function buildContext(): string {
  const dockerfile = findUp(["Dockerfile"]);
  if (!dockerfile) {
    usage("no Dockerfile here or in a folder above: run this inside a brain-stack checkout");
  }
  return dirname(dockerfile);
}

/** "true" / "false" for an existing container, undefined when there is none. */
export async function containerState(name: string): Promise<"running" | "stopped" | undefined> {
  const r = await docker(["inspect", "--format", "{{.State.Running}}", name], { capture: true });
  if (r.code !== 0) return undefined;
  return r.stdout.trim() === "true" ? "running" : "stopped";
}
