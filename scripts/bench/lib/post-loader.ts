// A fixed-count HTTP loader, run as its own process (so the server under test shares no
// event loop with it): POSTs every body of a JSON job file to one URL with `concurrency`
// requests in flight, then prints one JSON line of results on stdout. Used for POST /ingest,
// where each request must carry a new document (wrk's fixed-duration runs would repeat them).
//
//   bun scripts/bench/lib/post-loader.ts JOB.json
// JOB.json: {url, headers, concurrency, bodies: [json-string, …]}
import { readFileSync } from "node:fs";

export interface PostJob {
  url: string;
  headers: Record<string, string>;
  concurrency: number;
  bodies: string[];
}

export interface PostResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** status → count */
  statuses: Record<string, number>;
  errors: number;
  firstError?: string;
}

/** Spawns this file as a subprocess on `job` and returns its results. */
export async function runPostLoader(job: PostJob, jobFile: string): Promise<PostResult> {
  await Bun.write(jobFile, JSON.stringify(job));
  const proc = Bun.spawn({ cmd: [process.execPath, import.meta.path, jobFile], stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`post-loader exited ${code}\n${err}${out}`);
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as PostResult;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(file: string): Promise<void> {
  const job = JSON.parse(readFileSync(file, "utf8")) as PostJob;
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let firstError: string | undefined;
  let next = 0;
  const headers = { "content-type": "application/json", ...job.headers };
  const worker = async () => {
    while (next < job.bodies.length) {
      const body = job.bodies[next++]!;
      const t = performance.now();
      try {
        const res = await fetch(job.url, { method: "POST", headers, body });
        const text = await res.text();
        latencies.push(performance.now() - t);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status >= 300 && !firstError) firstError = `HTTP ${res.status}: ${text.slice(0, 300)}`;
      } catch (err) {
        errors++;
        firstError ??= String(err);
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: Math.max(1, job.concurrency) }, worker));
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  const result: PostResult = {
    requests: job.bodies.length,
    seconds,
    rps: job.bodies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    statuses,
    errors,
    firstError,
  };
  console.log(JSON.stringify(result));
}

if (import.meta.main) await main(process.argv[2]!);
