// brain-stack: one Bun process serving the knowledge router and the job orchestrator.
//   bun src/main.ts [--only router|orchestrator] [--vault PATH]
import { homedir } from "node:os";
import { parseArgs } from "node:util";
import { ConfigError } from "./common/config/settings";
import { log, setLogLevel } from "./common/logger";
import { StartupError } from "./common/server";
import { VERSION } from "./common/version";
import { type ServiceName, startStack } from "./stack";

const logger = log("main");
const USAGE = `brain-stack ${VERSION}
usage: bun src/main.ts [--only router|orchestrator] [--vault PATH]
  --only     run one service only (default: both)
  --vault    the router's vault folder (default ./vault or VAULT_PATH); created and scaffolded`;

async function main(): Promise<number> {
  let values: { only?: string; vault?: string; help?: boolean; version?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        only: { type: "string" },
        vault: { type: "string" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean" },
      },
      strict: true,
    }));
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help || values.version) {
    console.log(values.help ? USAGE : VERSION);
    return 0;
  }
  if (values.only !== undefined && values.only !== "router" && values.only !== "orchestrator") {
    console.error(`--only must be router or orchestrator, not ${JSON.stringify(values.only)}`);
    return 2;
  }
  const level = Number(process.env.LOG_LEVEL ?? 3);
  setLogLevel(Number.isFinite(level) ? level : 3);

  let stack;
  try {
    stack = await startStack({
      only: values.only as ServiceName | undefined,
      vault: values.vault,
      env: process.env,
      home: process.env.HOME || homedir(),
    });
  } catch (err) {
    if (err instanceof StartupError || err instanceof ConfigError) {
      console.error(err.message);
      return 1;
    }
    throw err;
  }

  const graceMs = Number(process.env.SHUTDOWN_GRACE_MS ?? 10_000);
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: finishing in-flight requests (up to ${graceMs} ms), then exiting`);
    await stack.stop(graceMs);
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  return -1; // keep running
}

const code = await main();
if (code >= 0) process.exit(code);
