// `bun run start` (the README's first command): both services on the embedded defaults.
// The router fails closed without a token, so a first start on a fresh machine writes a
// generated KB_ROUTER_TOKEN into ~/.router/.env (mode 600, where the server and router-cli
// read it) — unless one is configured already. The token itself is never printed.
import { chmod, mkdir, readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { parse as parseDotenv } from "dotenv";
import { completeEnv, generateToken } from "../cli/router/install/env-file";
import { writeFileAtomic } from "../src/common/atomic-write";

const home = process.env.HOME || homedir();
const envFile = join(home, ".router", ".env");
const current = await readFile(envFile, "utf8").catch(() => "");
const file = parseDotenv(current);
// `--only orchestrator` runs no router: nothing to generate.
const routerRuns = !/--only[= ]orchestrator\b/.test(process.argv.slice(2).join(" "));
const configured = [process.env.KB_ROUTER_TOKEN, process.env.KB_ROUTER_TOKENS, file.KB_ROUTER_TOKEN, file.KB_ROUTER_TOKENS].some((v) => v?.trim());
if (routerRuns && !configured) {
  const { text } = completeEnv(current, { KB_ROUTER_TOKEN: generateToken() }, [], new Date().toISOString().slice(0, 10), "bun run start");
  await mkdir(join(home, ".router"), { recursive: true });
  await writeFileAtomic(envFile, text);
  await chmod(envFile, 0o600);
  console.log(`generated a router token as KB_ROUTER_TOKEN in ${envFile} (router-cli and the router read it from there)`);
}
await import("../src/main.ts");
