// The plain store (no held commits, INDEX_COMMIT_HOLD_MS=0) on a disk that fills up (a tmpfs of
// the test's own): a write whose commit fails is refused, never answered as indexed, and a
// search does not find it; once space is back the same write goes in.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { canMountTmpfs, mountTmpfs, type Tmpfs, under } from "../../../../test/support/tmpfs.ts";
import { isStorageFull } from "../../../common/storage.ts";
import { parseQuery } from "../query.ts";
import type { IndexDoc } from "../types.ts";
import { openSqliteIndex } from "./store.ts";

describe.skipIf(!canMountTmpfs)("the plain SQLite store on a full disk", () => {
  let fs: Tmpfs;
  beforeAll(() => {
    fs = mountTmpfs(8);
  });
  afterAll(async () => {
    await fs.unmount();
  });

  const doc = (i: number, body: string): IndexDoc => ({
    path: `raw/n${i}.md`,
    producer: "raw",
    title: `Note ${i}`,
    body,
    tags: [],
    updatedAt: new Date("2026-01-01T00:00:00Z"),
    hash: Bun.hash(body).toString(16),
  });

  it("refuses a write its commit could not keep, then takes it once space is back", async () => {
    const store = await openSqliteIndex({ dataDir: under(fs, "data"), holdCommitMs: 0, backgroundCheckpoints: false });
    try {
      expect(await store.upsert(doc(0, "walrus colony before the disk filled"))).toBe(true);
      fs.fill();
      // Many distinct words a note, so the write needs new pages whatever the last ones hold.
      const big = (i: number) => doc(i, Array.from({ length: 3000 }, (_, k) => `zebra${i}x${k}`).join(" "));
      const outcomes = await Promise.allSettled([1, 2, 3].map((i) => store.upsert(big(i))));
      for (const o of outcomes) {
        expect(o.status).toBe("rejected");
        expect(isStorageFull((o as PromiseRejectedResult).reason)).toBe(true);
      }
      expect(await store.search(parseQuery("zebra1x7"), 10)).toEqual([]);
      expect((await store.search(parseQuery("walrus"), 10)).map((h) => h.path)).toEqual(["raw/n0.md"]);
      fs.free();
      expect(await store.upsert(big(1))).toBe(true);
      expect((await store.search(parseQuery("zebra1x7"), 10)).map((h) => h.path)).toEqual(["raw/n1.md"]);
    } finally {
      await store.close();
    }
  });
});
