// service-cli init-shared-fs [--shared-root DIR]: lay out a shared filesystem for several
// orchestrator pods (spec: "creates profiles/, repos/, jobs/, job-state/ under the root and
// copies bundled profiles"). Idempotent: existing folders and profiles are kept as they are,
// so an operator's edits to <root>/profiles/*/profile.yml survive a second run (an init
// container runs it at every pod start).
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { defineCommand } from "citty";
import { consola } from "consola";
import { stringify } from "yaml";
import { writeFileAtomic } from "../../src/common/atomic-write";
import { loadOrchestratorConfig } from "../../src/orchestrator/config";
import { BUNDLED_PROFILES } from "../../src/orchestrator/profiles/profile";
import { usage } from "../_errors";
import { home, jsonArg, printJson } from "./_context";

export const SHARED_DIRS = ["profiles", "repos", "jobs", "job-state"] as const;

export default defineCommand({
  meta: { name: "init-shared-fs", description: "Create the shared-filesystem layout and copy the bundled profiles into it" },
  args: {
    "shared-root": { type: "string", description: "the shared root (default SERVICE_SHARED_FS_ROOT)" },
    ...jsonArg,
  },
  async run({ args }) {
    const given = args["shared-root"] || loadOrchestratorConfig(process.env, home()).sharedFsRoot;
    if (!given) usage("no shared root: pass --shared-root DIR or set SERVICE_SHARED_FS_ROOT");
    const root = resolve(given);
    const created: string[] = [];
    const kept: string[] = [];
    for (const dir of SHARED_DIRS) {
      const path = join(root, dir);
      (existsSync(path) ? kept : created).push(`${path}/`);
      await mkdir(path, { recursive: true });
    }
    for (const p of BUNDLED_PROFILES) {
      const file = join(root, "profiles", p.name, "profile.yml");
      if (existsSync(file)) {
        kept.push(file);
        continue;
      }
      await mkdir(join(root, "profiles", p.name), { recursive: true });
      const { source: _source, dir: _dir, ...fields } = p;
      await writeFileAtomic(file, `# Bundled profile, copied by service-cli init-shared-fs; edit it to change it for every pod.\n${stringify(fields)}`);
      created.push(file);
    }
    if (args.json) return printJson({ root, created, kept });
    for (const c of created) consola.success(`created ${c}`);
    for (const k of kept) consola.info(`kept ${k}`);
    consola.success(`shared filesystem ready at ${root}`);
  },
});
