import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import { mkdir, mkdtemp, rm, unlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { comparePaths, walkSorted } from "../vault/walk.ts";
import { parseQuery } from "./query.ts";
import { refreshFolder } from "./refresh.ts";
import { openSqliteIndex, type SqliteIndexStore } from "./sqlite/store.ts";

let vault: string;
let dataDir: string;
let store: SqliteIndexStore;

beforeEach(async () => {
  vault = await mkdtemp(join(tmpdir(), "refresh-vault-"));
  dataDir = await mkdtemp(join(tmpdir(), "refresh-data-"));
  store = await openSqliteIndex({ dataDir });
});

afterEach(async () => {
  await store.close();
  await rm(vault, { recursive: true, force: true });
  await rm(dataDir, { recursive: true, force: true });
});

const note = (dir: string, i: number) => join("raw", dir, `n${String(i).padStart(2, "0")}.md`);

async function put(path: string, text: string): Promise<void> {
  await mkdir(join(vault, path, ".."), { recursive: true });
  await writeFile(join(vault, path), text);
}

const indexed = async () => [...(await store.fingerprints("raw")).keys()].sort();

describe("refreshFolder over many batches", () => {
  it("indexes every file of a folder read in many batches, then drops the deleted ones and re-indexes the changed ones", async () => {
    const paths: string[] = [];
    for (const dir of ["a", "b/deep", "c"]) {
      for (let i = 0; i < 10; i++) {
        paths.push(note(dir, i));
        await put(note(dir, i), `# Note ${dir} ${i}\nabout kites number${dir.replace("/", "")}${i}\n`);
      }
    }
    // 4 files a batch: 30 files are 8 batches; the index's rows are read 3 at a time.
    const small = { vault, concurrency: 4, rowsPage: 3 };
    expect(await refreshFolder(store, small)).toMatchObject({ added: 30, updated: 0, removed: 0, unchanged: 0 });
    expect(await indexed()).toEqual(paths.sort());
    expect((await store.search(parseQuery("numberc7"), 5)).map((h) => h.path)).toEqual([note("c", 7)]);

    const gone = [note("a", 0), note("a", 9), note("b/deep", 3), note("b/deep", 4), note("c", 5), note("c", 6), note("c", 9)];
    for (const p of gone) await unlink(join(vault, p));
    await rm(join(vault, "raw", "b"), { recursive: true, force: true }); // a whole folder gone
    await put(note("a", 5), "# Note a 5\nabout gliders now\n");
    const later = new Date(Date.now() + 5000);
    await utimes(join(vault, note("a", 5)), later, later);
    await put(note("d", 1), "# Note d 1\nabout balloons\n");

    const left = paths.filter((p) => !gone.includes(p) && !p.startsWith("raw/b/"));
    const counts = await refreshFolder(store, small);
    expect(counts).toMatchObject({ added: 1, updated: 1, removed: 10 + 5, unchanged: left.length - 1 });
    expect(await indexed()).toEqual([...left, note("d", 1)].sort());
    expect((await store.search(parseQuery("gliders"), 5)).map((h) => h.path)).toEqual([note("a", 5)]);
    expect(await store.search(parseQuery("numberbdeep3"), 5)).toEqual([]);
    // Nothing changed: every row matched to its file across the pages, nothing removed.
    expect(await refreshFolder(store, small)).toMatchObject({ added: 0, updated: 0, removed: 0, unchanged: left.length + 1 });
  });
});

describe("walkSorted", () => {
  it("streams a folder's files in the index's path order, folders where 'name/' sorts, dot-entries skipped", async () => {
    for (const p of [
      "raw/a.md",
      "raw/a-b.md",
      "raw/a/x.md",
      "raw/a0.md",
      "raw/Z.md",
      "raw/.hidden.md",
      "raw/.git/x.md",
      "raw/é.md",
      "raw/𝔸.md",
      "raw/\uFF21.md",
    ])
      await put(p, "x");
    const walked: string[] = [];
    for await (const f of walkSorted(vault, "raw")) walked.push(f.path);
    expect(walked).toEqual(["raw/Z.md", "raw/a-b.md", "raw/a.md", "raw/a/x.md", "raw/a0.md", "raw/é.md", "raw/\uFF21.md", "raw/𝔸.md"]);
    // The order UTF-8 bytes give (SQLite's BINARY, Postgres's COLLATE "C").
    expect([...walked].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)))).toEqual(walked);
    expect([...walked].sort(comparePaths)).toEqual(walked);
  });
});
