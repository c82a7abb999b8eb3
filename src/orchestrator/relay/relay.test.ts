// Following a turn through the relay: what was kept, then what comes, until done.
import { describe, expect, it } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DomainError } from "../../common/domain-error";
import { createFileStore } from "../../common/kv/file-store";
import { until } from "../../../test/support/orchestrator-process";
import { EventRelay, type RelayEntry } from "./relay";

const relay = async () => new EventRelay(await createFileStore({ dir: join(mkdtempSync(join(tmpdir(), "relay-")), "kv") }), 60);

describe("EventRelay.follow", () => {
  it("yields the kept entries after Last-Event-ID, then live ones, and ends at done", async () => {
    const r = await relay();
    const w = r.writer("turn-1");
    w.append("narration", { text: "a" });
    w.append("narration", { text: "b" });
    await w.done({});
    const w2 = r.writer("turn-2");
    w2.append("narration", { text: "first" });
    await until(async () => (await r.read("turn-2")).known); // following starts with one entry kept
    const seen: RelayEntry[] = [];
    const entries = await r.follow("turn-2", 0, () => false);
    const following = (async () => {
      for await (const e of entries) seen.push(e);
    })();
    w2.append("final", { text: "second" });
    await w2.done({});
    await following;
    expect(seen.map((e) => e.event)).toEqual(["narration", "final", "done"]);
    const resumed: RelayEntry[] = [];
    for await (const e of await r.follow("turn-1", 1, () => false)) resumed.push(e);
    expect(resumed.map((e) => [e.seq, e.event])).toEqual([[2, "narration"], [3, "done"]]);
  });

  it("refuses a turn it never kept as not_found before yielding anything", async () => {
    const r = await relay();
    const err = await r.follow("nobody", 0, () => false).catch((e) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ kind: "not_found", code: "relay_not_found" });
  });

  it("stops following when the reader has gone", async () => {
    const r = await relay();
    r.writer("turn-3").append("narration", { text: "a" });
    await until(async () => (await r.read("turn-3")).known);
    let gone = false;
    const seen: string[] = [];
    for await (const e of await r.follow("turn-3", 0, () => gone)) {
      seen.push(e.event);
      gone = true;
    }
    expect(seen).toEqual(["narration"]);
  });
});
