// service-cli's commands (spec: job-orchestrator.md, "Command-line client"), each its own file
// under cli/service/, loaded only when it runs. service-cli.ts starts here.
import { defineCommand } from "citty";
import { consola } from "consola";
import { VERSION } from "../../src/common/version";
import { lazyCommands, runCli } from "../_shared";

// consola picks its level from NODE_ENV, which `bun build` inlines from the build's environment
// (a binary built under `bun test` would print no info or success lines): say it here.
consola.level = Number(process.env.CONSOLA_LEVEL ?? 3);

// Commands that run service modules here: those log info lines to stdout, and a client command
// keeps stdout for its own output. The level is set before the modules load, because their
// tagged loggers copy it when they are created (and loaded only then: `version` stays fast).
const WITH_SERVICE_MODULES = new Set(["init-shared-fs", "drain", "agents", "hooks"]);
const quietServiceModules = async (name: string) => {
  if (WITH_SERVICE_MODULES.has(name)) (await import("../../src/common/logger")).setLogLevel(Number(process.env.LOG_LEVEL ?? 1));
};

void runCli(
  defineCommand({
    meta: { name: "service-cli", version: VERSION, description: "Client for the brain-stack job orchestrator" },
    subCommands: lazyCommands(
      {
        serve: () => import("./serve"),
        run: () => import("./run"),
        jobs: () => import("./jobs"),
        job: () => import("./job"),
        cancel: () => import("./cancel"),
        profiles: () => import("./profiles"),
        status: () => import("./status"),
        "init-shared-fs": () => import("./init-shared-fs"),
        drain: () => import("./drain"),
        update: () => import("./update"),
        version: () => import("./version"),
        agent: () => import("./agent"),
        push: () => import("./push"),
        agents: () => import("./agents"),
        hooks: () => import("./hooks"),
      },
      quietServiceModules,
    ),
  }),
);
