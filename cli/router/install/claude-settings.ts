// brain-stack's hooks in the settings Claude Code reads (~/.claude/settings.json for a machine
// install), merged additively: the user's own hooks and keys stay as they are, a second install
// changes nothing, and uninstall takes out exactly what install put in — when nothing else was
// changed since, the file comes back byte for byte (or goes, if install created it). What was
// added is remembered in ~/.router/claude-settings.json.
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { writeFileAtomic } from "../../../src/common/atomic-write";
import { CLAUDE_EVENT, HOOK_EVENTS } from "../hook/events";

type Json = Record<string, unknown>;
interface HookCommand {
  type: "command";
  command: string;
  timeout?: number;
}
interface MatcherGroup {
  matcher?: string;
  hooks: HookCommand[];
}

export interface InstalledRecord {
  settings: string;
  /** The file before install touched it (null: install created it). */
  before: string | null;
  /** Its permission bits before (install narrows them to 0600: the env holds the router token). */
  mode: number | null;
  hooks: Array<{ event: string; command: string }>;
  env: Record<string, string>;
}

/** How settings call the hooks: this binary when it is the compiled router-cli, else router-cli on PATH. */
export function hookBinary(execPath = process.execPath): string {
  const bin = basename(execPath).startsWith("bun") ? "router-cli" : execPath;
  return /^[\w./-]+$/.test(bin) ? bin : `'${bin.replace(/'/g, `'\\''`)}'`;
}

/** The hook entries: one per event, each a command with a timeout Claude Code enforces too. */
export function brainHooks(binary: string): Array<{ event: string; command: string }> {
  return HOOK_EVENTS.map((e) => ({ event: CLAUDE_EVENT[e], command: `${binary} hook ${e}` }));
}

/** Merges hooks and env into a settings object; returns what was actually added. */
export function mergeSettings(
  settings: Json,
  hooks: Array<{ event: string; command: string }>,
  env: Record<string, string>,
): { settings: Json; added: Pick<InstalledRecord, "hooks" | "env"> } {
  const out = structuredClone(settings);
  const added: Pick<InstalledRecord, "hooks" | "env"> = { hooks: [], env: {} };
  if (!out.hooks || typeof out.hooks !== "object") out.hooks = {};
  const allHooks = out.hooks as Record<string, MatcherGroup[]>;
  for (const h of hooks) {
    if (!Array.isArray(allHooks[h.event])) allHooks[h.event] = [];
    const groups = allHooks[h.event]!;
    const present = groups.some((g) => Array.isArray(g?.hooks) && g.hooks.some((c) => c?.command === h.command));
    if (present) continue;
    groups.push({ hooks: [{ type: "command", command: h.command, timeout: 10 }] });
    added.hooks.push(h);
  }
  if (!out.env || typeof out.env !== "object") out.env = {};
  const outEnv = out.env as Record<string, string>;
  for (const [k, v] of Object.entries(env)) {
    if (outEnv[k] !== undefined) continue;
    outEnv[k] = v;
    added.env[k] = v;
  }
  if (Object.keys(outEnv).length === 0) delete out.env;
  return { settings: out, added };
}

/** Takes out what `added` lists (env keys only while they still hold the value install set). */
export function unmergeSettings(settings: Json, added: Pick<InstalledRecord, "hooks" | "env">): Json {
  const out = structuredClone(settings);
  const allHooks = out.hooks as Record<string, MatcherGroup[]> | undefined;
  if (allHooks && typeof allHooks === "object") {
    for (const h of added.hooks) {
      const groups = allHooks[h.event];
      if (!Array.isArray(groups)) continue;
      for (const g of groups) if (Array.isArray(g?.hooks)) g.hooks = g.hooks.filter((c) => c?.command !== h.command);
      allHooks[h.event] = groups.filter((g) => !Array.isArray(g?.hooks) || g.hooks.length > 0);
      if (allHooks[h.event]!.length === 0) delete allHooks[h.event];
    }
    if (Object.keys(allHooks).length === 0) delete out.hooks;
  }
  const env = out.env as Record<string, string> | undefined;
  if (env && typeof env === "object") {
    for (const [k, v] of Object.entries(added.env)) if (env[k] === v) delete env[k];
    if (Object.keys(env).length === 0) delete out.env;
  }
  return out;
}

const recordPath = (home: string) => join(home, ".router", "claude-settings.json");
export const userSettingsPath = (home: string) => join(home, ".claude", "settings.json");

function parse(text: string | null, path: string): Json {
  if (text === null || text.trim() === "") return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path} is not valid JSON (${(err as Error).message}); fix it, then run install again`);
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error(`${path} must hold a JSON object`);
  return v as Json;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Installs the hooks (and env) into `path`; returns what was added now (empty: already there). */
export async function installClaudeSettings(
  home: string,
  path: string,
  env: Record<string, string>,
  binary = hookBinary(),
): Promise<Pick<InstalledRecord, "hooks" | "env">> {
  const text = await readFile(path, "utf8").catch(() => null);
  const current = parse(text, path);
  const { settings, added } = mergeSettings(current, brainHooks(binary), env);
  if (added.hooks.length === 0 && Object.keys(added.env).length === 0) return added;
  const prior = await readRecord(home);
  const mode = await stat(path).then(
    (st) => st.mode & 0o777,
    () => null,
  );
  const record: InstalledRecord =
    prior && prior.settings === path
      ? { ...prior, hooks: [...prior.hooks, ...added.hooks], env: { ...prior.env, ...added.env } }
      : { settings: path, before: text, mode, ...added };
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, `${JSON.stringify(settings, null, 2)}\n`);
  await chmod(path, 0o600);
  await mkdir(dirname(recordPath(home)), { recursive: true });
  await writeFileAtomic(recordPath(home), `${JSON.stringify(record, null, 2)}\n`);
  return added;
}

async function readRecord(home: string): Promise<InstalledRecord | undefined> {
  const text = await readFile(recordPath(home), "utf8").catch(() => null);
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as InstalledRecord;
  } catch {
    return undefined;
  }
}

/** Removes what install added; returns the settings path touched, or undefined when there was nothing. */
export async function uninstallClaudeSettings(home: string): Promise<string | undefined> {
  const record = await readRecord(home);
  if (!record) return undefined;
  const path = record.settings;
  const text = await readFile(path, "utf8").catch(() => null);
  if (text !== null) {
    const remaining = unmergeSettings(parse(text, path), record);
    const before = record.before === null ? null : parse(record.before, path);
    if (before === null && Object.keys(remaining).length === 0) await rm(path, { force: true });
    else {
      // Nothing but our additions changed since install: the user's own bytes come back as they were.
      await writeFileAtomic(path, before !== null && same(remaining, before) ? record.before! : `${JSON.stringify(remaining, null, 2)}\n`);
      await chmod(path, record.mode ?? 0o644);
    }
  }
  await rm(recordPath(home), { force: true });
  return existsSync(path) || text !== null ? path : undefined;
}
