// router-cli scaffold [PATH]: write or repair the vault layout (.brain-schema + folders).
import { resolve } from "node:path";
import { defineCommand } from "citty";
import { consola } from "consola";
import { scaffold } from "../../src/router/vault/scaffold";
import { fail } from "../_errors";
import { readEnvFile } from "./_context";

export default defineCommand({
  meta: { name: "scaffold", description: "Write or repair the vault layout schema" },
  args: { path: { type: "positional", required: false, description: "vault folder (default VAULT_PATH from ~/.router/.env, else ./vault)" } },
  async run({ args }) {
    const vault = resolve(args.path || process.env.VAULT_PATH || readEnvFile().VAULT_PATH || "./vault");
    const r = await scaffold(vault).catch((err: Error) => fail(`cannot scaffold ${vault}: ${err.message}`));
    if (r.created.length === 0 && !r.schemaWritten) consola.success(`${vault}: layout already complete`);
    else consola.success(`${vault}: ${[...r.created.map((c) => `created ${c}`), ...(r.schemaWritten ? ["wrote .brain-schema"] : [])].join(", ")}`);
  },
});
