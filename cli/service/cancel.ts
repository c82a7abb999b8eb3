// service-cli cancel <job_id> [--json]: cancel a queued or running job (a running agent gets
// SIGTERM). A job that has already finished is a failure (exit 1): the server answers 409.
import { defineCommand } from "citty";
import { consola } from "consola";
import { client, jobIdArg, jsonArg, printJson } from "./_context";

export default defineCommand({
  meta: { name: "cancel", description: "Cancel a queued or running job" },
  args: {
    job_id: { type: "positional", required: true, description: "the job's id" },
    ...jsonArg,
  },
  async run({ args }) {
    const job = await client().cancelJob(jobIdArg(args.job_id));
    if (args.json) return printJson(job);
    consola.success(`job ${job.id}: ${job.status}`);
  },
});
