// service-cli agent --build|--run|--enter|--stop|--logs|--list|--compose-up|--compose-down|
// --compose-enter|--compose-logs: your own agent container, through the docker CLI. One action
// per call. --run starts the image detached with the container's port 8200 published on
// 127.0.0.1:SERVICE_PORT (8200), so the other commands (and `agents`) reach it as they reach
// any orchestrator; its settings come from the first .env found walking up from here, else
// ~/.service/.env (SERVICE_HUB_URL and HUB_AGENT there make it an agent-mode container).
// The compose actions use the compose file found walking up and its `orchestrator` service.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { defineCommand } from "citty";
import { consola } from "consola";
import { usage } from "../_errors";
import { DEFAULT_PORT, stateDir } from "./_context";
import { AGENT_CONTAINER, buildContext, COMPOSE_FILES, COMPOSE_SERVICE, containerState, docker, findUp, LOCAL_IMAGE } from "./_docker";

const ACTIONS = ["build", "run", "enter", "stop", "logs", "list", "compose-up", "compose-down", "compose-enter", "compose-logs"] as const;
type Action = (typeof ACTIONS)[number];

export default defineCommand({
  meta: { name: "agent", description: "Build, run and manage your agent container (docker)" },
  args: {
    build: { type: "boolean", alias: "b", description: `build the image ${LOCAL_IMAGE} from the Dockerfile found walking up` },
    run: { type: "boolean", alias: "r", description: `run it detached as ${AGENT_CONTAINER}, port 8200 on 127.0.0.1:SERVICE_PORT` },
    enter: { type: "boolean", alias: "e", description: "open a shell in the running container" },
    stop: { type: "boolean", alias: "s", description: "stop and remove the container" },
    logs: { type: "boolean", alias: "l", description: "follow the container's logs" },
    list: { type: "boolean", description: "list local containers" },
    "compose-up": { type: "boolean", description: `docker compose up --build -d ${COMPOSE_SERVICE}` },
    "compose-down": { type: "boolean", description: "docker compose down (volumes are kept)" },
    "compose-enter": { type: "boolean", description: `a shell in the compose ${COMPOSE_SERVICE} service` },
    "compose-logs": { type: "boolean", description: `follow the compose ${COMPOSE_SERVICE} service's logs` },
  },
  async run({ args }) {
    const chosen = ACTIONS.filter((a) => (args as Record<string, unknown>)[a] === true);
    if (chosen.length !== 1) usage(`pick exactly one action: ${ACTIONS.map((a) => `--${a}`).join(", ")}`);
    return act(chosen[0]!);
  },
});

async function act(action: Action): Promise<number> {
  const ok = (r: { code: number }) => (r.code === 0 ? 0 : 1);
  switch (action) {
    case "build": {
      const context = buildContext();
      consola.info(`building ${LOCAL_IMAGE} from ${context}`);
      return ok(await docker(["build", "-t", LOCAL_IMAGE, context]));
    }
    case "run":
      return runContainer();
    case "enter":
      if ((await containerState(AGENT_CONTAINER)) !== "running") return notRunning();
      return ok(await docker(["exec", "-it", AGENT_CONTAINER, "bash"]));
    case "logs":
      if (!(await containerState(AGENT_CONTAINER))) return notRunning();
      return ok(await docker(["logs", "-f", AGENT_CONTAINER]));
    case "stop": {
      const state = await containerState(AGENT_CONTAINER);
      if (!state) {
        consola.info(`no container ${AGENT_CONTAINER}: nothing to stop`);
        return 0;
      }
      if (state === "running" && (await docker(["stop", AGENT_CONTAINER])).code !== 0) return 1;
      return ok(await docker(["rm", AGENT_CONTAINER]));
    }
    case "list":
      return ok(await docker(["ps", "-a", "--format", "table {{.Names}}\t{{.Status}}\t{{.Image}}\t{{.Ports}}"]));
    case "compose-up":
      return ok(await docker(["compose", "-f", composeFile(), "up", "--build", "-d", COMPOSE_SERVICE]));
    case "compose-down":
      return ok(await docker(["compose", "-f", composeFile(), "down"]));
    case "compose-enter":
      return ok(await docker(["compose", "-f", composeFile(), "exec", COMPOSE_SERVICE, "bash"]));
    case "compose-logs":
      return ok(await docker(["compose", "-f", composeFile(), "logs", "-f", COMPOSE_SERVICE]));
  }
}

async function runContainer(): Promise<number> {
  const state = await containerState(AGENT_CONTAINER);
  if (state === "running") {
    consola.warn(`${AGENT_CONTAINER} is already running: \`service-cli agent --enter\` opens a shell, \`--stop\` stops it`);
    return 0;
  }
  if (state === "stopped" && (await docker(["rm", AGENT_CONTAINER])).code !== 0) return 1;
  const port = process.env.SERVICE_PORT || String(DEFAULT_PORT);
  const envFile = findUp([".env"]) ?? (existsSync(join(stateDir(), ".env")) ? join(stateDir(), ".env") : undefined);
  if (!envFile) consola.warn("no .env here, above, or in ~/.service/: the container starts with the image's defaults");
  const argv = [
    "run",
    "-d",
    "--name",
    AGENT_CONTAINER,
    // Published on loopback only: without SERVICE_API_KEYS in the env file the service has no auth.
    "-p",
    `127.0.0.1:${port}:8200`,
    ...(envFile ? ["--env-file", envFile] : []),
    "-e",
    "SERVICE_ALLOW_NO_AUTH=1",
    LOCAL_IMAGE,
    "--only",
    "orchestrator",
  ];
  if ((await docker(argv)).code !== 0) return 1;
  consola.success(`${AGENT_CONTAINER} started: http://127.0.0.1:${port} (\`service-cli status\`, \`service-cli agent --logs\`, \`--stop\`)`);
  return 0;
}

function notRunning(): number {
  consola.error(`${AGENT_CONTAINER} is not running: start it with \`service-cli agent --run\``);
  return 1;
}

function composeFile(): string {
  const file = findUp(COMPOSE_FILES);
  if (!file) usage(`no compose file (${COMPOSE_FILES.join(", ")}) here or in a folder above`);
  return file;
}
