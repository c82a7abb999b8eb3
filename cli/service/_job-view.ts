// How jobs look on a terminal: the jobs table (spec: columns ID, STATUS, PROFILE, TASK) and a
// job's details, its output cut at 2000 characters with a note (spec: Limits, "CLI output
// display | 2000 characters"; --json prints it whole).
import type { Job } from "../../src/orchestrator/client";

export const OUTPUT_LIMIT = 2000;

const oneLine = (s: string) => s.replace(/\s+/g, " ").trim();
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, Math.max(0, n - 1))}…` : s);

/** The table's TASK column takes what is left of the terminal (80 columns when not a terminal). */
export function jobsTable(jobs: Job[], columns = process.stdout.columns || 100): string {
  const rows = jobs.map((j) => [j.id, j.status, j.profile, oneLine(j.task)]);
  const head = ["ID", "STATUS", "PROFILE", "TASK"];
  const widths = [0, 1, 2].map((i) => Math.max(head[i]!.length, ...rows.map((r) => r[i]!.length)));
  const taskWidth = Math.max(20, columns - widths.reduce((a, b) => a + b + 2, 0));
  const line = (r: string[]) => [...r.slice(0, 3).map((c, i) => c.padEnd(widths[i]!)), clip(r[3]!, taskWidth)].join("  ").trimEnd();
  return [line(head), ...rows.map(line)].join("\n");
}

/** The output as shown: at most OUTPUT_LIMIT characters, then a note saying how much there is. */
export function shownOutput(output: string, jobId: string): string {
  if (output.length <= OUTPUT_LIMIT) return output;
  return `${output.slice(0, OUTPUT_LIMIT)}\n… output truncated: ${OUTPUT_LIMIT} of ${output.length} characters shown (service-cli job ${jobId} --json prints all of it)`;
}

export function jobDetails(job: Job): string {
  const rows: Array<[string, string | number | null | undefined]> = [
    ["Job", job.id],
    ["Status", job.status],
    ["Profile", job.profile],
    ["Task", job.task],
    ["Repo", job.repo_url && `${job.repo_url}${job.base_ref ? ` (${job.base_ref})` : ""}`],
    ["Branch", job.branch],
    ["PR", job.pr_url],
    ["Exit", job.exit_code],
    ["Session", job.session_id],
    ["Pod", job.pod_name],
    ["Created", job.created_at],
    ["Started", job.started_at],
    ["Finished", job.finished_at],
    ["Cost", job.cost_usd === null ? null : `$${job.cost_usd.toFixed(4)}`],
    ["Retrying", retryLine(job)],
  ];
  const out = rows.filter(([, v]) => v !== null && v !== undefined && v !== "").map(([k, v]) => `${`${k}:`.padEnd(10)}${v}`);
  // The vault's notes the agent's first turn was given (older records have none).
  if (job.recall?.length) out.push("", "Recalled notes:", ...job.recall.map((n) => `  ${n.kind.padEnd(9)}${n.path}${n.title ? `  ${n.title}` : ""}`));
  if (job.error) out.push("", "Error:", job.error);
  if (job.output) out.push("", "Output:", shownOutput(job.output, job.id));
  return out.join("\n");
}

/** "1m05s", "42s". */
export function elapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
}

/** While the agent retries the model API: "attempt 2 of 10 after HTTP 529 overloaded". */
function retryLine(job: Job): string | null {
  const r = job.api_retry;
  if (!r || job.status !== "running") return null;
  return `model API attempt ${r.attempt} of ${r.max_retries} after ${r.error_status === null ? "" : `HTTP ${r.error_status} `}${r.error}`;
}
