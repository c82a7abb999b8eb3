// service-cli run <task> [-r URL] [-p NAME] [--base-ref main] [-w] [--session-id UUID] [--json]:
// submit a job. With --wait, follow it to the end (its events live on stderr, _watch.ts) and exit 0 when it
// succeeded, 1 when it failed or was cancelled. A body the server rejects (bad repository URL,
// unknown profile, …) is invalid input: exit 2.
import { defineCommand } from "citty";
import { consola } from "consola";
import type { Job } from "../../src/orchestrator/client";
import { usage } from "../_errors";
import { client, jsonArg, printJson } from "./_context";
import { jobDetails } from "./_job-view";
import { watchJob } from "./_watch";

export default defineCommand({
  meta: { name: "run", description: "Submit a job (and with --wait, follow it to the end)" },
  args: {
    task: { type: "positional", required: true, description: "what the agent should do" },
    repo: { type: "string", alias: "r", description: "repository URL to work in (default: an empty scratch directory)" },
    profile: { type: "string", alias: "p", default: "auto", description: "profile name (service-cli profiles), or auto to pick from the task" },
    "base-ref": { type: "string", default: "main", description: "branch, tag or commit to start from (with --repo)" },
    wait: { type: "boolean", alias: "w", description: "wait until the job has finished, showing progress" },
    "session-id": { type: "string", description: "agent session UUID: a new session with this id, or the one to resume" },
    "max-budget-usd": { type: "string", description: "spending cap in USD for this job (overrides the profile's); the job fails when it is reached" },
    ...jsonArg,
  },
  async run({ args }) {
    const task = String(args.task ?? "").trim();
    if (!task) usage("the task must not be empty");
    const budget = args["max-budget-usd"] === undefined ? undefined : Number(args["max-budget-usd"]);
    if (budget !== undefined && !(Number.isFinite(budget) && budget > 0))
      usage(`--max-budget-usd must be a positive number of US dollars, got ${JSON.stringify(args["max-budget-usd"])}`);
    const c = client();
    const submitted = await c.submitJob({
      task,
      profile: args.profile || "auto",
      ...(args.repo ? { repo_url: args.repo, base_ref: args["base-ref"] || undefined } : {}),
      ...(args["session-id"] ? { session_id: args["session-id"] } : {}),
      ...(budget !== undefined && { max_budget_usd: budget }),
    });
    if (!args.wait) {
      if (args.json) return printJson(submitted);
      consola.success(`job submitted: ${submitted.id}`);
      console.log(`  Status:   ${submitted.status}\n  Profile:  ${submitted.profile}${submitted.repo_url ? `\n  Repo:     ${submitted.repo_url}` : ""}`);
      console.log(`Follow it with \`service-cli job ${submitted.id}\``);
      return;
    }
    const job = await follow(c, submitted);
    if (args.json) printJson(job);
    else console.log(jobDetails(job));
    return job.status === "succeeded" ? 0 : 1;
  },
});

async function follow(c: ReturnType<typeof client>, submitted: Job): Promise<Job> {
  // Ctrl-C stops watching, not the job.
  process.once("SIGINT", () => {
    process.stderr.write("\n");
    consola.info(
      `job ${submitted.id} keeps running: \`service-cli job ${submitted.id} --follow\` watches it again, \`service-cli cancel ${submitted.id}\` stops it`,
    );
    process.exit(130);
  });
  return watchJob(c, submitted);
}
