// What both CLI entry points share: runCli, citty's runMain with the spec's exit codes.
// spec: "Exit codes: 0 success, 1 failure, 2 invalid input". citty's runMain exits 1 on
// everything (an unknown command included) and prints the usage to stdout, so only the
// built-in --help / --version go through it; commands run through runCommand here.
import { stripVTControlCharacters } from "node:util";
import { runCommand, runMain, type CommandDef } from "citty";
import { consola } from "consola";
import { unknownArguments } from "./_strict";

// citty's own error class is not exported; its instances carry this name and a code
// (E_UNKNOWN_COMMAND, E_NO_COMMAND, EARG, …), and every one of them is a usage mistake.
const isUsageError = (error: unknown): error is Error =>
  error instanceof Error && error.name === "CLIError";

// The root commands declare no args, so citty's built-in flags keep their default names.
const HELP_FLAGS = ["--help", "-h"];
const VERSION_FLAGS = ["--version", "-v"];

export async function runCli(
  main: CommandDef,
  rawArgs: string[] = process.argv.slice(2),
): Promise<void> {
  const meta = await (typeof main.meta === "function" ? main.meta() : main.meta);
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
  const wrong = await unknownArguments(main, rawArgs);
  if (wrong.problems.length > 0) {
    consola.error(`${wrong.problems.join("; ")}\nRun \`${[name, ...wrong.path].join(" ")} --help\` to see what it takes.`);
    process.exit(2);
  }
  try {
    await runCommand(main, { rawArgs });
  } catch (error) {
    if (isUsageError(error)) {
      // citty colours the offending name; a message on stderr stays plain.
      consola.error(`${stripVTControlCharacters(error.message)}\nRun \`${name} --help\` to list the commands.`);
      process.exit(2);
    }
    consola.error(error);
    process.exit(1);
  }
}

