// Layered configuration: each setting is a row (variable, optional YAML key, default,
// parser, doc). A value comes from the environment, else the service's file, else the
// default; every value is parsed, and a bad one stops start-up with a message naming the
// variable and the file. The same rows print docs/configuration.md's tables.
import type { z } from "zod";

export type Source = "environment" | "file" | "default";

export interface Setting<T> {
  /** Primary variable name, then accepted aliases. */
  env: string | readonly string[];
  /** Dotted YAML key (orchestrator) or the same variable name (router .env); null = env only. */
  fileKey: string | null;
  /** Raw default as it would be written in the environment; undefined = unset. */
  default: string | undefined;
  /** How the default reads in the docs when it is computed (e.g. "$HOME"). */
  defaultDoc?: string;
  parse: z.ZodType<T, string>;
  doc: string;
  /** Never echo the value in an error. */
  secret?: boolean;
}

export type Settings = Record<string, Setting<unknown>>;
/** A setting with no default (`default: undefined`) may be absent: its type says so. */
export type ConfigOf<S extends Settings> = {
  [K in keyof S]: S[K] extends Setting<infer T> ? (S[K]["default"] extends string ? T : T | undefined) : never;
};

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

const names = (s: Setting<unknown>) => (typeof s.env === "string" ? [s.env] : [...s.env]);

export interface LoadInput {
  env: Record<string, string | undefined>;
  /** Flat values read from the file, keyed by fileKey. */
  file: Record<string, string | undefined>;
  filePath: string;
  /** Replaces ~ and $HOME in defaults. */
  home: string;
}

export function loadSettings<S extends Settings>(settings: S, input: LoadInput): ConfigOf<S> {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, setting] of Object.entries(settings)) {
    const vars = names(setting);
    let raw: string | undefined;
    let source: Source = "default";
    let from = "";
    for (const v of vars) {
      const value = input.env[v];
      if (value !== undefined && value !== "") {
        raw = value;
        source = "environment";
        from = v;
        break;
      }
    }
    if (raw === undefined && setting.fileKey !== null) {
      const value = input.file[setting.fileKey];
      if (value !== undefined && value !== "") {
        raw = value;
        source = "file";
      }
    }
    if (raw === undefined && setting.default !== undefined) raw = expandHome(setting.default, input.home);
    if (raw === undefined) {
      out[key] = undefined;
      continue;
    }
    const parsed = setting.parse.safeParse(raw);
    if (parsed.success) {
      out[key] = parsed.data;
      continue;
    }
    const shown = setting.secret ? "(value hidden)" : JSON.stringify(raw);
    const reason = parsed.error.issues.map((i) => i.message).join("; ");
    const where =
      source === "file" ? `${setting.fileKey} in ${input.filePath}` : source === "environment" ? `${from} (environment)` : `${vars[0]} (built-in default)`;
    const fix = setting.fileKey === null ? `set ${vars[0]} in the environment` : `set ${vars[0]} in the environment or ${setting.fileKey} in ${input.filePath}`;
    problems.push(`${where} = ${shown}: ${reason}; ${fix}`);
  }
  if (problems.length > 0) throw new ConfigError(`invalid configuration:\n  ${problems.join("\n  ")}`);
  return out as ConfigOf<S>;
}

function expandHome(value: string, home: string): string {
  if (value === "~") return home;
  if (value.startsWith("~/")) return home + value.slice(1);
  return value.replaceAll("$HOME", home);
}

/** Markdown rows for docs/configuration.md: | Variable | File key | Default | Meaning | */
export function settingsTable(settings: Settings, fileKeyHeader: string): string {
  const rows = Object.values(settings).map((s) => {
    const v = names(s)
      .map((n) => `\`${n}\``)
      .join(" / ");
    const fk = s.fileKey === null ? "env only" : `\`${s.fileKey}\``;
    const d = s.defaultDoc ?? (s.default === undefined ? "unset" : s.default === "" ? "empty" : `\`${s.default}\``);
    return `| ${v} | ${fk} | ${d} | ${s.doc} |`;
  });
  return [`| Variable | ${fileKeyHeader} | Default | Meaning |`, "|---|---|---|---|", ...rows].join("\n");
}
