// service-cli drain [--timeout 300] [--json]: before this pod stops, let its running jobs finish
// (spec: States and transitions, "Drain (pre-shutdown)"; a Kubernetes preStop hook runs it).
// Marks the pod (SERVICE_POD_NAME) draining, waits until none of its jobs is running, clears the
// flag. Exit 0 when drained, 1 when the timeout passed first.
//
// Two ways, the same flag: when the service answers, POST /admin/drain (it stops taking jobs at
// once). When it does not (it is starting, stuck, or the key is wrong), the drain runs here
// against the service's own stores (Redis or files, from the same settings): POST /jobs reads
// the flag from there at once, and the service stops starting queued jobs within seconds.
import { defineCommand } from "citty";
import { consola } from "consola";
import { ConnectionError } from "../../src/common/client/http-client";
import type { DrainResult } from "../../src/orchestrator/client";
import { loadOrchestratorConfig } from "../../src/orchestrator/config";
import { countRunningInStore, drainPod } from "../../src/orchestrator/jobs/drain";
import { openStores } from "../../src/orchestrator/runtime";
import { failure, usage } from "../_errors";
import { client, home, intArg, jsonArg, printJson } from "./_context";

export default defineCommand({
  meta: { name: "drain", description: "Stop taking jobs and wait for this pod's running jobs (preStop hook)" },
  args: {
    timeout: { type: "string", default: "300", description: "seconds to wait for running jobs" },
    via: { type: "string", default: "auto", description: "auto (the service if it answers, else its stores), server, or store" },
    ...jsonArg,
  },
  async run({ args }) {
    const timeout = intArg("timeout", args.timeout, 0, 86_400);
    const via = args.via;
    if (via !== "auto" && via !== "server" && via !== "store") return usage(`--via must be auto, server or store, not ${JSON.stringify(via)}`);
    let result: (DrainResult & { via: "server" | "store"; pod?: string }) | undefined;
    if (via !== "store") {
      try {
        result = { ...(await client().drain(timeout)), via: "server" };
      } catch (err) {
        if (via === "server") throw err;
        consola.info(`${err instanceof ConnectionError ? "the service does not answer" : failure(err).message}: draining through its stores`);
      }
    }
    if (!result) {
      const config = loadOrchestratorConfig(process.env, home());
      const { kv, store } = await openStores(config);
      try {
        if (!args.json) consola.info(`draining pod ${config.podName}: waiting up to ${timeout} s for its running jobs`);
        result = {
          ...(await drainPod({ kv, pod: config.podName, timeoutSeconds: timeout, countRunning: countRunningInStore(store, config.podName) })),
          via: "store",
          pod: config.podName,
        };
      } finally {
        await store.close();
        await kv.close();
      }
    }
    if (args.json) printJson(result);
    else if (result.drained) consola.success(`drained: no job of ${result.pod ? `pod ${result.pod}` : "this pod"} is running`);
    else consola.error(`drain timed out after ${timeout} s with ${result.running} job(s) still running`);
    return result.drained ? 0 : 1;
  },
});
