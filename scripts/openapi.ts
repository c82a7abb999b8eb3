// `bun run openapi`: writes openapi/router.json and openapi/service.json from the zod routes.
// `--check` writes nothing and exits 1 when a checked-in document is stale.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildDocuments } from "./openapi-documents";

const root = join(import.meta.dir, "..");
const check = process.argv.includes("--check");
let stale = 0;
for (const [file, doc] of Object.entries(await buildDocuments())) {
  const path = join(root, "openapi", file);
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  const current = (() => {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return null;
    }
  })();
  if (current === text) continue;
  if (check) {
    console.error(`openapi/${file} is stale: run bun run openapi`);
    stale++;
  } else {
    writeFileSync(path, text);
    console.log(`wrote openapi/${file}`);
  }
}
process.exit(stale > 0 ? 1 : 0);
