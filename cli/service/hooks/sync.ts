// service-cli hooks sync [--target all|agentihooks|bundle|agentihub] [--url URL] [--json]: clone,
// or fetch and reset, the companion repositories here, without the service (spec: "hooks sync |
// --target, --url (hooks target only) | no"). Same settings and clone root as the service
// (SERVICE_CLONE_ROOT, else SERVICE_SHARED_FS_ROOT, else ~/.service); --url replaces
// SERVICE_HOOKS_URL. A running service in agent mode takes a moved hub up before its next turn
// (package copied again, runners re-run, system prompt reloaded); profiles the hooks package
// brings are read at its next POST /admin/sync or restart. Exit 1 when a target failed.
import { defineCommand } from "citty";
import { consola } from "consola";
import { loadOrchestratorConfig } from "../../../src/orchestrator/config";
import { createCompanionSync, SYNC_TARGETS, type SyncTarget } from "../../../src/orchestrator/repos/companions";
import { usage } from "../../_errors";
import { home, jsonArg, printJson } from "../_context";

const TARGETS = ["all", ...SYNC_TARGETS] as const;

export default defineCommand({
  meta: { name: "sync", description: "Clone or update the companion repositories" },
  args: {
    target: { type: "string", default: "all", description: `one of ${TARGETS.join(", ")}` },
    url: { type: "string", description: "hooks package repository URL (replaces SERVICE_HOOKS_URL; targets all and agentihooks)" },
    ...jsonArg,
  },
  async run({ args }) {
    const target = args.target as SyncTarget | "all";
    if (!(TARGETS as readonly string[]).includes(target)) usage(`--target must be one of ${TARGETS.join(", ")}, not ${JSON.stringify(args.target)}`);
    if (args.url !== undefined && target !== "all" && target !== "agentihooks")
      usage("--url names the hooks package: use it with --target agentihooks (or all)");
    const env = { ...process.env, ...(args.url !== undefined ? { SERVICE_HOOKS_URL: args.url, SERVICE_HOOKS_PATH: "" } : {}) };
    const results = await createCompanionSync(loadOrchestratorConfig(env, home())).sync(target);
    if (args.json) printJson({ results });
    else {
      for (const r of results) {
        if (r.status === "synced") consola.success(`${r.target}: ${r.detail}`);
        else if (r.status === "skipped") consola.info(`${r.target}: skipped (${r.detail})`);
        else consola.error(`${r.target}: ${r.detail}`);
      }
    }
    return results.some((r) => r.status === "failed") ? 1 : 0;
  },
});
