// service-cli: the job orchestrator's command-line client (spec: job-orchestrator.md,
// "Command-line client"). Each command is its own file under cli/service/, loaded only when it runs.
import "./_tty";
import { defineCommand } from "citty";
import { consola } from "consola";
import { VERSION } from "../src/common/version";
import { runCli } from "./_shared";

// consola picks its level from NODE_ENV, which `bun build` inlines from the build's environment
// (a binary built under `bun test` would print no info or success lines): say it here.
consola.level = Number(process.env.CONSOLA_LEVEL ?? 3);

// biome-ignore lint/suspicious/noExplicitAny: a command module of any argument shape (citty's CommandDef<T>)
type Load = () => Promise<{ default: any }>;
const command = (load: Load) => () => load().then((m) => m.default);
// Commands that run service modules here: those log info lines to stdout, and a client command
// keeps stdout for its own output. The level is set before the modules load, because their
// tagged loggers copy it when they are created (and loaded only then: `version` stays fast).
const withServiceModules = (load: Load) => async () => {
  (await import("../src/common/logger")).setLogLevel(Number(process.env.LOG_LEVEL ?? 1));
  return (await load()).default;
};

void runCli(
  defineCommand({
    meta: { name: "service-cli", version: VERSION, description: "Client for the brain-stack job orchestrator" },
    subCommands: {
      serve: command(() => import("./service/serve")),
      run: command(() => import("./service/run")),
      jobs: command(() => import("./service/jobs")),
      job: command(() => import("./service/job")),
      cancel: command(() => import("./service/cancel")),
      profiles: command(() => import("./service/profiles")),
      status: command(() => import("./service/status")),
      "init-shared-fs": withServiceModules(() => import("./service/init-shared-fs")),
      drain: withServiceModules(() => import("./service/drain")),
      update: command(() => import("./service/update")),
      version: command(() => import("./service/version")),
      agent: command(() => import("./service/agent")),
      push: command(() => import("./service/push")),
      agents: withServiceModules(() => import("./service/agents")),
      hooks: withServiceModules(() => import("./service/hooks")),
    },
  }),
);
