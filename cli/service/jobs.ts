// service-cli jobs [--limit/-n 20] [--status/-s S] [--json]: recent jobs, newest first, as a
// table with the spec's columns ID, STATUS, PROFILE, TASK.
import { defineCommand } from "citty";
import { usage } from "../_errors";
import { client, intArg, JOB_LIST_DEFAULT, JOB_LIST_MAX, JOB_STATUSES, type JobStatusName, jsonArg, printJson } from "./_context";
import { jobsTable } from "./_job-view";

export default defineCommand({
  meta: { name: "jobs", description: "List recent jobs (newest first)" },
  args: {
    limit: { type: "string", alias: "n", default: String(JOB_LIST_DEFAULT), description: `at most this many (1–${JOB_LIST_MAX})` },
    status: { type: "string", alias: "s", description: `only this status: ${JOB_STATUSES.join(", ")}` },
    ...jsonArg,
  },
  async run({ args }) {
    const limit = intArg("limit", args.limit, 1, JOB_LIST_MAX);
    const status = args.status as JobStatusName | undefined;
    if (status !== undefined && !JOB_STATUSES.includes(status)) usage(`--status must be one of ${JOB_STATUSES.join(", ")}, not ${JSON.stringify(status)}`);
    const { jobs } = await client().listJobs({ limit, status });
    if (args.json) return printJson({ jobs });
    console.log(jobs.length === 0 ? `No jobs${status ? ` with status ${status}` : ""}.` : jobsTable(jobs));
  },
});
