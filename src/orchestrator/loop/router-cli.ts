// Which router-cli the agents' hooks run when ROUTER_CLI_BINARY is not set (issue 35 part 5):
// the one that ships with the running service, so the hooks work wherever the service runs —
// beside the compiled service-cli (`service-cli serve`); in a checkout its built dist/router-cli,
// else its cli/router-cli.ts through this bun; in the image (no cli/ sources) the compiled
// router-cli on PATH. Resolved once; start-up logs the choice (runtime.ts).
import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export interface RouterCliChoice {
  /** The command words, unquoted. */
  argv: string[];
  /** Why this one, for the start-up log. */
  why: string;
}

const ROOT = join(import.meta.dir, "..", "..", "..");

/** The router-cli that ships with this service (see the file's comment), or `router-cli` by name when none is found. */
export function shippedRouterCli(opts: { root?: string; execPath?: string; which?: (name: string) => string | null } = {}): RouterCliChoice {
  const root = opts.root ?? ROOT;
  const execPath = opts.execPath ?? process.execPath;
  const which = opts.which ?? ((name: string) => Bun.which(name));
  // A compiled service-cli runs the service: its sibling router-cli was built with it.
  if (!/^bun(-debug)?(\.exe)?$/.test(basename(execPath))) {
    const sibling = join(dirname(execPath), "router-cli");
    if (existsSync(sibling)) return { argv: [sibling], why: `beside ${basename(execPath)}` };
  }
  if (existsSync(join(root, "cli", "router-cli.ts"))) {
    const built = join(root, "dist", "router-cli");
    if (existsSync(built)) return { argv: [built], why: "the checkout's build (bun run build)" };
    return { argv: [execPath, join(root, "cli", "router-cli.ts")], why: "the checkout's source through bun (no dist/router-cli built)" };
  }
  const onPath = which("router-cli");
  if (onPath) return { argv: [onPath], why: "the compiled router-cli on PATH" };
  return { argv: ["router-cli"], why: "by name: no router-cli found beside the service or on PATH, the hooks will fail until one is (ROUTER_CLI_BINARY)" };
}

let chosen: RouterCliChoice | undefined;

/** The shipped router-cli, resolved once per process. */
export function defaultRouterCli(): RouterCliChoice {
  chosen ??= shippedRouterCli();
  return chosen;
}

const quote = (s: string) => (/^[\w./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The default router-cli as a shell command prefix (the hooks' `command`). */
export const routerCliCommand = (): string => defaultRouterCli().argv.map(quote).join(" ");
