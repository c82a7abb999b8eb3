// A job's event log on a disk that fills up (a tmpfs of the test's own): the statuses, errors
// and the last running totals of appends refused for want of space are written, in order, once
// space is back, and no half line is left in the log.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { canMountTmpfs, mountTmpfs, type Tmpfs, under } from "../../../../test/support/tmpfs";
import { until } from "../../../../test/support/until";
import type { Job } from "../schema";
import { createFileJobEventStore } from "./file-store";
import { jobEventLog } from "./index";
import type { JobEvent } from "./schema";

describe.skipIf(!canMountTmpfs)("a job's event log on a full disk", () => {
  let fs: Tmpfs;
  beforeAll(() => {
    fs = mountTmpfs(2);
  });
  afterAll(async () => {
    await fs.unmount();
  });

  const job = (id: string, status: Job["status"], error?: string) => ({ id, status, updated_at: new Date().toISOString(), error }) as Job;
  const at = () => new Date().toISOString();
  const usage = (n: number): JobEvent => ({
    type: "usage",
    at: at(),
    usage: { input_tokens: n, output_tokens: n, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    total_cost_usd: null,
    num_turns: n,
    duration_ms: n,
  });

  it("writes the held statuses, error and last totals once space is back, before what follows, with no damaged line", async () => {
    const dir = under(fs, "events");
    const log = jobEventLog(createFileJobEventStore({ dir, ttlSeconds: 60 }));
    const id = Bun.randomUUIDv7();
    await log.status(job(id, "queued"));
    await log.status(job(id, "running"));
    fs.fill();
    // Refused (each append is more than a page, so no file's last page can take it): a big text
    // (dropped), two totals (the last is kept), an error and the final status.
    const boom = "boom ".repeat(1_000);
    const big: JobEvent = { type: "text", at: at(), text: "x".repeat(8_000), final: false, parent_tool_use_id: null };
    await log.store.append(id, [big, usage(1), usage(2)]).catch(() => {});
    await log.store.append(id, [{ type: "error", at: at(), code: "agent_failed", message: boom }]).catch(() => {});
    await log.status(job(id, "failed", boom));
    expect((await log.store.read(id, 0)).map((e) => e.event.type)).toEqual(["status", "status"]);

    fs.free();
    // The retry writes them with no new append.
    const events = await until(
      async () => {
        const all = (await log.store.read(id, 0)).map((e) => e.event);
        return all.length >= 5 && all;
      },
      { ms: 10_000, what: "the held events to be written" },
    );
    expect(events.map((e) => (e.type === "status" ? `status:${e.status}` : e.type))).toEqual([
      "status:queued",
      "status:running",
      "usage",
      "error",
      "status:failed",
    ]);
    expect(events[2]).toMatchObject({ type: "usage", num_turns: 2 });
    // Every line of the file is whole JSON.
    const lines = readFileSync(join(dir, `${id}.events.jsonl`), "utf8")
      .trimEnd()
      .split("\n");
    expect(lines.map((l) => JSON.parse(l).type)).toEqual(["status", "status", "usage", "error", "status"]);
  });
});
