// router-cli's commands (spec: knowledge-router.md, "Client tool"), each its own file under
// cli/router/, loaded only when it runs. router-cli.ts starts here for everything but hooks.
import { defineCommand } from "citty";
import { VERSION } from "../../src/common/version";
import { lazyCommands, runCli } from "../_shared";

void runCli(
  defineCommand({
    meta: { name: "router-cli", version: VERSION, description: "Client for the brain-stack knowledge router" },
    subCommands: lazyCommands({
      build: () => import("./build"),
      up: () => import("./up"),
      down: () => import("./down"),
      uninstall: () => import("./uninstall"),
      logs: () => import("./logs"),
      status: () => import("./status"),
      install: () => import("./install"),
      check: () => import("./check"),
      tick: () => import("./tick"),
      search: () => import("./search"),
      get: () => import("./get"),
      recent: () => import("./recent"),
      sync: () => import("./sync"),
      hook: () => import("./hook"),
      scaffold: () => import("./scaffold"),
      migrate: () => import("./migrate"),
      version: () => import("./version"),
    }),
  }),
);
