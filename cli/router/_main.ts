// router-cli's commands (spec: knowledge-router.md, "Client tool"), each its own file under
// cli/router/, loaded only when it runs. router-cli.ts starts here for everything but hooks.
import "../_tty";
import { defineCommand } from "citty";
import { VERSION } from "../../src/common/version";
import { runCli } from "../_shared";

// biome-ignore lint/suspicious/noExplicitAny: a command module of any argument shape (citty's CommandDef<T>)
const command = (load: () => Promise<{ default: any }>) => () => load().then((m) => m.default);

void runCli(
  defineCommand({
    meta: { name: "router-cli", version: VERSION, description: "Client for the brain-stack knowledge router" },
    subCommands: {
      build: command(() => import("./build")),
      up: command(() => import("./up")),
      down: command(() => import("./down")),
      uninstall: command(() => import("./uninstall")),
      logs: command(() => import("./logs")),
      status: command(() => import("./status")),
      install: command(() => import("./install")),
      check: command(() => import("./check")),
      tick: command(() => import("./tick")),
      search: command(() => import("./search")),
      get: command(() => import("./get")),
      recent: command(() => import("./recent")),
      sync: command(() => import("./sync")),
      hook: command(() => import("./hook")),
      scaffold: command(() => import("./scaffold")),
      migrate: command(() => import("./migrate")),
      version: command(() => import("./version")),
    },
  }),
);
