// What both CLI entry points share: one lazy command loader and runCli, which runs a command
// through the one error idiom (cli/_errors.ts) with the spec's exit codes ("0 success, 1 failure,
// 2 invalid input"). citty's runMain exits 1 on everything (an unknown command included) and
// prints the usage to stdout, so only the built-in --help goes through it; commands run through
// runCommand here.
import { stripVTControlCharacters } from "node:util";
import { type CommandDef, runCommand, runMain } from "citty";
import { consola } from "consola";
import { EXIT, failure } from "./_errors";
import { unknownArguments } from "./_strict";

// citty's CommandDef is generic over each command's own argument shape; a table of commands of
// different shapes can only be typed as CommandDef of any (CommandDef<ArgsDef> is not assignable).
// biome-ignore lint/suspicious/noExplicitAny: see above
type AnyCommand = CommandDef<any>;
type Loader = () => Promise<{ default: AnyCommand }>;

/**
 * The commands of a CLI, each module imported only when its command runs (or --help lists it).
 * `before` runs first, once the command is chosen (service-cli sets the service modules' log
 * level before they load).
 */
export function lazyCommands(table: Record<string, Loader>, before?: (name: string) => unknown | Promise<unknown>): Record<string, () => Promise<AnyCommand>> {
  return Object.fromEntries(
    Object.entries(table).map(([name, load]) => [
      name,
      async () => {
        await before?.(name);
        return (await load()).default;
      },
    ]),
  );
}

// citty's own error class is not exported; its instances carry this name and a code
// (E_UNKNOWN_COMMAND, E_NO_COMMAND, EARG, …), and every one of them is a usage mistake.
const isCittyError = (error: unknown): error is Error => error instanceof Error && error.name === "CLIError";

// The root commands declare no args, so citty's built-in flags keep their default names.
const HELP_FLAGS = ["--help", "-h"];
const VERSION_FLAGS = ["--version", "-v"];

// A command's run may return its exit code (check's degraded, a job that failed); citty drops
// what a sub-command returns, so every run is wrapped to keep it.
let returned: number | undefined;
const resolve = async <T>(value: T | (() => T | Promise<T>) | Promise<T>): Promise<T> =>
  typeof value === "function" ? await (value as () => T | Promise<T>)() : await value;
function keepingExitCode(cmd: AnyCommand): AnyCommand {
  const run = cmd.run;
  const subs = cmd.subCommands;
  return {
    ...cmd,
    ...(run && {
      run: async (ctx: Parameters<NonNullable<AnyCommand["run"]>>[0]) => {
        const code = await run(ctx);
        if (typeof code === "number") returned = code;
      },
    }),
    ...(subs && {
      subCommands: async () =>
        Object.fromEntries(Object.entries(await resolve(subs)).map(([name, sub]) => [name, async () => keepingExitCode(await resolve(sub))])),
    }),
  };
}

/** Prints one line for anything a command threw and exits with its code. */
export function exitWithFailure(error: unknown, name: string): never {
  if (isCittyError(error)) {
    // citty colours the offending name; a message on stderr stays plain.
    consola.error(`${stripVTControlCharacters(error.message)}\nRun \`${name} --help\` to list the commands.`);
    process.exit(EXIT.usage);
  }
  const f = failure(error);
  consola.error(f.message);
  process.exit(f.exitCode);
}

export async function runCli(main: AnyCommand, rawArgs: string[] = process.argv.slice(2)): Promise<never | void> {
  const meta = await resolve(main.meta);
  const name = meta?.name ?? "cli";
  // A bare invocation shows the usage, as gh does, rather than failing.
  if (rawArgs.length === 0) return runMain(main, { rawArgs: ["--help"] });
  const asksHelp = rawArgs.some((arg) => HELP_FLAGS.includes(arg));
  const asksVersion = rawArgs.length === 1 && VERSION_FLAGS.includes(rawArgs[0] ?? "");
  // `--version` prints the same line as the `version` command: the name, then the version.
  if (asksVersion && !asksHelp) {
    console.log(`${name} ${meta?.version ?? ""}`.trim());
    return;
  }
  if (asksHelp) return runMain(main, { rawArgs });
  try {
    const wrong = await unknownArguments(main, rawArgs);
    if (wrong.problems.length > 0) {
      consola.error(`${wrong.problems.join("; ")}\nRun \`${[name, ...wrong.path].join(" ")} --help\` to see what it takes.`);
      process.exit(EXIT.usage);
    }
    await runCommand(keepingExitCode(main), { rawArgs });
  } catch (error) {
    exitWithFailure(error, name);
  }
  process.exit(returned ?? EXIT.ok);
}
