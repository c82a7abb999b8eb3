// router-cli sync [--wait | --check]: replay buffered markers (the hooks package's outbox and
// backlog folders, one JSON file per marker: {type, content, attrs, session_id,
// idempotency_key}) into POST /marker, preserving their original time (attrs.ts) and sending
// their idempotency key; accepted files leave the outbox (to ~/.router/sent/), files the
// router refuses go to ~/.router/rejected/ with the reason; then a tick is enqueued.
// Idempotent: a second run posts nothing new. Exit 0 clean, 1 hard failure, 2 degraded.
import { join } from "node:path";
import { defineCommand } from "citty";
import { consola } from "consola";
import { type ReplayCounts, ReplayInterrupted, replayOutbox } from "../../src/router/outbox/outbox";
import { fail } from "../_errors";
import { client, connectionArgs, home, readEnvFile } from "./_context";
import { enqueueTick, waitForTick } from "./_tick";

export default defineCommand({
  meta: { name: "sync", description: "Replay buffered markers into the router, then enqueue a tick (exit 0 clean, 1 failure, 2 degraded)" },
  args: {
    ...connectionArgs,
    wait: { type: "boolean", description: "block until the tick is done" },
    check: { type: "boolean", description: "narrate progress (implies --wait)" },
    outbox: { type: "string", description: "marker outbox (default BRAIN_OUTBOX or ~/.router/outbox)" },
    backlog: { type: "string", description: "marker backlog (default BRAIN_BACKLOG or ~/.router/backlog)" },
  },
  async run({ args }) {
    const file = readEnvFile();
    const dirs = [
      args.outbox || process.env.BRAIN_OUTBOX || file.BRAIN_OUTBOX || join(home(), ".router", "outbox"),
      args.backlog || process.env.BRAIN_BACKLOG || file.BRAIN_BACKLOG || join(home(), ".router", "backlog"),
    ];
    const narrate = (m: string) => args.check && consola.info(m);
    const sent = join(home(), ".router", "sent");
    const rejected = join(home(), ".router", "rejected");
    const c = client(args);
    let counts: ReplayCounts;
    try {
      counts = await replayOutbox(c, { dirs, sent, rejected, narrate });
    } catch (err) {
      if (!(err instanceof ReplayInterrupted)) throw err;
      consola.warn(`${err.counts.posted} marker(s) posted before the failure; the rest stay buffered`);
      throw err.cause;
    }
    const { posted, duplicates, refused } = counts;
    const report = () => (args.check ? consola.info : consola.success)(`markers: ${posted} posted, ${duplicates} already there, ${refused} refused`);
    // With nothing buffered no request has reached the router yet: the summary waits for the
    // tick's answer, so a router that does not answer is not preceded by a success line.
    const touched = posted + duplicates + refused > 0;
    if (touched) report();

    const queued = await enqueueTick(c, {});
    if (!touched) report();
    const id = queued.tick_id;
    narrate(`tick ${id} ${queued.status}`);
    if (args.wait || args.check) {
      const done = await waitForTick(c, id, { onStatus: (t) => narrate(`tick ${id}: ${t.status}`) });
      if (done.status === "failed") fail(`tick ${id} failed:\n${done.error_tail ?? ""}`);
      consola.success(`tick ${id} succeeded${done.counts ? `: ${JSON.stringify(done.counts)}` : ""}`);
    } else {
      consola.success(`tick ${id} ${queued.status}`);
    }
    // spec: exit 2 degraded (some marker refused).
    return refused > 0 ? 2 : 0;
  },
});
