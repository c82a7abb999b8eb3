// One suite for both IndexStores' links and listings (issue 20): links extracted on upsert,
// kept right across edits, renames and deletes; backlinks; dangling links counted; recent
// notes newest first in pages. Run by src/router/index/sqlite/store.test.ts and postgres.test.ts.
import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import { documentFromFile } from "../../src/router/index/document.ts";
import type { IndexStore, Producer } from "../../src/router/index/types.ts";
import { backlinksOf, outgoingOf } from "../../src/router/notes/graph.ts";
import type { StoreLab } from "./index-search-suite.ts";

export function describeLinkStore(name: string, newLab: () => Promise<StoreLab>): void {
  describe(name, () => {
    let lab: StoreLab;
    let store: IndexStore;
    beforeEach(async () => {
      lab = await newLab();
      store = await lab.open();
    });
    afterEach(async () => {
      await store.close().catch(() => {});
      await lab.cleanup();
    });

    const put = (path: string, content: string, mtimeMs = Date.parse("2026-01-01T00:00:00Z"), producer: Producer = "raw") =>
      store.upsert(documentFromFile({ path, producer, content, mtimeMs }));
    const outgoing = async (path: string) =>
      (await outgoingOf(store, [path]))
        .get(path)!
        .map((l) => l.note?.path ?? `dangling:${l.target}`)
        .sort();
    const backlinks = async (path: string) => (await backlinksOf(store, [path])).get(path)!.sort();

    it("keeps a note's links and finds the notes linking to it", async () => {
      await put("raw/deploy.md", "# Deploy\nSee [[rollback]] and [the db](db/postgres.md).");
      await put("raw/rollback.md", "# Rollback\nBack to [[Deploy]].");
      await put("raw/db/postgres.md", "# Postgres\n[deploys](../deploy.md)");
      expect(await outgoing("raw/deploy.md")).toEqual(["raw/db/postgres.md", "raw/rollback.md"]);
      expect(await backlinks("raw/deploy.md")).toEqual(["raw/db/postgres.md", "raw/rollback.md"]);
      expect(await backlinks("raw/rollback.md")).toEqual(["raw/deploy.md"]);
    });

    it("replaces a note's links when it changes", async () => {
      await put("raw/a.md", "[[b]]");
      await put("raw/b.md", "b");
      await put("raw/c.md", "c");
      await put("raw/a.md", "now [[c]] only", Date.parse("2026-01-02T00:00:00Z"));
      expect(await outgoing("raw/a.md")).toEqual(["raw/c.md"]);
      expect(await backlinks("raw/b.md")).toEqual([]);
      expect(await backlinks("raw/c.md")).toEqual(["raw/a.md"]);
    });

    it("after a rename, links to the old name dangle and links to the new one resolve", async () => {
      await put("raw/a.md", "[[plan]] and [[plan-v2]]");
      await put("raw/plan.md", "# Plan\nsee [[a]]");
      // A rename is the old path leaving the index and the new one arriving (as a refresh sees it).
      await store.remove("raw/plan.md");
      await put("raw/plan-v2.md", "# Plan\nsee [[a]]");
      expect(await outgoing("raw/a.md")).toEqual(["dangling:plan", "raw/plan-v2.md"]);
      expect(await backlinks("raw/plan-v2.md")).toEqual(["raw/a.md"]);
      expect(await backlinks("raw/a.md")).toEqual(["raw/plan-v2.md"]);
    });

    it("a deleted note's links leave with it, and links to it are counted as dangling", async () => {
      await put("raw/a.md", "[[b]] [[c]]");
      await put("raw/b.md", "[[a]]");
      await put("raw/c.md", "c");
      expect(await store.linkCounts()).toMatchObject({ links: 3, dangling: 0 });
      await store.remove("raw/b.md");
      expect(await backlinks("raw/a.md")).toEqual([]);
      expect(await outgoing("raw/a.md")).toEqual(["dangling:b", "raw/c.md"]);
      expect(await store.linkCounts()).toEqual({ links: 2, dangling: 1, examples: [{ source: "raw/a.md", target: "b" }] });
    });

    it("resolves a wikilink to the shortest path of its name, a folder narrowing it", async () => {
      await put("raw/x.md", "[[deploy]] [[old/deploy]]");
      await put("raw/deploy.md", "top");
      await put("raw/old/deploy.md", "old");
      expect(await outgoing("raw/x.md")).toEqual(["raw/deploy.md", "raw/old/deploy.md"]);
      expect(await backlinks("raw/old/deploy.md")).toEqual(["raw/x.md"]);
    });

    it("lists notes newest first, filtered, a page at a time without overlap", async () => {
      const t = (d: number) => Date.parse(`2026-02-${String(d).padStart(2, "0")}T00:00:00Z`);
      for (let d = 1; d <= 9; d++) await put(`raw/n${d}.md`, `---\ntags: [${d % 2 ? "odd" : "even"}]\n---\nnote ${d}`, t(d));
      await put("ingest/i.md", "ingested", t(5), "ingest");
      await put("raw/same-a.md", "a", t(9));
      const first = await store.recent({ limit: 4 });
      expect(first.map((n) => n.path)).toEqual(["raw/same-a.md", "raw/n9.md", "raw/n8.md", "raw/n7.md"]);
      const second = await store.recent({ limit: 4, after: { updatedAt: first[3]!.updatedAt, path: first[3]!.path } });
      expect(second.map((n) => n.path)).toEqual(["raw/n6.md", "raw/n5.md", "ingest/i.md", "raw/n4.md"]);
      expect((await store.recent({ limit: 10, since: new Date(t(8)) })).map((n) => n.path)).toEqual(["raw/same-a.md", "raw/n9.md", "raw/n8.md"]);
      expect((await store.recent({ limit: 10, tag: "ODD", since: new Date(t(5)) })).map((n) => n.path)).toEqual(["raw/n9.md", "raw/n7.md", "raw/n5.md"]);
      expect((await store.recent({ limit: 10, producer: "ingest" })).map((n) => n.path)).toEqual(["ingest/i.md"]);
      expect((await store.recent({ limit: 2, prefix: "raw/n" })).map((n) => n.path)).toEqual(["raw/n9.md", "raw/n8.md"]);
      expect(first[1]).toMatchObject({ producer: "raw", title: "n9", tags: ["odd"] });
      expect(first[1]!.updatedAt.getTime()).toBe(t(9));
    });

    it("lists indexed paths under a prefix in order", async () => {
      for (const p of ["raw/b/2.md", "raw/a.md", "raw/b/1.md", "raw/bz.md"]) await put(p, p);
      expect(await store.pathsUnder("raw/b/", 10)).toEqual(["raw/b/1.md", "raw/b/2.md"]);
      expect(await store.pathsUnder("", 2)).toEqual(["raw/a.md", "raw/b/1.md"]);
    });
  });
}
