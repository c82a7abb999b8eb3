// What GET /metrics reports (issue 17, Prometheus text through prom-client): jobs waiting in
// the queue (the whole shared queue with REDIS_URL, else this process's), jobs running here,
// jobs this process finished by status since it started, its job slots, and chat turns
// running. Every series carries the pod name, so several pods can be told apart (and summed).
import { Counter, Gauge, Registry } from "prom-client";
import type { JobService } from "./jobs/service";

export interface MetricsSources {
  pod: string;
  jobs: JobService;
  /** Chat turns running now (agent mode), when it is on. */
  chatTurns?: () => number;
}

export function createMetrics(src: MetricsSources): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ pod: src.pod });
  new Gauge({
    name: "orchestrator_jobs_queued",
    help: "Jobs waiting to start: the whole shared queue with REDIS_URL, else this process's",
    registers: [registry],
    async collect() {
      this.set(await src.jobs.queueDepth().catch(() => Number.NaN));
    },
  });
  new Gauge({
    name: "orchestrator_jobs_running",
    help: "Jobs running in this process",
    registers: [registry],
    collect() {
      this.set(src.jobs.stats().running);
    },
  });
  new Gauge({
    name: "orchestrator_job_slots",
    help: "Jobs this process runs at once at most (SERVICE_MAX_PARALLEL_JOBS)",
    registers: [registry],
    collect() {
      this.set(src.jobs.stats().maxParallel);
    },
  });
  new Counter({
    name: "orchestrator_jobs_finished_total",
    help: "Jobs this process finished since it started, by final status",
    labelNames: ["status"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [status, n] of Object.entries(src.jobs.stats().finished)) this.inc({ status }, n);
    },
  });
  new Gauge({
    name: "orchestrator_chat_turns_running",
    help: "Chat turns (agent mode) running in this process",
    registers: [registry],
    collect() {
      this.set(src.chatTurns?.() ?? 0);
    },
  });
  return registry;
}
