// router-cli uninstall [--name brain] [--no-unlink] [--dry-run]: stop the stack(s) and unlink
// the profile. Configuration (~/.router/.env), vault data and volumes survive.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { defineCommand } from "citty";
import { consola } from "consola";
import { home } from "./_context";
import { CONTAINER_PREFIX, composeArgs, detectDeployment, docker } from "./_docker";
import { memoryPath, uninstallMemoryImport } from "./install/claude-memory";
import { uninstallClaudeSettings, userSettingsPath } from "./install/claude-settings";
import { linkPath, unlinkProfile } from "./install/profile";

export default defineCommand({
  meta: { name: "uninstall", description: "Stop the stack(s) and unlink the profile; config, vault and volumes survive" },
  args: {
    name: { type: "string", default: "brain", description: "name of the profile link" },
    "no-unlink": { type: "boolean", description: "keep the profile link, the hooks in ~/.claude/settings.json and the profile import in ~/.claude/CLAUDE.md" },
    "dry-run": { type: "boolean", description: "print what would happen" },
  },
  async run({ args }) {
    const a = args as Record<string, unknown>;
    const keepLink = a["no-unlink"] === true || a.unlink === false;
    const dry = a["dry-run"] === true;
    const d = await detectDeployment();
    const hooksInstalled = existsSync(join(home(), ".router", "claude-settings.json")) || existsSync(memoryPath(home()));
    const ps = await docker(["ps", "-a", "--filter", `name=^${CONTAINER_PREFIX}`, "--format", '{{.Label "com.docker.compose.project"}}'], {
      capture: true,
      quiet: true,
    });
    const projects = [
      ...new Set(
        ps.stdout
          .split("\n")
          .map((s) => s.trim())
          .filter(Boolean),
      ),
    ];
    const plan = [
      ...(d ? [`docker ${composeArgs(d, "down").join(" ")}`] : []),
      ...projects.map((p) => `docker compose -p ${p} down`),
      ...(keepLink ? [] : [`remove the link ${linkPath(home(), args.name)}`]),
      ...(keepLink || !hooksInstalled
        ? []
        : [`take brain-stack's hooks out of ${userSettingsPath(home())} and the profile import out of ${memoryPath(home())}`]),
    ];
    if (plan.length === 0) {
      consola.info("nothing to uninstall: no stack found and no profile link to remove");
      return;
    }
    if (dry) {
      consola.info("uninstall plan (dry run):");
      for (const [i, p] of plan.entries()) console.log(`  ${i + 1}. ${p}`);
      return;
    }
    let failed = false;
    if (d) failed ||= (await docker(composeArgs(d, "down"))).code !== 0;
    for (const p of projects) failed ||= (await docker(["compose", "-p", p, "down"])).code !== 0;
    if (!keepLink && (await unlinkProfile(home(), args.name))) consola.success(`removed ${linkPath(home(), args.name)}`);
    if (!keepLink) {
      const settings = await uninstallClaudeSettings(home());
      if (settings) consola.success(`took brain-stack's hooks out of ${settings}`);
      if (await uninstallMemoryImport(home())) consola.success(`took the profile import out of ${memoryPath(home())}`);
    }
    consola.info("kept: ~/.router/.env, the vault and the stack's volumes");
    return failed ? 1 : 0;
  },
});
