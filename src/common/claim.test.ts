import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { claimRecord, withClaim, withRecordClaim } from "./claim.ts";
import { cleanCrashLeftovers } from "./crash-leftovers.ts";
import { FileLockTimeoutError } from "./file-lock.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "claim-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function deadPid(): Promise<number> {
  const p = Bun.spawn(["true"]);
  await p.exited;
  return p.pid;
}

describe("withClaim", () => {
  it("runs callers of one process one at a time, in order, and leaves no claim file", async () => {
    const path = join(dir, "k.claim");
    const log: string[] = [];
    let inside = 0;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        withClaim(path, async () => {
          inside++;
          expect(inside).toBe(1);
          log.push(`start ${i}`);
          await Promise.resolve();
          log.push(`end ${i}`);
          inside--;
        }),
      ),
    );
    expect(log).toEqual(Array.from({ length: 20 }, (_, i) => [`start ${i}`, `end ${i}`]).flat());
    expect(readdirSync(dir)).toEqual([]);
  });

  it("releases the claim when the function throws", async () => {
    const path = join(dir, "k.claim");
    await expect(withClaim(path, async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(existsSync(path)).toBe(false);
    expect(await withClaim(path, async () => 7)).toBe(7);
  });

  it("waits for another live process's claim, and gets it once released", async () => {
    const path = join(dir, "k.claim");
    const released = join(dir, "released");
    const child = Bun.spawn({
      cmd: [
        process.execPath,
        "-e",
        `
        const { withClaim } = await import(${JSON.stringify(join(import.meta.dir, "claim.ts"))});
        await withClaim(${JSON.stringify(path)}, async () => {
          console.log("held");
          await Bun.sleep(400);
          require("node:fs").writeFileSync(${JSON.stringify(released)}, "");
        });
      `,
      ],
      stdout: "pipe",
    });
    const reader = child.stdout.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("held");
    const sawRelease = await withClaim(path, async () => existsSync(released));
    expect(sawRelease).toBe(true);
    expect(await child.exited).toBe(0);
  });

  it("takes over at once a claim whose holder process on this host is gone", async () => {
    const path = join(dir, "k.claim");
    writeFileSync(path, JSON.stringify({ pid: await deadPid(), host: hostname() }));
    expect(await withClaim(path, async () => "ours", { timeoutMs: 1_000 })).toBe("ours");
    expect(existsSync(path)).toBe(false);
  });

  it("waits for another host's claim until it goes stale, and times out on a fresh one", async () => {
    const path = join(dir, "k.claim");
    writeFileSync(path, JSON.stringify({ pid: 1, host: "some-other-host" }));
    await expect(withClaim(path, async () => "x", { timeoutMs: 150, staleMs: 60_000 })).rejects.toBeInstanceOf(FileLockTimeoutError);
    const old = new Date(Date.now() - 120_000);
    utimesSync(path, old, old);
    expect(await withClaim(path, async () => "ours", { timeoutMs: 1_000, staleMs: 60_000 })).toBe("ours");
  });

  it("is removed at start-up when a dead process left it, and kept when a live one holds it", async () => {
    const dead = join(dir, "a.json.claim");
    const live = join(dir, "b.json.claim");
    writeFileSync(dead, JSON.stringify({ pid: await deadPid(), host: hostname() }));
    const holder = Bun.spawn(["sleep", "30"]);
    try {
      writeFileSync(live, JSON.stringify({ pid: holder.pid, host: hostname() }));
      const left = await cleanCrashLeftovers(dir);
      expect(left.locks).toBe(1);
      expect(existsSync(dead)).toBe(false);
      expect(existsSync(live)).toBe(true);
    } finally {
      holder.kill();
    }
  });
});

// Both ways of making the claim's file: in this thread (POST /ingest) and on the thread pool
// (a batch's items), with the same answers.
for (const [mode, opts] of [
  ["in this thread", {}],
  ["on the thread pool", { offThread: true }],
] as const) {
  describe(`withRecordClaim, the file made ${mode}`, () => {
    const seen = (text: string) => `seen ${JSON.parse(text).v}`;

    it("runs the first caller of a key; the others find its record, and the file holds the record (padded, parseable)", async () => {
      const path = join(dir, "k.json");
      let runs = 0;
      const results = await Promise.all(
        Array.from({ length: 5 }, () =>
          withRecordClaim(path, seen, opts, async () => {
            runs++;
            await Promise.resolve();
            return { value: "made", record: JSON.stringify({ v: 1 }) };
          }),
        ),
      );
      expect(results).toEqual(["made", "seen 1", "seen 1", "seen 1", "seen 1"]);
      expect(runs).toBe(1);
      expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ v: 1 });
      expect(readdirSync(dir)).toEqual(["k.json"]);
    });

    it("leaves no file when the work fails, so the next caller runs", async () => {
      const path = join(dir, "k.json");
      await expect(withRecordClaim(path, seen, opts, () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
      expect(existsSync(path)).toBe(false);
      expect(await withRecordClaim(path, seen, opts, async () => ({ value: "made", record: '{"v":2}' }))).toBe("made");
    });

    it("makes a missing folder", async () => {
      const path = join(dir, "a", "b", "k.json");
      expect(await withRecordClaim(path, seen, opts, async () => ({ value: "made", record: '{"v":4}' }))).toBe("made");
      expect(await withRecordClaim(path, seen, opts, async () => ({ value: "again", record: "{}" }))).toBe("seen 4");
    });

    it("takes over a dead process's claim, and waits for a live one's", async () => {
      const path = join(dir, "k.json");
      writeFileSync(path, JSON.stringify({ claim: { pid: await deadPid(), host: hostname() } }));
      expect(await withRecordClaim(path, seen, opts, async () => ({ value: "made", record: '{"v":3}' }))).toBe("made");
      const live = join(dir, "live.json");
      writeFileSync(live, JSON.stringify({ claim: { pid: process.ppid, host: hostname() } }));
      await expect(withRecordClaim(live, seen, { ...opts, timeoutMs: 100 }, async () => ({ value: "made", record: "{}" }))).rejects.toBeInstanceOf(
        FileLockTimeoutError,
      );
      expect(JSON.parse(readFileSync(live, "utf8")).claim.pid).toBe(process.ppid);
    });
  });
}

describe("claimRecord, held across a caller's stages", () => {
  it("keeps this process's other callers of the key waiting until finish(), and they find the record; abandon() lets the next run", async () => {
    const path = join(dir, "held.json");
    const got = await claimRecord(path, { offThread: true });
    if ("seen" in got) throw new Error("nothing was recorded yet");
    // The file is still the claim: a second caller of this process waits on it (instead of
    // taking it over as its own pid's, which would run it: "ran") and then finds the record.
    const other = withRecordClaim(
      path,
      (text) => `seen ${text.trim()}`,
      {},
      async () => ({ value: "ran", record: "{}" }),
    );
    await Promise.resolve();
    got.finish('{"v":7}');
    expect(await other).toBe('seen {"v":7}');
    const again = await claimRecord(join(dir, "gone.json"), {});
    if ("seen" in again) throw new Error("nothing was recorded yet");
    again.abandon();
    expect(existsSync(join(dir, "gone.json"))).toBe(false);
    expect(
      await withRecordClaim(
        join(dir, "gone.json"),
        () => "seen",
        {},
        async () => ({ value: "ran", record: "{}" }),
      ),
    ).toBe("ran");
  });
});
