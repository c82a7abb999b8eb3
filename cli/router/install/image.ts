// The stack's image. Nobody publishes one: `router-cli install` builds it from a brain-stack
// checkout when the image it names (BRAIN_IMAGE) is not present locally.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { docker } from "../_docker";

/** The image compose.yml runs when BRAIN_IMAGE is unset. */
export const DEFAULT_IMAGE = "brain-stack:local";

/** A folder holding a brain-stack source tree (its Dockerfile and package.json). */
export function isCheckout(dir: string): boolean {
  if (!existsSync(join(dir, "Dockerfile"))) return false;
  try {
    return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string }).name === "brain-stack";
  } catch {
    return false;
  }
}

/**
 * Where to build from, in order: --source, the folder of the stack's compose file, the
 * checkout this CLI runs from (dist/router-cli, or cli/router-cli.ts from source).
 */
export function findCheckout(source: string | undefined, composeFile: string | undefined): string | undefined {
  if (source) return resolve(source);
  const candidates = [composeFile && dirname(composeFile), dirname(dirname(process.execPath)), dirname(dirname(Bun.main))];
  return candidates.find((d): d is string => Boolean(d) && isCheckout(d!));
}

export async function imagePresent(image: string): Promise<boolean> {
  return (await docker(["image", "inspect", "--format", "{{.Id}}", image], { capture: true, quiet: true })).code === 0;
}

export const buildArgs = (image: string, checkout: string): string[] => ["build", "-t", image, "-f", join(checkout, "Dockerfile"), checkout];

/** Builds `image` from `checkout` unless it is present; throws with what to do otherwise. */
export async function ensureImage(image: string, checkout: string | undefined): Promise<"present" | "built"> {
  if (await imagePresent(image)) return "present";
  if (!checkout) {
    throw new Error(
      `the image ${image} is not present locally and no brain-stack checkout was found to build it from: pass --source <checkout>, run install inside one, or load the image and set BRAIN_IMAGE`,
    );
  }
  if (!isCheckout(checkout)) throw new Error(`--source ${checkout} is not a brain-stack checkout (no Dockerfile and package.json named brain-stack)`);
  if ((await docker(buildArgs(image, checkout))).code !== 0) throw new Error(`docker build of ${image} from ${checkout} failed`);
  return "built";
}
