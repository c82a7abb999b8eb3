// For the job tests (src/orchestrator/jobs/*.test.ts, the route and MCP tests): an executor the
// test drives by hand (it counts how many run at once and records what it got), a profile
// catalog, and a service on temp-dir stores.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFileStore } from "../../src/common/kv/file-store";
import type { KeyValueStore } from "../../src/common/kv/store";
import type { ExecuteRequest, ExecutionResult, Executor, ProfileCatalog } from "../../src/orchestrator/execution/executor";
import { createFileJobStore } from "../../src/orchestrator/jobs/file-store";
import { createJobService, type JobService, type JobServiceOptions } from "../../src/orchestrator/jobs/service";
import type { JobStore } from "../../src/orchestrator/jobs/store";
import type { ProfileList } from "../../src/orchestrator/profiles/listing";

export interface TestProfile {
  name: string;
  timeout_seconds?: number;
  retries?: number;
}

export const testProfiles: ProfileCatalog<TestProfile> & { list(): ProfileList } = {
  select: (task, requested) => {
    if (requested === "auto") return { name: /review/i.test(task) ? "review" : "code" };
    return ["code", "review"].includes(requested) ? { name: requested } : undefined;
  },
  names: () => ["code", "review"],
  list: () => ({
    profiles: ["code", "review"].map((name) => ({
      name,
      description: `${name} profile`,
      model: name === "code" ? "sonnet" : "haiku",
      max_turns: name === "code" ? 80 : 20,
      auto_pr: name === "code",
      permission_mode: "default",
      timeout_seconds: 60,
      source: "bundled",
    })),
    errors: [],
  }),
};

export const succeeded = (output = "done"): ExecutionResult => ({
  status: "succeeded",
  exit_code: 0,
  output,
  usage: { input_tokens: 10, output_tokens: 5 },
  cost_usd: 0.01,
});

/** An executor whose runs finish when the test says so (or at once with `auto`). */
export class HandExecutor {
  active = 0;
  peak = 0;
  readonly started: string[] = [];
  readonly requests = new Map<string, ExecuteRequest<TestProfile>>();
  private readonly finishers = new Map<string, (r: ExecutionResult) => void>();
  /** When set, every run finishes by itself after this many ms with `succeeded()`. */
  auto?: number;

  readonly execute: Executor<TestProfile> = async (req) => {
    this.active++;
    this.peak = Math.max(this.peak, this.active);
    this.started.push(req.job.id);
    this.requests.set(req.job.id, req);
    try {
      return await new Promise<ExecutionResult>((resolve) => {
        this.finishers.set(req.job.id, resolve);
        // Like the real runner: an abort stops the agent, which exits 143 after SIGTERM.
        const stopped = () => resolve({ status: "cancelled", exit_code: 143, output: "partial", error: "terminated" });
        if (req.signal.aborted) return stopped();
        req.signal.addEventListener("abort", stopped, { once: true });
        if (this.auto !== undefined) setTimeout(() => resolve(succeeded()), this.auto * Math.random());
      });
    } finally {
      this.active--;
      this.finishers.delete(req.job.id);
    }
  };

  isRunning = (id: string) => this.finishers.has(id);

  finish(id: string, result: ExecutionResult = succeeded()): void {
    const f = this.finishers.get(id);
    if (!f) throw new Error(`job ${id} is not running in the executor`);
    f(result);
  }
}

export interface ServiceHarness {
  dir: string;
  store: JobStore;
  kv: KeyValueStore;
  executor: HandExecutor;
  service: JobService;
  /** Another service (another process, another pod by default) on the same stores. */
  another(opts?: Partial<JobServiceOptions<TestProfile>>): JobService;
  cleanup(): Promise<void>;
}

export async function serviceHarness(opts: Partial<JobServiceOptions<TestProfile>> & { ttlSeconds?: number } = {}): Promise<ServiceHarness> {
  const dir = await mkdtemp(join(tmpdir(), "jobs-"));
  const store = opts.store ?? (await createFileJobStore({ dir: join(dir, "jobs"), ttlSeconds: opts.ttlSeconds ?? 3600 }));
  const kv = opts.kv ?? (await createFileStore({ dir: join(dir, "kv") }));
  const executor = new HandExecutor();
  const services: JobService[] = [];
  const make = (o: Partial<JobServiceOptions<TestProfile>>) => {
    const s = createJobService<TestProfile>({
      store,
      kv,
      execute: executor.execute,
      profiles: testProfiles,
      podName: "pod-a",
      maxParallel: 3,
      defaultTimeoutSeconds: 60,
      // The suites' repositories are local bare repos (file://).
      allowLocalRepos: true,
      watchMs: 50,
      closeGraceMs: 2_000,
      ...opts,
      ...o,
    });
    services.push(s);
    return s;
  };
  const service = make({});
  return {
    dir,
    store,
    kv,
    executor,
    service,
    another: (o = {}) => make({ podName: "pod-b", ...o }),
    async cleanup() {
      await Promise.all(services.map((s) => s.close()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
