// agents/<name>/agent.yml of the agent hub (spec: Resources, "Agent package"): name, model,
// max_turns, permission_mode, mcp_categories. Validated at start-up; a bad file stops it with a
// message naming the file and the field.
import { readFile } from "node:fs/promises";
import { z } from "@hono/zod-openapi";
import { parse as parseYaml } from "yaml";
import { AgentPackageError } from "./errors";

/** Claude Code's --permission-mode values. */
const PERMISSION_MODES = ["default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"] as const;

export const AgentManifest = z
  .object({
    name: z.string().trim().min(1, "must be a non-empty string"),
    model: z.string().trim().min(1, "must name a model (e.g. sonnet, opus, or a full model id)"),
    max_turns: z.number().int().min(1).max(10_000),
    permission_mode: z.enum(PERMISSION_MODES),
    mcp_categories: z.array(z.string().trim().min(1)).default([]),
  })
  // Hubs carry more (description, capabilities, …): kept, not required.
  .loose();
export type AgentManifest = z.infer<typeof AgentManifest>;

export async function readManifest(file: string): Promise<AgentManifest> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new AgentPackageError(file, (err as NodeJS.ErrnoException).code === "ENOENT" ? "is missing" : (err as Error).message);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new AgentPackageError(file, `is not valid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  const parsed = AgentManifest.safeParse(raw ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "(file)"}: ${i.message}`);
    throw new AgentPackageError(file, `is invalid: ${problems.join("; ")}`);
  }
  return parsed.data;
}
