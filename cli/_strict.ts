// Strict arguments for both CLIs: citty parses leniently (an unknown flag becomes a stray key,
// an extra word a stray positional), so `service-cli run x --wiat` would submit and exit 0.
// Before a command runs, its raw arguments are checked against what it declares; anything
// unknown is a usage error (exit 2), as gh and git treat it.
import type { ArgsDef, CommandDef } from "citty";

type Resolvable<T> = T | Promise<T> | (() => T) | (() => Promise<T>);
const resolve = async <T>(value: Resolvable<T> | undefined): Promise<T | undefined> =>
  typeof value === "function" ? await (value as () => T | Promise<T>)() : await value;

const kebab = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase();
const camel = (name: string) => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

interface Declared {
  /** long names (every spelling) → takes a value */
  long: Map<string, boolean>;
  /** one-letter aliases → takes a value */
  short: Map<string, boolean>;
  booleans: Set<string>;
  positionals: number;
  /** a positional whose valueHint ends in "..." (`SERVICE...`) takes any number of words */
  variadic: boolean;
}

function declared(def: ArgsDef | undefined): Declared {
  const d: Declared = { long: new Map(), short: new Map(), booleans: new Set(), positionals: 0, variadic: false };
  for (const [name, arg] of Object.entries(def ?? {})) {
    if (arg.type === "positional") {
      d.positionals++;
      if (arg.valueHint?.endsWith("...")) d.variadic = true;
      continue;
    }
    const takesValue = arg.type !== "boolean";
    const alias = "alias" in arg ? arg.alias : undefined;
    const aliases = alias === undefined ? [] : Array.isArray(alias) ? alias : [alias];
    for (const spelling of [name, kebab(name), camel(name), ...aliases]) {
      (spelling.length === 1 ? d.short : d.long).set(spelling, takesValue);
      if (!takesValue) d.booleans.add(spelling);
    }
  }
  return d;
}

/** Where the first word that is not a flag (nor a flag's value) stands, or -1. */
function firstWord(rawArgs: string[], d: Declared): number {
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!;
    if (arg === "--") return -1;
    if (!arg.startsWith("-") || arg === "-") return i;
    if (arg.includes("=")) continue;
    const name = arg.replace(/^--?/, "");
    const takesValue = arg.startsWith("--") ? d.long.get(name) : d.short.get(name.slice(-1));
    if (takesValue) i++;
  }
  return -1;
}

/** The problems with `rawArgs` for this command (flags it does not know, words it does not take). */
function problems(rawArgs: string[], d: Declared): string[] {
  const found: string[] = [];
  let words = 0;
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!;
    if (arg === "--") {
      words += rawArgs.length - i - 1;
      break;
    }
    if (arg.startsWith("--")) {
      const name = arg.slice(2).split("=")[0]!;
      const negated = name.startsWith("no-") && d.booleans.has(name.slice(3));
      if (!d.long.has(name) && !negated) {
        found.push(`unknown flag ${arg.split("=")[0]}`);
        continue;
      }
      if (d.long.get(name) && !arg.includes("=")) i++;
      continue;
    }
    if (arg.startsWith("-") && arg.length > 1 && !/^-\d/.test(arg)) {
      const letters = arg.slice(1).split("=")[0]!;
      for (const [n, letter] of [...letters].entries()) {
        if (!d.short.has(letter)) {
          found.push(`unknown flag -${letter}`);
          break;
        }
        // A letter that takes a value ends the group: the rest, or the next word, is its value.
        if (d.short.get(letter)) {
          if (n === letters.length - 1 && !arg.includes("=")) i++;
          break;
        }
      }
      continue;
    }
    words++;
    if (!d.variadic && words > d.positionals) found.push(`unexpected argument ${JSON.stringify(arg)}`);
  }
  return found;
}

/**
 * Walks `rawArgs` down the sub-commands the way citty does and checks each command's share of
 * them. Returns the command path walked and the problems found (none when the line is fine); an
 * unknown command is left to citty, which names it.
 */
export async function unknownArguments(main: CommandDef, rawArgs: string[]): Promise<{ path: string[]; problems: string[] }> {
  let cmd: CommandDef = main;
  let args = rawArgs;
  const path: string[] = [];
  for (;;) {
    const def = await resolve(cmd.args as Resolvable<ArgsDef>);
    const subs = await resolve(cmd.subCommands as Resolvable<Record<string, Resolvable<CommandDef>>>);
    const d = declared(def);
    if (subs && Object.keys(subs).length > 0) {
      const at = firstWord(args, d);
      const name = at >= 0 ? args[at]! : await resolve(cmd.default as Resolvable<string>);
      const sub = name ? await resolve(subs[name]) : undefined;
      if (!sub) return { path, problems: at >= 0 ? [] : problems(args, d) };
      const own = at >= 0 ? problems(args.slice(0, at), d) : [];
      if (own.length) return { path, problems: own };
      if (at >= 0) path.push(name!);
      cmd = sub;
      args = at >= 0 ? args.slice(at + 1) : args;
      continue;
    }
    return { path, problems: problems(args, d) };
  }
}
