// router-cli tick [--dry-run] [--no-ai] [--wait]: enqueue a tick; --wait blocks until it is
// done (exit 1 when it failed, printing its error_tail).
import { defineCommand } from "citty";
import { consola } from "consola";
import { fail } from "../_errors";
import { client, connectionArgs } from "./_context";
import { enqueueTick, waitForTick } from "./_tick";

export default defineCommand({
  meta: { name: "tick", description: "Enqueue a tick (replay markers, arcs, lessons, signals, feed, index refresh)" },
  args: {
    ...connectionArgs,
    "dry-run": { type: "boolean", description: "read-only: report what it would write" },
    "no-ai": { type: "boolean", description: "deterministic: no model calls" },
    wait: { type: "boolean", description: "block until the tick is done" },
    json: { type: "boolean", description: "print the tick record as JSON" },
  },
  async run({ args }) {
    const c = client(args);
    // citty reads --no-ai as ai=false: accept both spellings.
    const noAi = args["no-ai"] === true || (args as Record<string, unknown>).ai === false;
    const queued = await enqueueTick(c, { dry_run: args["dry-run"], no_ai: noAi });
    const id = queued.tick_id;
    if (!args.wait) {
      if (args.json) console.log(JSON.stringify(queued));
      else consola.success(`tick ${id} ${queued.status}`);
      return;
    }
    const done = await waitForTick(c, id, { onStatus: (t) => !args.json && consola.info(`tick ${id}: ${t.status}`) });
    if (args.json) console.log(JSON.stringify(done));
    if (done.status === "failed") {
      if (args.json) return 1;
      fail(`tick ${id} failed:\n${done.error_tail ?? "(no error_tail)"}`);
    }
    if (!args.json) consola.success(`tick ${id} succeeded${done.counts ? `: ${JSON.stringify(done.counts)}` : ""}`);
  },
});
