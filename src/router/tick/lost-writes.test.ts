// A held commit that fails after its writes were answered (issue 37, part 2), on a SQLite index
// whose data directory is a small tmpfs of the test's own, filled to the last byte: the lost
// notes are told, indexed again from their files once space is back, and an index closed before
// that is caught up at its next open.
import { afterEach, describe, expect, it } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../../../test/support/main-process.ts";
import { canMountTmpfs, mountTmpfs, type Tmpfs } from "../../../test/support/tmpfs.ts";
import { until } from "../../../test/support/until.ts";
import { documentFromFile } from "../index/document.ts";
import { parseQuery } from "../index/query.ts";
import { openSqliteIndex, type SqliteIndexStore } from "../index/sqlite/store.ts";
import { LostWritesRecovery } from "./lost-writes.ts";

const NOTES = 60;
const word = (i: number) => `numbat${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`;

describe.skipIf(!canMountTmpfs)("notes lost by a failed held commit", () => {
  let fs: Tmpfs | undefined;
  afterEach(async () => {
    await fs?.unmount();
    fs = undefined;
  });

  /** A vault with NOTES raw notes, and an index on a fresh tmpfs holding them in one open transaction. */
  const setUp = async () => {
    fs = mountTmpfs(2);
    const vault = tempDir("lost-vault");
    mkdirSync(join(vault, "raw"));
    const store = await openSqliteIndex({ dataDir: join(fs.dir, "data"), holdCommitMs: 60_000 });
    for (let i = 0; i < NOTES; i++) {
      const path = `raw/${word(i)}.md`;
      const content = `# ${word(i)}\n\nThe ${word(i)} runbook: ${"drain the queue, then restart. ".repeat(60)}`;
      writeFileSync(join(vault, path), content);
      await store.upsert(documentFromFile({ path, producer: "raw", content, mtimeMs: Date.now() }));
    }
    return { vault, store };
  };

  const unfound = async (store: SqliteIndexStore) => {
    const missing: string[] = [];
    for (let i = 0; i < NOTES; i++) if ((await store.search(parseQuery(word(i)), 3)).length === 0) missing.push(word(i));
    return missing;
  };

  it("tells the lost paths, and indexes them again from their files once space is back", async () => {
    const { vault, store } = await setUp();
    const recovery = new LostWritesRecovery({ vault, index: store });
    const told: string[] = [];
    store.onLostWrites((paths) => told.push(...paths));
    try {
      fs!.fill();
      store.settle(); // the commit comes due on a full disk
      expect(new Set(told).size).toBe(NOTES);
      // Still full: indexed again, its commit fails again, and it is tried again.
      await until(() => told.length > NOTES, { ms: 15_000, what: "a second attempt on the full disk" });
      fs!.free();
      await until(async () => (await unfound(store)).length === 0, { ms: 15_000, what: "every lost note to be found" });
    } finally {
      await recovery.close();
      await store.close();
    }
  }, 60_000);

  it("an index closed before they went back in is caught up at its next open", async () => {
    const { vault, store } = await setUp();
    const recovery = new LostWritesRecovery({ vault, index: store });
    fs!.fill();
    store.settle();
    await recovery.close();
    await store.close();
    fs!.free();
    const again = await openSqliteIndex({ dataDir: join(fs!.dir, "data"), holdCommitMs: 60_000 });
    try {
      expect(again.stoppedUnclean).toBe(true);
      expect(await unfound(again)).toHaveLength(NOTES);
      // What the router does at start-up when stoppedUnclean is set.
      const { catchUpIndex } = await import("./index-refresh.ts");
      await catchUpIndex({ vault, index: again });
      expect(await unfound(again)).toEqual([]);
    } finally {
      await again.close();
    }
  }, 60_000);
});
