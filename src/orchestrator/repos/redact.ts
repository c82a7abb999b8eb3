// Keeps secrets out of anything a job records (git and gh stderr, agent errors): every
// configured secret, in plain, basic-auth and URL-encoded forms, and any credentials written
// into a URL, become ***.
import { type OrchestratorConfig, orchestratorSettings } from "../config";

const MIN_SECRET_LENGTH = 4;

/** The values of every setting marked secret (tokens, keys, store URLs). */
export function configSecrets(config: OrchestratorConfig): string[] {
  const out: string[] = [];
  for (const [key, setting] of Object.entries(orchestratorSettings)) {
    if (!("secret" in setting) || !setting.secret) continue;
    const value = (config as Record<string, unknown>)[key];
    if (typeof value === "string") out.push(value);
    else if (Array.isArray(value)) out.push(...value.filter((v): v is string => typeof v === "string"));
  }
  return out;
}

const forms = (secret: string): string[] => [
  secret,
  encodeURIComponent(secret),
  Buffer.from(`x-access-token:${secret}`).toString("base64"),
  Buffer.from(secret).toString("base64"),
];

export function redact(text: string, secrets: Iterable<string | undefined>): string {
  let out = text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi, "$1***@");
  const all = [...secrets]
    .filter((s): s is string => typeof s === "string" && s.length >= MIN_SECRET_LENGTH)
    .flatMap(forms)
    // Longest first, so a secret that contains another is replaced whole.
    .sort((a, b) => b.length - a.length);
  for (const s of all) out = out.split(s).join("***");
  return out;
}
