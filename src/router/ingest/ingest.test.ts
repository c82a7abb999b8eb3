import { afterAll, describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { documentFromFile } from "../index/document";
import type { IndexDoc, IndexStore } from "../index/types";
import { PathEscapeError } from "../vault/safe-path";
import { ingest, ingestBatch } from "./ingest";

const root = mkdtempSync(join(tmpdir(), "ingest-unit-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A vault whose index records what it is given. */
function lab() {
  const dir = mkdtempSync(join(root, "lab-"));
  const upserted: IndexDoc[] = [];
  /** The index's batch writes, each the paths it was given. */
  const batches: string[][] = [];
  const index = {
    upsert: async (doc: IndexDoc) => {
      upserted.push(doc);
      return true;
    },
    async upsertMany(docs: IndexDoc[]) {
      batches.push(docs.map((d) => d.path));
      return Promise.all(docs.map((d) => index.upsert(d)));
    },
    remove: async () => true,
  } as unknown as IndexStore;
  const deps = { vault: join(dir, "vault"), dataDir: join(dir, "data"), index, maxBytes: 1 << 20, now: () => new Date("2026-03-04T05:06:07Z") };
  return { deps, upserted, batches };
}

describe("ingest's index document", () => {
  // Titles and tags a YAML writer has to quote or might read back as something else, bodies
  // with frontmatter of their own, and a title cut from a long first line.
  const cases: Array<{ name: string; content: string; tags?: string[]; title?: string }> = [
    { name: "a heading", content: "# Deploys\nRoll back with `make rollback`." },
    { name: "a numeric title", content: "body text", title: "123" },
    { name: "a boolean title", content: "body text", title: "true" },
    { name: "a null title", content: "body text", title: "null" },
    { name: "a title with a colon and quotes", content: "body", title: `a: "b" 'c' #d` },
    { name: "a title like a list item", content: "body", title: "- item" },
    { name: "a title of document markers", content: "body", title: "--- ... ---" },
    { name: "a padded title", content: "body", title: "  padded  " },
    { name: "unicode", content: "Ärger über Café ☕ 日本語", title: "Café ☕ 日本語" },
    { name: "a long first line", content: `${"word ".repeat(15)}and more words after the cut ${"x ".repeat(40)}` },
    { name: "hash and spaced tags", content: "tagged", tags: ["#ops", " spaced ", "ops", "Ops", "#"] },
    { name: "numeric-looking tags", content: "tagged", tags: ["1", "true", "null", "0x10"] },
    {
      name: "its own frontmatter",
      content: "---\ntitle: From frontmatter\ntags: [a, '#b']\nnote: |\n  line one\n  ---\n  ...\ndate: 2024-01-02\n---\n\nThe body.\n",
    },
    { name: "frontmatter with a tag string", content: '---\ntag: x, y\nsummary: "--- not a fence"\n---\nBody\n' },
    { name: "trailing blank lines", content: "body\n\n\n\n" },
    { name: "CRLF lines", content: "# Title\r\nline one\r\nline two\r\n" },
  ];
  for (const c of cases) {
    it(`is what indexing the note file gives: ${c.name}`, async () => {
      const { deps, upserted } = lab();
      const result = await ingest(deps, { content: c.content, tags: c.tags ?? [], title: c.title });
      expect(upserted).toHaveLength(1);
      const doc = upserted[0]!;
      const file = readFileSync(join(deps.vault, result.paths[0]!), "utf8");
      // What a refresh of the vault would index for this file (same mtime).
      expect(doc).toEqual(documentFromFile({ path: result.paths[0]!, producer: "ingest", content: file, mtimeMs: doc.mtimeMs! }));
    });
  }
});

describe("ingest's folder", () => {
  it("refuses an ingest/ that links out of the vault, creating nothing through it and keeping no claim", async () => {
    const { deps } = lab();
    const outside = mkdtempSync(join(root, "outside-"));
    mkdirSync(deps.vault, { recursive: true });
    symlinkSync(outside, join(deps.vault, "ingest"));
    const err = await ingest(deps, { content: "# Linked out\nnothing of this may leave the vault", tags: [] }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(PathEscapeError);
    expect(readdirSync(outside)).toEqual([]);
    // Nothing recorded as ingested: the ledger folder holds no entry or claim.
    expect(existsSync(join(deps.dataDir, "ingested")) ? readdirSync(join(deps.dataDir, "ingested")) : []).toEqual([]);
  });
});

describe("ingestBatch's index rows", () => {
  const items = ["# Pump notes\nThe east pump is serviced monthly.", "# Valve notes\nThe west valve sticks in winter.", "# Fan notes\nThe fan hums."].map(
    (content) => ({ content, tags: [] }),
  );

  it("are written in one batch write (one transaction), in item order", async () => {
    const { deps, upserted, batches } = lab();
    const outcomes = await ingestBatch(deps, items);
    expect(outcomes.every((o) => "result" in o)).toBe(true);
    expect(batches).toHaveLength(1);
    expect(batches[0]).toEqual(upserted.map((d) => d.path));
    expect(upserted.map((d) => d.title)).toEqual(["Pump notes", "Valve notes", "Fan notes"]);
  });

  it("when the batch write fails, are written one by one: the item whose row fails fails alone, its note gone, and the others are in", async () => {
    const { deps, upserted } = lab();
    deps.index.upsertMany = async () => {
      throw new Error("batch refused");
    };
    const upsert = deps.index.upsert.bind(deps.index);
    deps.index.upsert = async (doc, opts) => {
      if (doc.title === "Valve notes") throw new Error("row refused");
      return upsert(doc, opts);
    };
    const outcomes = await ingestBatch(deps, items);
    expect("result" in outcomes[0]! && "result" in outcomes[2]!).toBe(true);
    expect("error" in outcomes[1]! && (outcomes[1].error as Error).message).toBe("row refused");
    expect(upserted.map((d) => d.title)).toEqual(["Pump notes", "Fan notes"]);
    // Two notes on disk, and the refused one's content is not recorded as ingested.
    expect(readdirSync(join(deps.vault, "ingest", "2026-03-04"))).toHaveLength(2);
    deps.index.upsert = upsert;
    const again = await ingestBatch(deps, [items[1]!]);
    expect("result" in again[0]! && again[0].result.duplicate).toBe(false);
  });
});

describe("ingestBatch when telling what it wrote fails", () => {
  it("fails that item alone: its note and row go, its claim is released, the others are in", async () => {
    const { deps, upserted } = lab();
    const removed: string[] = [];
    deps.index.remove = async (path: string) => {
      removed.push(path);
      return true;
    };
    const told: string[] = [];
    const written = async (path: string) => {
      told.push(path);
      if (path.startsWith("amygdala/")) throw new Error("indexer gone");
    };
    const signal = { content: "---\nseverity: high\n---\nThe east pump failed.", tags: ["alert"] };
    const plain = { content: "# Pump notes\nThe east pump is serviced monthly.", tags: [] };
    const outcomes = await ingestBatch({ ...deps, written }, [signal, plain]);
    expect("error" in outcomes[0]! && (outcomes[0].error as Error).message).toBe("indexer gone");
    expect("result" in outcomes[1]! && outcomes[1].result.kind).toBe("note");
    // The signal's note is gone again, from the vault and the index; the plain note stays.
    const notes = readdirSync(join(deps.vault, "ingest", "2026-03-04"));
    expect(notes).toHaveLength(1);
    expect(removed).toEqual([upserted.find((d) => d.title.includes("east pump failed"))!.path]);
    expect(told.some((p) => p.startsWith("amygdala/"))).toBe(true);
    // Its content is not recorded as ingested: the next try ingests it.
    const again = await ingestBatch(deps, [signal]);
    expect("result" in again[0]! && again[0].result.duplicate).toBe(false);
  });
});
