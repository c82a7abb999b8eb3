// service-cli profiles [--json]: each profile with its model, max_turns and auto_pr; profiles
// the service could not read are listed on stderr.
import { defineCommand } from "citty";
import { consola } from "consola";
import { client, jsonArg, printJson } from "./_context";

export default defineCommand({
  meta: { name: "profiles", description: "List profiles (model, max_turns, auto_pr)" },
  args: { ...jsonArg },
  async run({ args }) {
    const list = await client().profiles();
    if (args.json) return printJson(list);
    const width = Math.max(8, ...list.profiles.map((p) => p.name.length)) + 2;
    for (const p of list.profiles) {
      console.log(`${p.name.padEnd(width)}${p.description}`);
      console.log(`${" ".repeat(width)}model=${p.model} max_turns=${p.max_turns} auto_pr=${p.auto_pr} (${p.source})`);
    }
    if (list.profiles.length === 0) console.log("No profiles.");
    for (const e of list.errors) consola.warn(`profile ${e.name} skipped (${e.path ?? "?"}): ${e.message}`);
  },
});
