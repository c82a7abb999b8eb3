// router-cli: the knowledge router's command-line client (spec: knowledge-router.md, "Client tool").
// Each command is its own file under cli/router/, loaded only when it runs.
import "./_tty";
import { defineCommand } from "citty";
import { VERSION } from "../src/common/version";
import { runCli } from "./_shared";

const command = (load: () => Promise<{ default: any }>) => () => load().then((m) => m.default);

void runCli(
  defineCommand({
    meta: { name: "router-cli", version: VERSION, description: "Client for the brain-stack knowledge router" },
    subCommands: {
      build: command(() => import("./router/build")),
      up: command(() => import("./router/up")),
      down: command(() => import("./router/down")),
      uninstall: command(() => import("./router/uninstall")),
      logs: command(() => import("./router/logs")),
      status: command(() => import("./router/status")),
      install: command(() => import("./router/install")),
      check: command(() => import("./router/check")),
      tick: command(() => import("./router/tick")),
      sync: command(() => import("./router/sync")),
      scaffold: command(() => import("./router/scaffold")),
      migrate: command(() => import("./router/migrate")),
      version: command(() => import("./router/version")),
    },
  }),
);
