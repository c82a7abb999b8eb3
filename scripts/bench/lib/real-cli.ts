// Jobs bench, part 4 (issue 13): per-job overhead with the real Claude Code CLI (the pinned
// devDependency) against the fixture Anthropic API answering at once. Two figures per job:
// submit → the CLI's first request at the API, and the CLI's `result` line → the job stored.
// Beside them the floor measured in the same run: the same CLI spawned directly (spawn → first
// request, `result` line → process exit), so the difference is what the service adds.
// The CLI runs under a small sh wrapper that logs when the `result` line passes.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type AnthropicApi, startAnthropicApi } from "../../../test/fixtures/anthropic-api.ts";

const ROOT = resolve(import.meta.dir, "../../..");
export const REAL_CLAUDE = join(ROOT, "node_modules", "@anthropic-ai", `claude-code-${process.platform}-${process.arch}`, "claude");
const OFFLINE = { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1", IS_SANDBOX: "1" };

export interface RealCliSample {
  /** submit (or spawn) → first request at the fixture API (ms). */
  toFirstRequest: number;
  /** `result` line → job stored (or process exit) (ms). */
  resultToDone: number;
}

/** The wrapper: runs the CLI, passes its stdout through, logs "result <ms> <session id>". */
function writeWrapper(dir: string, log: string): string {
  const path = join(dir, "claude-timed");
  writeFileSync(
    path,
    `#!/bin/sh
sid=""
prev=""
for a in "$@"; do [ "$prev" = "--session-id" ] && sid="$a"; prev="$a"; done
"${REAL_CLAUDE}" "$@" | while IFS= read -r line; do
  printf '%s\\n' "$line"
  case "$line" in *'"type":"result"'*) echo "result $(date +%s%3N) $sid" >> "${log}" ;; esac
done
`,
  );
  chmodSync(path, 0o755);
  return path;
}

const resultTimes = (log: string): Map<string, number> => {
  const out = new Map<string, number>();
  if (!existsSync(log)) return out;
  for (const line of readFileSync(log, "utf8").split("\n")) {
    const m = /^result (\d+) (\S+)/.exec(line);
    if (m) out.set(m[2]!, Number(m[1]));
  }
  return out;
};

const firstRequestAt = (api: AnthropicApi, sessionId: string) =>
  api.requests.find((r) => r.path === "/v1/messages" && r.headers["x-claude-code-session-id"] === sessionId)?.at;

export interface RealCliBenchOptions {
  tmp: string;
  jobs: number;
  /** Starts the orchestrator with these extra settings; resolves to its URL and a stop function. */
  startService(env: Record<string, string>): Promise<{ url: string; stop(): Promise<void> }>;
  submit(
    url: string,
    body: { task: string; profile?: string; wait?: boolean },
  ): Promise<{ id: string; status: string; session_id?: string | null; finished_at: string | null }>;
}

export async function benchRealCli(o: RealCliBenchOptions): Promise<{ jobs: RealCliSample[]; direct: RealCliSample[]; failed: number }> {
  const api = await startAnthropicApi({ defaultText: "done" });
  const log = join(o.tmp, "real-cli-results.log");
  const wrapper = writeWrapper(o.tmp, log);
  try {
    // Floor: the CLI alone, spawned directly the way the service does (same flags, same env).
    const direct: RealCliSample[] = [];
    for (let i = 0; i <= o.jobs; i++) {
      const sid = crypto.randomUUID();
      const t0 = Date.now();
      const proc = Bun.spawn(
        [wrapper, "-p", `Explain bench-direct-${i}`, "--output-format", "stream-json", "--verbose", "--model", "haiku", "--session-id", sid],
        {
          cwd: o.tmp,
          env: { PATH: process.env.PATH, HOME: join(o.tmp, "home"), ANTHROPIC_BASE_URL: api.url, ANTHROPIC_AUTH_TOKEN: "bench", ...OFFLINE },
          stdout: "ignore",
          stderr: "ignore",
        },
      );
      await proc.exited;
      const exited = Date.now();
      const first = firstRequestAt(api, sid);
      const result = resultTimes(log).get(sid);
      if (i > 0 && first !== undefined && result !== undefined) direct.push({ toFirstRequest: first - t0, resultToDone: exited - result });
    }

    const service = await o.startService({
      SERVICE_CLAUDE_BINARY: wrapper,
      MODEL_BASE_URL: api.url,
      MODEL_AUTH_TOKEN: "bench",
      ...OFFLINE,
    });
    const jobs: RealCliSample[] = [];
    let failed = 0;
    try {
      for (let i = 0; i <= o.jobs; i++) {
        const t0 = Date.now();
        const job = await o.submit(service.url, { task: `Explain bench-real-${i}`, profile: "review", wait: true });
        if (job.status !== "succeeded" || !job.session_id || !job.finished_at) {
          failed++;
          continue;
        }
        const first = firstRequestAt(api, job.session_id);
        const result = resultTimes(log).get(job.session_id);
        // The first job warms the page cache for the 200 MB binary; it is not counted.
        if (i > 0 && first !== undefined && result !== undefined) {
          jobs.push({ toFirstRequest: first - t0, resultToDone: Date.parse(job.finished_at) - result });
        }
      }
    } finally {
      await service.stop();
    }
    return { jobs, direct, failed };
  } finally {
    api.stop();
  }
}

/** The image's size when one is built locally (podman or docker), else a note. */
export function imageSize(image = process.env.BRAIN_IMAGE ?? "brain-stack:local"): string {
  for (const tool of ["podman", "docker"]) {
    try {
      const r = Bun.spawnSync([tool, "image", "inspect", image, "--format", "{{.Size}}"], { stdout: "pipe", stderr: "pipe", timeout: 20_000 });
      const bytes = Number(r.stdout.toString().trim());
      if (r.exitCode === 0 && Number.isFinite(bytes) && bytes > 0) return `${(bytes / 1e6).toFixed(0)} MB (${tool} ${image})`;
    } catch {
      // not installed
    }
  }
  return `not built here (${image}; .ci/run builds it)`;
}
