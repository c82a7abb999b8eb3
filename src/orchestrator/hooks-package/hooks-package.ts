// The hooks package (spec: Configuration, SERVICE_HOOKS_*; issue 16 part 4). Contract: a
// repository (SERVICE_HOOKS_URL, cloned once to <CLONE_ROOT>/<dir-from-url>; or
// SERVICE_HOOKS_PATH, used as-is) holding an executable `bin/init`. brain-stack runs it, in the
// package's directory with HOOKS_PROFILE in its environment, as
//   bin/init --profile <HOOKS_PROFILE> [--bundle <bundle dir>] [--mcp-categories a,b --target <package dir>]
// at start-up, after `/admin/sync` of the hooks or bundle, and in agent mode before every
// completion with the agent's mcp_categories (it renders the MCP whitelist into the package).
// --bundle names the clone of SERVICE_HOOKS_BUNDLE_URL when that is set.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { log } from "../../common/logger";
import type { OrchestratorConfig } from "../config";
import { dirFromUrl } from "../profiles/load";
import { companionParent, createCompanionSync, type SyncResult } from "../repos/companions";

const logger = log("hooks");
const INIT_TIMEOUT_MS = 120_000;

export type HooksConfig = Pick<
  OrchestratorConfig,
  | "hooksUrl"
  | "hooksPath"
  | "hooksBranch"
  | "hooksBundleUrl"
  | "hooksProfile"
  | "hubUrl"
  | "cloneRoot"
  | "sharedFsRoot"
  | "stateDir"
  | "githostToken"
  | "githostApiUrl"
  | "githostUrl"
>;

function hooksDir(c: HooksConfig): string | undefined {
  if (c.hooksPath) return resolve(c.hooksPath);
  return c.hooksUrl ? join(companionParent(c), dirFromUrl(c.hooksUrl)) : undefined;
}

const bundleDir = (c: HooksConfig) => (c.hooksBundleUrl ? join(companionParent(c), dirFromUrl(c.hooksBundleUrl)) : undefined);

/** Clones the hooks package and its bundle when they are not there yet (once; /admin/sync updates them). */
async function ensureHooksPackage(c: HooksConfig): Promise<SyncResult[]> {
  const sync = createCompanionSync(c);
  const out: SyncResult[] = [];
  if (c.hooksUrl && !c.hooksPath && !existsSync(join(hooksDir(c)!, ".git"))) out.push(...(await sync.sync("agentihooks")));
  const bundle = bundleDir(c);
  if (bundle && !existsSync(join(bundle, ".git"))) out.push(...(await sync.sync("bundle")));
  for (const r of out) if (r.status === "failed") logger.error(`hooks package: ${r.detail}`);
  return out;
}

/** Runs the package's init; false when no hooks package is configured (or it has no bin/init). Throws when init fails. */
export async function runHooksInit(
  c: HooksConfig,
  opts: { mcpCategories?: string[]; target?: string; env?: Record<string, string | undefined> } = {},
): Promise<boolean> {
  const dir = hooksDir(c);
  if (!dir) return false;
  const init = join(dir, "bin", "init");
  if (!existsSync(init)) {
    logger.warn(`hooks package at ${dir} has no bin/init: nothing to run`);
    return false;
  }
  const bundle = bundleDir(c);
  const args = [
    "--profile",
    c.hooksProfile,
    ...(bundle ? ["--bundle", bundle] : []),
    ...(opts.mcpCategories ? ["--mcp-categories", opts.mcpCategories.join(",")] : []),
    ...(opts.target ? ["--target", opts.target] : []),
  ];
  const proc = Bun.spawn([init, ...args], {
    cwd: dir,
    env: { ...(opts.env ?? process.env), HOOKS_PROFILE: c.hooksProfile },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: INIT_TIMEOUT_MS,
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`hooks init (${init}) exited ${code}: ${(err.trim() || out.trim()).split("\n").slice(-3).join(" ")}`);
  return true;
}

/** At start-up: clone once, then init; a failure is logged (the service still serves). */
export async function prepareHooksPackage(c: HooksConfig): Promise<void> {
  if (!c.hooksUrl && !c.hooksPath) return;
  await ensureHooksPackage(c);
  await runHooksInit(c).then(
    (ran) => ran && logger.info(`hooks package: init ran (profile ${c.hooksProfile}${c.hooksBundleUrl ? ", with its bundle" : ""})`),
    (err) => logger.error(`hooks package: ${(err as Error).message}`),
  );
}
