// Additive completion of ~/.router/.env (spec: install rule 2): every missing key is added,
// existing values are kept, except retired client defaults, which migrate to their
// replacements. Comments and order of the existing file are preserved.
import { randomBytes } from "node:crypto";
import { parse as parseDotenv } from "dotenv";
import { VERSION } from "../../../src/common/version";

/** Client settings and their defaults (BRAIN_* and AMYGDALA_*). */
export function clientDefaults(home: string, port: string): Record<string, string> {
  return {
    BRAIN_URL: `http://localhost:${port}`,
    BRAIN_OUTBOX: `${home}/.router/outbox`,
    BRAIN_BACKLOG: `${home}/.router/backlog`,
    BRAIN_TIMEOUT_SECONDS: "10",
    AMYGDALA_ENABLED: "1",
    AMYGDALA_MIN_SEVERITY: "high",
  };
}

/**
 * Retired client defaults → their replacements (a value still at the old default migrates). The
 * old outbox is matched however the home was spelt (`~`, `$HOME`, absolute, a trailing slash):
 * nothing expands `~` in an env file, so it is replaced by the absolute path the hooks can use.
 */
export function retiredDefaults(home: string): Array<{ key: string; old: string; replacement: string }> {
  const oldOutbox = ["~", "$HOME", `\${HOME}`, home].flatMap((h) => [`${h}/.brain/outbox`, `${h}/.brain/outbox/`]);
  return [
    { key: "BRAIN_URL", old: "http://localhost:8102", replacement: "http://localhost:8103" },
    { key: "PORT_BRAIN_API", old: "8102", replacement: "8103" },
    ...oldOutbox.map((old) => ({ key: "BRAIN_OUTBOX", old, replacement: `${home}/.router/outbox` })),
    { key: "AMYGDALA_MIN_SEVERITY", old: "medium", replacement: "high" },
    // An image name nobody publishes; install builds this local one instead.
    { key: "BRAIN_IMAGE", old: `ghcr.io/brain-stack/brain-stack:${VERSION}`, replacement: `brain-stack:${VERSION}` },
  ];
}

/** Keys only written when the compose file (or a flag) supplies them (spec: install rule 3). */
export const MODEL_KEYS = ["LLM_API_KEY", "LLM_API_BASE", "INFERENCE_URL", "INFERENCE_API_KEY"] as const;

export const generateToken = () => randomBytes(24).toString("hex");

/**
 * `${VAR:-default}` settings a compose file declares, with their (non-empty) defaults. A
 * default built from other variables (`${DATABASE_URL:-postgres://…${POSTGRES_PASSWORD:-brain}…}`)
 * is left to compose: copying it would freeze the inner values.
 */
export function composeDefaults(composeText: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of composeText.matchAll(/\$\{([A-Z][A-Z0-9_]*):-([^}]*)\}/g)) {
    const [, key, value] = m as unknown as [string, string, string];
    if (value !== "" && !value.includes("${") && !(key in out)) out[key] = value;
  }
  return out;
}

export interface Completion {
  text: string;
  added: string[];
  migrated: string[];
}

/**
 * Adds `wanted` keys missing from `current`, migrates retired defaults; never drops a line. The
 * added keys go under a `# added by <by> <stamp>` comment naming what wrote them.
 */
export function completeEnv(
  current: string,
  wanted: Record<string, string>,
  retired: ReturnType<typeof retiredDefaults>,
  stamp: string,
  by = "router-cli install",
): Completion {
  const have = parseDotenv(current);
  const migrated: string[] = [];
  let text = current;
  for (const r of retired) {
    if (have[r.key] === r.old && !migrated.includes(r.key)) {
      text = text.replace(new RegExp(`^(\\s*(?:export\\s+)?${r.key}\\s*=\\s*)["']?${escapeRegExp(r.old)}["']?\\s*$`, "m"), `$1${r.replacement}`);
      migrated.push(r.key);
    }
  }
  const added = Object.keys(wanted).filter((k) => have[k] === undefined);
  if (added.length > 0) {
    if (text.length > 0 && !text.endsWith("\n")) text += "\n";
    text += `# added by ${by} ${stamp}\n`;
    for (const k of added) text += `${k}=${quote(wanted[k]!)}\n`;
  }
  return { text, added, migrated };
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const quote = (v: string) => (/^[\w./:@,+-]*$/.test(v) ? v : JSON.stringify(v));
