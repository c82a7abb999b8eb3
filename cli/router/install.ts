// router-cli install: idempotent whole-machine setup (spec: knowledge-router, install rules
// 1–5). Steps: reuse or render a stack; scaffold the vault; complete the client env file and
// create the marker outbox; start the stack; link the packaged profile. --dry-run prints the
// plan and writes nothing; a second run changes nothing.
import { chmod, mkdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { defineCommand } from "citty";
import { consola } from "consola";
import { parse as parseDotenv } from "dotenv";
import composeTemplate from "../../compose.yml" with { type: "text" };
import collectorConfig from "../../deploy/otel-collector.yaml" with { type: "text" };
import collectorTracingConfig from "../../deploy/otel-collector-tracing.yaml" with { type: "text" };
import { writeFileAtomic } from "../../src/common/atomic-write";
import { VERSION } from "../../src/common/version";
import { scaffold } from "../../src/router/vault/scaffold";
import { fail, usage } from "../_errors";
import { envFilePath, home, routerDir } from "./_context";
import { bringDownOthers, composeArgs, type Deployment, detectDeployment, docker } from "./_docker";
import { installMemoryImport, memoryPath } from "./install/claude-memory";
import { installClaudeSettings, userSettingsPath } from "./install/claude-settings";
import { clientDefaults, completeEnv, composeDefaults, generateToken, MODEL_KEYS, retiredDefaults } from "./install/env-file";
import { DEFAULT_IMAGE, ensureImage, findCheckout } from "./install/image";
import { linkProfile, PROFILES, profileDir, TARGETS, writeProfile } from "./install/profile";
import { renderCompose } from "./install/render";

interface Step {
  title: string;
  run: () => Promise<string | undefined>;
}

export default defineCommand({
  meta: { name: "install", description: "Set up this machine: stack, vault, client env file, outbox, profile (idempotent)" },
  args: {
    "brain-url": { type: "string", description: "use a team's server: client-only install (env BRAIN_URL); pair with --token" },
    token: { type: "string", description: "bearer token (env KB_ROUTER_TOKEN); generated when absent" },
    vault: { type: "string", description: "vault folder (default ~/brain-vault)" },
    ollama: { type: "boolean", description: "bundle a local inference server (ollama)" },
    "s3-bucket": { type: "string", description: "external object storage bucket (with --s3-endpoint)" },
    "s3-endpoint": { type: "string", description: "external object storage endpoint (with --s3-bucket)" },
    "postgres-url": { type: "string", description: "use this Postgres (DATABASE_URL)" },
    "redis-url": { type: "string", description: "use this Redis (REDIS_URL)" },
    "openai-key": { type: "string", description: "LLM_API_KEY for the OpenAI API" },
    "llm-gateway-url": { type: "string", description: "LLM_API_BASE of an OpenAI-compatible gateway" },
    name: { type: "string", default: "brain", description: "name of the profile link" },
    profile: { type: "string", default: "default", description: `packaged profile (${PROFILES.join(", ")})` },
    "for-target": { type: "string", default: "claude", description: `agent the profile is for (${TARGETS.join(", ")})` },
    source: { type: "string", description: "brain-stack checkout to build the image from when it is not present locally" },
    "no-stack": { type: "boolean", description: "do not start the stack" },
    "no-link": { type: "boolean", description: "do not link the profile (nor touch ~/.claude at all: no hooks, no profile import)" },
    "no-init": { type: "boolean", description: "do not scaffold the vault" },
    "no-hooks": { type: "boolean", description: "do not merge the hooks into ~/.claude/settings.json (nor the profile into ~/.claude/CLAUDE.md)" },
    "dry-run": { type: "boolean", description: "print the plan, write nothing" },
  },
  async run({ args }) {
    // citty reads --no-x as x=false; accept both spellings.
    const a = args as Record<string, string | boolean | undefined>;
    const noStack = a["no-stack"] === true || a.stack === false;
    const noLink = a["no-link"] === true || a.link === false;
    const noInit = a["no-init"] === true || a.init === false;
    const noHooks = a["no-hooks"] === true || a.hooks === false;
    const dry = a["dry-run"] === true;
    const brainUrl = (args["brain-url"] || process.env.BRAIN_URL) as string | undefined;
    const clientOnly = Boolean(args["brain-url"]);
    const token = (args.token || process.env.KB_ROUTER_TOKEN) as string | undefined;

    if (!(PROFILES as readonly string[]).includes(args.profile)) return usage(`--profile must be one of: ${PROFILES.join(", ")}`);
    if (!(TARGETS as readonly string[]).includes(args["for-target"])) return usage(`--for-target must be one of: ${TARGETS.join(", ")}`);
    if (Boolean(args["s3-bucket"]) !== Boolean(args["s3-endpoint"])) return usage("--s3-bucket and --s3-endpoint go together (external object storage)");
    if (clientOnly && !token) return usage("--brain-url makes a client-only install: pair it with --token (or KB_ROUTER_TOKEN)");

    const h = home();
    const envPath = envFilePath();
    const vault = resolve(args.vault || process.env.VAULT_PATH || join(h, "brain-vault"));
    const steps: Step[] = [];
    const leftToSet: string[] = [];

    // 1. Reuse or render a stack (not in client-only mode).
    let deployment: Deployment | undefined;
    let composeText = "";
    if (!clientOnly) {
      deployment = await detectDeployment();
      if (deployment?.file) {
        composeText = await readFile(deployment.file, "utf8");
        steps.push({ title: `reuse the stack at ${deployment.file} (found by ${deployment.how})`, run: async () => {} });
      } else if (deployment) {
        steps.push({ title: `reuse the running compose project ${deployment.project}`, run: async () => {} });
      } else {
        const file = join(routerDir(), "compose.yml");
        composeText = renderCompose(composeTemplate, { externalObjectStore: Boolean(args["s3-bucket"]) });
        deployment = { file, how: "installed" };
        steps.push({
          title: `render the bundled stack to ${file}${args["s3-bucket"] ? " (external object storage)" : ""}${args.ollama ? " (with local inference)" : ""}`,
          run: async () => {
            await mkdir(join(routerDir(), "deploy"), { recursive: true });
            await writeFileAtomic(file, composeText);
            await writeFileAtomic(join(routerDir(), "deploy", "otel-collector.yaml"), collectorConfig);
            await writeFileAtomic(join(routerDir(), "deploy", "otel-collector-tracing.yaml"), collectorTracingConfig);
          },
        });
      }
      // 2. Scaffold the vault.
      if (!noInit) steps.push({ title: `scaffold the vault at ${vault}`, run: async () => void (await scaffold(vault)) });
    }

    // 3. Complete the env file (additive) and create the marker outbox.
    const current = await readFile(envPath, "utf8").catch(() => "");
    const stackDefaults = composeDefaults(composeText);
    // The port the stack publishes: the env file's own setting wins (compose reads it from there).
    const ownPort = parseDotenv(current).PORT_BRAIN_API;
    const retiredPort = retiredDefaults(h).find((r) => r.key === "PORT_BRAIN_API" && r.old === ownPort)?.replacement;
    const port = retiredPort || ownPort || stackDefaults.PORT_BRAIN_API || "8103";
    const wanted: Record<string, string> = {};
    wanted.KB_ROUTER_TOKEN = token ?? generateToken();
    // Rule 5: BRAIN_URL always sits beside the bearer, or marker POSTs go nowhere and 401.
    wanted.BRAIN_URL = brainUrl ?? `http://localhost:${port}`;
    if (!clientOnly) {
      // Stack settings from the compose file, else the kernel defaults.
      for (const [k, v] of Object.entries({ PORT_BRAIN_API: "8103", PORT_BRAIN_MCP: "8104", BIND_HOST: "0.0.0.0", ...stackDefaults })) {
        if (!(MODEL_KEYS as readonly string[]).includes(k)) wanted[k] = v;
      }
      wanted.VAULT_PATH = vault;
      wanted.EMBEDDINGS_KEY_ID = `emb_${generateToken().slice(0, 12)}`;
      wanted.EMBEDDINGS_API_KEY = generateToken();
      // A local name: install builds it (step 4) when it is not present; nobody publishes it.
      wanted.BRAIN_IMAGE = `brain-stack:${VERSION}`;
      if (args["postgres-url"]) wanted.DATABASE_URL = args["postgres-url"];
      if (args["redis-url"]) wanted.REDIS_URL = args["redis-url"];
      if (args["s3-bucket"]) Object.assign(wanted, { S3_BUCKET: args["s3-bucket"], S3_ENDPOINT: args["s3-endpoint"] });
      if (args.ollama) Object.assign(wanted, { COMPOSE_PROFILES: "ollama", INFERENCE_URL: "http://inference:11434" });
      if (args["openai-key"]) Object.assign(wanted, { LLM_API_KEY: args["openai-key"], LLM_API_BASE: args["llm-gateway-url"] || "https://api.openai.com/v1" });
      else if (args["llm-gateway-url"]) wanted.LLM_API_BASE = args["llm-gateway-url"];
      // Rule 3: the model keys only when the compose file supplies them.
      for (const k of MODEL_KEYS) {
        if (wanted[k] === undefined && stackDefaults[k] !== undefined) wanted[k] = stackDefaults[k]!;
        if (wanted[k] === undefined && !new RegExp(`^\\s*(export\\s+)?${k}\\s*=`, "m").test(current)) leftToSet.push(k);
      }
    }
    Object.assign(wanted, Object.fromEntries(Object.entries(clientDefaults(h, port)).filter(([k]) => wanted[k] === undefined)));
    const completion = completeEnv(current, wanted, retiredDefaults(h), new Date().toISOString().slice(0, 10));
    const outbox = join(h, ".router", "outbox");
    const backlog = join(h, ".router", "backlog");
    steps.push({
      title:
        (completion.added.length + completion.migrated.length === 0
          ? `keep ${envPath} (complete)`
          : `complete ${envPath}: add ${completion.added.join(", ") || "nothing"}${completion.migrated.length ? `; migrate ${completion.migrated.join(", ")}` : ""}`) +
        `; marker outbox ${outbox}, backlog ${backlog}`,
      run: async () => {
        if (completion.text !== current) {
          await mkdir(routerDir(), { recursive: true });
          await writeFileAtomic(envPath, completion.text);
          await chmod(envPath, 0o600);
        }
        await mkdir(outbox, { recursive: true });
        await mkdir(backlog, { recursive: true });
      },
    });

    // 4. Start the stack, building its image first when it is not present locally.
    if (!clientOnly && !noStack && deployment) {
      const d = deployment;
      const image = parseDotenv(completion.text).BRAIN_IMAGE || DEFAULT_IMAGE;
      const checkout = findCheckout(args.source, d.file);
      steps.push({
        title: `start the stack: docker ${composeArgs(d, "up", "-d").join(" ")} (building ${image} from ${checkout ?? "a checkout"} if it is not present)`,
        run: async () => {
          if ((await ensureImage(image, checkout)) === "built") consola.success(`built ${image} from ${checkout}`);
          await bringDownOthers(d);
          if ((await docker(composeArgs(d, "up", "-d"))).code !== 0) throw new Error("docker compose up failed");
          if ((await docker(composeArgs(d, "exec", "-T", "brain-api", "router-cli", "migrate"))).code !== 0) throw new Error("migrations failed");
        },
      });
    }

    // 5. Link the packaged profile.
    if (!noLink) {
      steps.push({
        title: `link profile ${args.profile} as ~/.claude/profiles/${args.name}`,
        run: async () => {
          await writeProfile(h, args.profile);
          await linkProfile(h, args.profile, args.name);
        },
      });
    }

    // 6. The hooks Claude Code runs, and the profile's words in the memory file it reads.
    if (!noHooks && !noLink) {
      const final = parseDotenv(completion.text);
      const settingsPath = userSettingsPath(h);
      steps.push({
        title: `merge brain-stack's hooks (session-start, prompt, stop) and BRAIN_URL, KB_ROUTER_TOKEN, BRAIN_OUTBOX into ${settingsPath}; import the profile in ${memoryPath(h)}`,
        run: async () => {
          await writeProfile(h, args.profile);
          const env = { BRAIN_URL: final.BRAIN_URL!, KB_ROUTER_TOKEN: final.KB_ROUTER_TOKEN!, BRAIN_OUTBOX: final.BRAIN_OUTBOX ?? outbox };
          await installClaudeSettings(h, settingsPath, env);
          await installMemoryImport(h, join(profileDir(h, args.profile), "CLAUDE.md"));
        },
      });
    }

    if (dry) {
      consola.info(`install plan (dry run, nothing written)${clientOnly ? " — client-only" : ""}:`);
      for (const [i, s] of steps.entries()) console.log(`  ${i + 1}. ${s.title}`);
    } else {
      for (const s of steps) {
        await s.run().catch((err: Error) => fail(`${s.title}: ${err.message}`));
        consola.success(s.title);
      }
    }
    if (leftToSet.length > 0) consola.warn(`left to set in ${envPath} (the compose file does not supply them): ${leftToSet.join(", ")}`);
  },
});
