// Keeps the configuration tables of docs/configuration.md in step with the settings rows in code:
// `bun scripts/config-tables.ts` rewrites the marked sections; `--check` exits 1 when stale.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { settingsTable } from "../src/common/config/settings";
import { orchestratorSettings } from "../src/orchestrator/config";
import { routerSettings } from "../src/router/config";

export const CONFIG_DOC = join(import.meta.dir, "..", "docs", "configuration.md");

export function renderConfigTables(text: string): string {
  const tables: Record<string, string> = {
    router: settingsTable(routerSettings, "`~/.router/.env`"),
    orchestrator: settingsTable(orchestratorSettings, "`~/.service/config.yml` key"),
  };
  let out = text;
  for (const [name, table] of Object.entries(tables)) {
    const start = `<!-- config:${name}:start -->`;
    const end = `<!-- config:${name}:end -->`;
    const re = new RegExp(`${start}[\\s\\S]*?${end}`);
    if (!re.test(out)) throw new Error(`docs/configuration.md lacks the ${start} … ${end} markers`);
    out = out.replace(re, `${start}\n${table}\n${end}`);
  }
  return out;
}

if (import.meta.main) {
  const text = readFileSync(CONFIG_DOC, "utf8");
  const next = renderConfigTables(text);
  if (process.argv.includes("--check")) {
    if (next !== text) {
      console.error("docs/configuration.md's tables are stale: run bun scripts/config-tables.ts");
      process.exit(1);
    }
  } else if (next !== text) {
    writeFileSync(CONFIG_DOC, next);
    console.log("updated docs/configuration.md's configuration tables");
  }
}
