// Keeps the README's configuration tables in step with the settings rows in code:
// `bun scripts/readme-config.ts` rewrites the marked sections; `--check` exits 1 when stale.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { settingsTable } from "../src/common/config/settings";
import { orchestratorSettings } from "../src/orchestrator/config";
import { routerSettings } from "../src/router/config";

export const README = join(import.meta.dir, "..", "README.md");

export function renderReadme(text: string): string {
  const tables: Record<string, string> = {
    router: settingsTable(routerSettings, "`~/.router/.env`"),
    orchestrator: settingsTable(orchestratorSettings, "`~/.service/config.yml` key"),
  };
  let out = text;
  for (const [name, table] of Object.entries(tables)) {
    const start = `<!-- config:${name}:start -->`;
    const end = `<!-- config:${name}:end -->`;
    const re = new RegExp(`${start}[\\s\\S]*?${end}`);
    if (!re.test(out)) throw new Error(`README.md lacks the ${start} … ${end} markers`);
    out = out.replace(re, `${start}\n${table}\n${end}`);
  }
  return out;
}

if (import.meta.main) {
  const text = readFileSync(README, "utf8");
  const next = renderReadme(text);
  if (process.argv.includes("--check")) {
    if (next !== text) {
      console.error("README.md configuration tables are stale: run bun scripts/readme-config.ts");
      process.exit(1);
    }
  } else if (next !== text) {
    writeFileSync(README, next);
    console.log("updated README.md configuration tables");
  }
}
