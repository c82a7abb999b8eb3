// Reads the profiles a job can use: the bundled ones, then the hooks package's
// (<hooks>/profiles/*/), the shared root's ({root}/profiles/*/), then the user's
// (~/.service/profiles/*/); a later source replaces an earlier profile of the same name.
// A profile that cannot be read is logged, listed in `errors` by name, and skipped.
import type { Dirent } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { parse as parseYaml } from "yaml";
import { log } from "../../common/logger";
import type { OrchestratorConfig } from "../config";
import { AUTO, BUNDLED_PROFILES, PROFILE_NAME, type Profile, ProfileFile, type ProfileSource } from "./profile";
import { selectProfile } from "./select";

const logger = log("profiles");

export type ProfilesConfig = Pick<OrchestratorConfig, "stateDir" | "hooksPath" | "hooksUrl" | "cloneRoot" | "sharedFsRoot">;

export interface ProfileError {
  /** The profile's directory name. */
  name: string;
  path: string;
  message: string;
}

export interface ProfileSet {
  /** Sorted by name. */
  profiles: Profile[];
  errors: ProfileError[];
  get(name: string): Profile | undefined;
  /** `requested` undefined, "" or "auto" → the rules of autoProfileName; an unknown name → UnknownProfileError. */
  select(task: string, requested?: string): Profile;
}

const PROFILE_FILES = ["profile.yml", "profile.yaml"];

/** The repository's directory name from its URL: …/agentihooks.git → agentihooks. */
export function dirFromUrl(url: string): string {
  const last =
    url
      .replace(/[/\\]+$/, "")
      .split(/[/:\\]/)
      .pop() ?? "";
  return last.replace(/\.git$/, "").replace(/[^A-Za-z0-9._-]/g, "-") || "repo";
}

/**
 * The hooks package directory: SERVICE_HOOKS_PATH as-is, else its clone of SERVICE_HOOKS_URL
 * at <clone root>/<dir-from-url>, the clone root being SERVICE_CLONE_ROOT, else the shared
 * root, else ~/.service (where POST /admin/sync clones it). undefined when neither is set.
 */
export function hooksPackageDir(config: ProfilesConfig): string | undefined {
  if (config.hooksPath) return config.hooksPath;
  if (!config.hooksUrl) return undefined;
  return join(config.cloneRoot || config.sharedFsRoot || config.stateDir, dirFromUrl(config.hooksUrl));
}

function profileSources(config: ProfilesConfig): Array<{ source: ProfileSource; dir: string }> {
  const out: Array<{ source: ProfileSource; dir: string }> = [];
  const hooks = hooksPackageDir(config);
  if (hooks) out.push({ source: "hooks", dir: join(hooks, "profiles") });
  if (config.sharedFsRoot) out.push({ source: "shared", dir: join(config.sharedFsRoot, "profiles") });
  out.push({ source: "user", dir: join(config.stateDir, "profiles") });
  return out;
}

export async function loadProfiles(config: ProfilesConfig): Promise<ProfileSet> {
  const byName = new Map<string, Profile>(BUNDLED_PROFILES.map((p) => [p.name, p]));
  const errors: ProfileError[] = [];
  for (const { source, dir } of profileSources(config)) {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT")
        errors.push({ name: basename(dir), path: dir, message: `cannot read the directory: ${(err as Error).message}` });
      continue;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
      const read = await readProfileDir(join(dir, entry.name), source);
      if ("message" in read) errors.push(read);
      else byName.set(read.name, read);
    }
  }
  for (const e of errors) logger.warn(`profile ${e.name} skipped (${e.path}): ${e.message}`);
  return makeProfileSet(
    [...byName.values()].sort((a, b) => a.name.localeCompare(b.name)),
    errors,
  );
}

function makeProfileSet(profiles: Profile[], errors: ProfileError[] = []): ProfileSet {
  const set: ProfileSet = {
    profiles,
    errors,
    get: (name) => profiles.find((p) => p.name === name),
    select: (task, requested) => selectProfile(task, requested, set),
  };
  return set;
}

async function readProfileDir(dir: string, source: ProfileSource): Promise<Profile | ProfileError> {
  const name = basename(dir);
  const fail = (path: string, message: string): ProfileError => ({ name, path, message });
  if (!PROFILE_NAME.test(name) || name === AUTO) {
    return fail(dir, `the directory name must be lower-case letters, digits, - and _ (and not "${AUTO}")`);
  }
  let path = join(dir, PROFILE_FILES[0]!);
  let text: string | undefined;
  for (const file of PROFILE_FILES) {
    try {
      path = join(dir, file);
      text = await readFile(path, "utf8");
      break;
    } catch {
      // try the next name
    }
  }
  if (text === undefined) return fail(dir, `no ${PROFILE_FILES[0]} in the directory`);
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    return fail(path, `not valid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  const parsed = ProfileFile.safeParse(doc);
  if (!parsed.success) {
    return fail(path, parsed.error.issues.map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`).join("; "));
  }
  const p = parsed.data;
  if (p.name !== undefined && p.name !== name) return fail(path, `name "${p.name}" differs from its directory name "${name}"`);
  return {
    name,
    description: p.description,
    model: p.model,
    max_turns: p.max_turns,
    auto_pr: p.auto_pr,
    permission_mode: p.permission_mode,
    ...(p.timeout_seconds !== undefined && { timeout_seconds: p.timeout_seconds }),
    ...(p.retries !== undefined && { retries: p.retries }),
    ...(p.append_system_prompt !== undefined && { append_system_prompt: p.append_system_prompt }),
    ...(p.allowed_tools !== undefined && { allowed_tools: p.allowed_tools }),
    ...(p.max_budget_usd !== undefined && { max_budget_usd: p.max_budget_usd }),
    source,
    dir,
  };
}
