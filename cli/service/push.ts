// service-cli push --main|--all [--tag latest] [--build-only|--push-only] [--no-cache]: build the
// image from the Dockerfile found walking up and push it as $DOCKER_REGISTRY/brain-stack:<tag>.
// One image serves the router, the orchestrator and agent mode, so --all is --main.
import { defineCommand } from "citty";
import { consola } from "consola";
import { usage } from "../_errors";
import { buildContext, docker, IMAGE_NAME } from "./_docker";

export default defineCommand({
  meta: { name: "push", description: "Build and push the image to DOCKER_REGISTRY (--main or --all required)" },
  args: {
    main: { type: "boolean", alias: "m", description: `the main image (${IMAGE_NAME})` },
    all: { type: "boolean", alias: "a", description: "every image (there is one: the same as --main)" },
    tag: { type: "string", alias: "t", default: "latest", description: "image tag" },
    "build-only": { type: "boolean", description: "build, do not push" },
    "push-only": { type: "boolean", description: "push an image built before, do not build" },
    "no-cache": { type: "boolean", description: "build without the layer cache" },
  },
  async run({ args }) {
    const a = args as Record<string, unknown>;
    // citty reads --no-cache as cache=false; accept both spellings.
    const noCache = a["no-cache"] === true || a.cache === false;
    const registry = process.env.DOCKER_REGISTRY?.trim().replace(/\/+$/, "");
    if (!registry) usage("DOCKER_REGISTRY is not set: set it to the registry to push to (e.g. ghcr.io/acme)");
    if (!args.main && !args.all)
      usage("push needs --main or --all to name the image (there is one, brain-stack, so both push it): service-cli push --main [--tag T]");
    if (args["build-only"] && args["push-only"]) usage("--build-only and --push-only exclude each other");
    if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(args.tag)) usage(`--tag ${JSON.stringify(args.tag)} is not a valid image tag`);
    const image = `${registry}/${IMAGE_NAME}:${args.tag}`;
    if (!args["push-only"]) {
      const context = buildContext();
      consola.info(`building ${image} from ${context}`);
      if ((await docker(["build", ...(noCache ? ["--no-cache"] : []), "-t", image, context])).code !== 0) return 1;
      consola.success(`built ${image}`);
    }
    if (!args["build-only"]) {
      if ((await docker(["push", image])).code !== 0) return 1;
      consola.success(`pushed ${image}`);
    }
  },
});
