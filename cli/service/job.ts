// service-cli job <job_id> [--json] [--follow]: one job's details; the output is cut at 2000
// characters with a note (--json prints the whole record). --follow first shows the job's events
// from its start and live until it ends (on stderr), then the details; exit 1 unless it succeeded.
import { defineCommand } from "citty";
import { client, jobIdArg, jsonArg, printJson } from "./_context";
import { jobDetails } from "./_job-view";
import { watchJob } from "./_watch";

export default defineCommand({
  meta: { name: "job", description: "Show a job" },
  args: {
    job_id: { type: "positional", required: true, description: "the job's id" },
    follow: { type: "boolean", alias: "f", description: "show the job's events (from the start, then live) until it has finished" },
    ...jsonArg,
  },
  async run({ args }) {
    const c = client();
    let job = await c.getJob(jobIdArg(args.job_id));
    if (!args.follow) {
      if (args.json) return printJson(job);
      console.log(jobDetails(job));
      return;
    }
    job = await watchJob(c, job);
    if (args.json) printJson(job);
    else console.log(jobDetails(job));
    return job.status === "succeeded" ? 0 : 1;
  },
});
