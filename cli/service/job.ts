// service-cli job <job_id> [--json]: one job's details; the output is cut at 2000 characters
// with a note (--json prints the whole record).
import { defineCommand } from "citty";
import { client, guarded, jobIdArg, jsonArg, printJson } from "./_context";
import { jobDetails } from "./_job-view";

export default defineCommand({
  meta: { name: "job", description: "Show a job" },
  args: {
    job_id: { type: "positional", required: true, description: "the job's id" },
    ...jsonArg,
  },
  run: ({ args }) =>
    guarded(async () => {
      const job = await client().getJob(jobIdArg(args.job_id));
      if (args.json) return printJson(job);
      console.log(jobDetails(job));
    }),
});
