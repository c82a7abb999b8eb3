// One behavioural suite for every IndexStore: SQLite and Postgres must answer the same
// searches the same way (issue 3: "the same search suite passes on SQLite and on a real
// Postgres"). src/router/index/sqlite/store.test.ts, postgres.test.ts and pgvector.test.ts each run it
// against one engine.
import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { chunkDocument } from "../../src/router/index/chunk.ts";
import { DimensionMismatchError, VectorsUnavailableError } from "../../src/router/index/errors.ts";
import { parseQuery } from "../../src/router/index/query.ts";
import { MAX_INDEXED_FILE_BYTES, refreshFolder } from "../../src/router/index/refresh.ts";
import { type IndexDoc, type IndexStore, SNIPPET_MARK } from "../../src/router/index/types.ts";
import { corpus, HOSTILE_QUERIES } from "../fixtures/index-corpus.ts";

/** One storage location (a temp dir, a Postgres schema); open() may be called more than once. */
export interface StoreLab {
  open(opts?: { embeddingDim?: number }): Promise<IndexStore>;
  cleanup(): Promise<void>;
}

export interface SuiteOptions {
  /** Run the vector tests (the engine has sqlite-vec / pgvector). */
  vectors: boolean;
}

const DIM = 4;

export function describeIndexStore(name: string, newLab: () => Promise<StoreLab>, opts: SuiteOptions): void {
  describe(name, () => {
    let lab: StoreLab;
    let store: IndexStore;
    const opened: IndexStore[] = [];
    const open = async (o?: { embeddingDim?: number }) => {
      const s = await lab.open(o);
      opened.push(s);
      return s;
    };
    const search = (q: string, limit = 10) => store.search(parseQuery(q), limit);
    const paths = async (q: string, limit = 10) => (await search(q, limit)).map((h) => h.path);
    const load = async (docs = corpus()) => {
      for (const d of docs) await store.upsert(d);
    };

    beforeEach(async () => {
      lab = await newLab();
      store = await open(opts.vectors ? { embeddingDim: DIM } : undefined);
    });
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close().catch(() => {});
      await lab.cleanup();
    });

    describe("search", () => {
      it("ranks a title match above a passing mention", async () => {
        await load();
        const hits = await paths("postgres");
        expect(hits[0]).toBe("raw/runbooks/postgres-vacuum.md");
        expect(hits).toContain("raw/notes/kitchen.md");
        expect(hits.indexOf("raw/notes/kitchen.md")).toBeGreaterThan(0);
      });

      it("matches a quoted phrase only where its words stand together", async () => {
        await load();
        expect(await paths('"rolling restart"')).toEqual(["raw/runbooks/deploy.md"]);
        expect(await paths("rolling restart")).toContain("raw/notes/restarts.md");
      });

      it("answers notes holding any word, those holding every word first; match all keeps AND", async () => {
        await load();
        const any = await search("stampede kitchen");
        expect(any.map((h) => h.path).sort()).toEqual(["left/reference/lessons/cache-stampede.md", "raw/notes/kitchen.md"]);
        expect(any.map((h) => h.coverage)).toEqual([0.5, 0.5]);
        const cache = await search("cache stampede");
        expect(cache[0]?.path).toBe("left/reference/lessons/cache-stampede.md");
        expect(cache[0]?.coverage).toBe(1);
        expect((await store.search(parseQuery("cache stampede"), 10, { match: "all" })).map((h) => h.path)).toEqual([
          "left/reference/lessons/cache-stampede.md",
        ]);
        // Strict: no fallback to any word when no note holds them all.
        expect(await store.search(parseQuery("stampede kitchen"), 10, { match: "all" })).toEqual([]);
      });

      it("requires every word of a document under match all, whichever of its chunks hold them", async () => {
        await load();
        const guide = corpus().find((d) => d.path === "raw/guides/operations.md")!;
        const chunks = chunkDocument(guide);
        expect(chunks.some((c) => c.text.includes("backups") && c.text.includes("kubernetes"))).toBe(false);
        // The signal that mentions backups alone stays out.
        expect((await store.search(parseQuery("backups kubernetes"), 10, { match: "all" })).map((h) => h.path)).toEqual([guide.path]);
        const any = await search("backups kubernetes");
        expect(any[0]?.path).toBe(guide.path);
        expect(any[0]?.coverage).toBe(1);
        expect(any.map((h) => h.path)).toContain("signals/disk-full.md");
      });

      it("finds inflected forms (stemming)", async () => {
        await load();
        expect(await paths("restarting")).toContain("raw/notes/restarts.md");
      });

      it("filters by tag, case-insensitively, every tag required", async () => {
        await load();
        const ops = await paths("tag:OPS deploy");
        expect(ops.sort()).toEqual(["left/reference/lessons/cache-stampede.md", "raw/runbooks/deploy.md"]);
        expect(await paths("tag:ops tag:incident deploy")).toEqual(["left/reference/lessons/cache-stampede.md"]);
        expect(await paths("tag:database")).toEqual(["raw/runbooks/postgres-vacuum.md"]);
      });

      it("filters by producer, any of several", async () => {
        await load();
        expect(await paths("producer:lessons deploy")).toEqual(["left/reference/lessons/cache-stampede.md"]);
        const two = await paths("producer:arcs producer:feed kubernetes");
        expect(two.sort()).toEqual(["arcs/kubernetes-migration.md", "brain-feed/weekly.md"]);
      });

      it("lists filtered documents newest first when the query has no words", async () => {
        await load();
        const hits = await search("tag:ops");
        expect(hits.map((h) => h.path)).toEqual([
          "left/reference/lessons/cache-stampede.md",
          "raw/runbooks/deploy.md",
          "raw/guides/operations.md",
          "raw/runbooks/postgres-vacuum.md",
        ]);
        expect(await search("")).toEqual([]);
      });

      it("marks the matched term in the snippet", async () => {
        await load();
        const [hit] = await search("stampede");
        expect(hit?.snippet).toContain(`${SNIPPET_MARK.open}stampede${SNIPPET_MARK.close}`);
        const [vacuum] = await search("autovacuum");
        expect(vacuum?.snippet).toContain(`${SNIPPET_MARK.open}autovacuum${SNIPPET_MARK.close}`);
        expect(vacuum?.snippet).not.toContain("\n");
      });

      it("returns each document once, as its best chunk", async () => {
        await load();
        const guide = corpus().find((d) => d.path === "raw/guides/operations.md")!;
        expect(chunkDocument(guide).length).toBeGreaterThan(3);
        const hits = await search("kubernetes");
        expect(hits.filter((h) => h.path === guide.path).length).toBe(1);
        const backups = (await search("backups")).find((h) => h.path === guide.path);
        const chunkWithBackups = chunkDocument(guide).find((c) => c.text.includes("Part 3: backups"))!;
        expect(backups?.id).toBe(`${guide.path}#${chunkWithBackups.seq}`);
      });

      it("answers with the hit shape of POST /search", async () => {
        await load();
        const [hit] = await search("helm");
        expect(hit).toEqual({
          id: "arcs/kubernetes-migration.md#0",
          path: "arcs/kubernetes-migration.md",
          producer: "arcs",
          title: "Arc: migration to Kubernetes",
          snippet: expect.stringContaining(`${SNIPPET_MARK.open}Helm${SNIPPET_MARK.close}`),
          score: expect.any(Number),
          coverage: 1,
          tags: ["kubernetes"],
          updated_at: "2025-01-16T00:00:00.000Z",
        });
        expect(hit!.score).toBeGreaterThan(0);
      });

      it("ranks the same without snippets, and snippets() gives each hit the id and snippet search() gives it", async () => {
        await load();
        // Words, a phrase, filters, a document of many chunks, and the OR fallback.
        for (const q of ["postgres", '"rolling restart"', "tag:ops deploy", "backups kubernetes", "kubernetes", "stampede kitchen"]) {
          const parsed = parseQuery(q);
          const full = await store.search(parsed, 10);
          expect(full.length).toBeGreaterThan(0);
          const bare = await store.search(parsed, 10, { snippets: false });
          expect(bare.map((h) => [h.path, h.score])).toEqual(full.map((h) => [h.path, h.score]));
          expect(bare.every((h) => h.snippet === "" && h.id === `${h.path}#0`)).toBe(true);
          const marked = await store.snippets(parsed, [...bare.map((h) => h.path), "raw/no/such-note.md"]);
          expect(marked.size).toBe(full.length);
          for (const h of full) expect(marked.get(h.path)).toEqual({ id: h.id, snippet: h.snippet });
        }
        expect((await store.snippets(parseQuery("autovacuum"), ["raw/notes/kitchen.md"])).size).toBe(0);
      });

      it("orders hits by descending score and honours the limit", async () => {
        await load();
        const hits = await search("ops deploy kubernetes postgres", 2);
        expect(hits.length).toBe(2);
        const all = await search("deploy", 100);
        for (let i = 1; i < all.length; i++) expect(all[i - 1]!.score).toBeGreaterThanOrEqual(all[i]!.score);
      });

      it("finds words with diacritics and in other scripts", async () => {
        await load();
        expect(await paths("café")).toEqual(["raw/notes/cafe.md"]);
        expect(await paths("naïve")).toEqual(["raw/notes/cafe.md"]);
      });

      it("never throws on hostile query strings", async () => {
        await load();
        for (const q of HOSTILE_QUERIES) {
          const hits = await search(q).catch((err: Error) => {
            throw new Error(`query ${JSON.stringify(q.slice(0, 40))} threw: ${err.message}`);
          });
          expect(Array.isArray(hits)).toBe(true);
        }
      });

      it("counts documents per producer", async () => {
        await load();
        expect(await store.countByProducer()).toEqual({ raw: 6, ingest: 1, lessons: 1, arcs: 1, signals: 1, feed: 1, markers: 1 });
      });
    });

    describe("every word counts (match any)", () => {
      const doc = (path: string, title: string, body: string, day = 1): IndexDoc => ({
        path,
        producer: "raw",
        title,
        body,
        tags: [],
        updatedAt: new Date(Date.UTC(2025, 1, day)),
        hash: Bun.hash(`${title}\n${body}`).toString(16),
      });
      const filler = "The team wrote this down during the weekly review so the next person finds it.";

      it("answers limit hits when only two notes hold every word, those two first", async () => {
        const full = [
          doc("raw/full/a.md", "Lesson: the payment suite flakes", `The payment suite flakes when the sandbox clock drifts. ${filler}`),
          doc("raw/full/b.md", "Incident notes", `Clock drift in the sandbox broke every payment retry for an hour. ${filler}`),
        ];
        // Twelve notes holding one or two of the words, some of them over and over (a note
        // holding half the words needs twice the bm25 of one holding them all to rank level).
        const partial = [
          doc("raw/part/01.md", "Payment gateway", "Payment limits, payment currencies and payment refunds."),
          doc("raw/part/02.md", "Payment payment payment", "Payment runbook."),
          doc("raw/part/03.md", "Sandbox accounts", "Every sandbox account is reset nightly; the sandbox has no real money."),
          doc("raw/part/04.md", "Clock", "The office clock is five minutes fast."),
          doc("raw/part/05.md", "Drift", "Configuration drift between staging and production."),
          doc("raw/part/06.md", "Payment sandbox", "How to get a payment sandbox key."),
          doc("raw/part/07.md", "NTP", "NTP keeps clock drift under a millisecond on hosts."),
          doc("raw/part/08.md", "Sandbox sandbox", `The sandbox again. ${filler}`),
          doc("raw/part/09.md", "Retro", `Payment went well this sprint. ${filler}`),
          doc("raw/part/10.md", "Drifting", "Schema drift found by the nightly diff."),
          doc("raw/part/11.md", "Clocks", "Clocks in containers follow the host clock."),
          doc("raw/part/12.md", "Team", `Payment team rota. ${filler}`),
        ];
        for (const d of [...partial, ...full, doc("raw/other.md", "Unrelated", "Nothing to see here.")]) await store.upsert(d);
        const hits = await search("payment sandbox clock drift", 10);
        expect(hits.length).toBe(10);
        expect(
          hits
            .slice(0, 2)
            .map((h) => h.path)
            .sort(),
        ).toEqual(["raw/full/a.md", "raw/full/b.md"]);
        expect(hits.slice(0, 2).map((h) => h.coverage)).toEqual([1, 1]);
        for (const h of hits.slice(2)) {
          expect(h.coverage).toBeGreaterThan(0);
          expect(h.coverage).toBeLessThan(1);
        }
        for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
        // Every note holding a word is found when the limit allows.
        expect((await search("payment sandbox clock drift", 100)).length).toBe(14);
        const strict = await store.search(parseQuery("payment sandbox clock drift"), 10, { match: "all" });
        expect(strict.map((h) => h.path).sort()).toEqual(["raw/full/a.md", "raw/full/b.md"]);
      });

      it("ranks notes holding more of the words above notes holding fewer", async () => {
        const background = Array.from({ length: 6 }, (_, i) =>
          doc(`raw/bg/${i}.md`, `Background ${i}`, `${["invoice", "ledger", "rounding"][i % 3]} mentioned once in passing. ${filler}`),
        );
        const three = doc("raw/three.md", "Month-end close", `The invoice totals and the ledger disagreed because of rounding. ${filler} ${filler}`);
        const two = doc("raw/two.md", "Month-end close again", `The invoice run and the ledger export ran late. ${filler} ${filler}`);
        const one = doc("raw/one.md", "Ledger", "Ledger ledger ledger: the ledger.");
        for (const d of [...background, three, two, one]) await store.upsert(d);
        const hits = await search("invoice ledger rounding", 10);
        const at = (p: string) => hits.findIndex((h) => h.path === p);
        expect(at("raw/three.md")).toBe(0);
        expect(at("raw/two.md")).toBeGreaterThan(0);
        expect(at("raw/two.md")).toBeLessThan(at("raw/one.md"));
        expect(hits[at("raw/two.md")]!.coverage).toBe(0.667);
        expect(hits[at("raw/one.md")]!.coverage).toBe(0.333);
      });

      it("ranks notes holding the words close together above notes holding them apart", async () => {
        const gap = "Several unrelated sentences sit in between here, about lunch, the weather and the parking lot, and nothing else at all.";
        // The same words, counts and length: only the distance between the words differs.
        const apart = doc("raw/a-apart.md", "Queue notes", `The queue grew overnight. ${gap} Backpressure was added later.`);
        const near = doc("raw/z-near.md", "Queue notes", `The queue backpressure was added overnight. ${gap} It grew later.`);
        for (const d of [apart, near, doc("raw/other.md", "Other", "queue")]) await store.upsert(d);
        const hits = await search("queue backpressure", 10);
        expect(hits.map((h) => h.path).slice(0, 2)).toEqual(["raw/z-near.md", "raw/a-apart.md"]);
        expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
      });

      it("counts a quoted phrase as its words, held only where they stand together", async () => {
        await load();
        const hits = await search('"rolling restart" deploy');
        const cov = new Map(hits.map((h) => [h.path, h.coverage]));
        expect(hits[0]?.path).toBe("raw/runbooks/deploy.md");
        expect(cov.get("raw/runbooks/deploy.md")).toBe(1);
        // Holds "deploy" (1 of 3 words); the phrase's words are not together in it.
        expect(cov.get("left/reference/lessons/cache-stampede.md")).toBe(0.333);
        // Holds "rolling" and "restart" apart and not "deploy": no clause held, not a hit.
        expect(cov.has("raw/notes/restarts.md")).toBe(false);
      });

      it("gives hits found without words coverage 0", async () => {
        await load();
        const hits = await search("tag:ops");
        expect(hits.length).toBeGreaterThan(0);
        expect(hits.every((h) => h.coverage === 0)).toBe(true);
      });
    });

    describe("upsert and remove", () => {
      const note = (body: string, extra: Partial<IndexDoc> = {}): IndexDoc => ({
        path: "ingest/n.md",
        producer: "ingest",
        title: "A note",
        body,
        tags: ["t"],
        updatedAt: new Date("2025-02-01T00:00:00Z"),
        hash: Bun.hash(body).toString(16),
        mtimeMs: 1_000,
        ...extra,
      });

      it("writes a batch as upserts one by one would: a flag per document, unchanged ones false", async () => {
        const a = note("zebra crossing", { path: "ingest/a.md" });
        const b = note("walrus colony", { path: "ingest/b.md" });
        expect(await store.upsertMany([a, b])).toEqual([true, true]);
        expect(await store.upsertMany([a, note("walrus colony moved", { path: "ingest/b.md" })])).toEqual([false, true]);
        expect(await paths("zebra")).toEqual(["ingest/a.md"]);
        expect(await paths("walrus moved", 10)).toEqual(["ingest/b.md"]);
      });

      it("does nothing when the hash is unchanged, but records a new mtime", async () => {
        expect(await store.upsert(note("zebra crossing"))).toBe(true);
        expect(await store.upsert(note("zebra crossing"))).toBe(false);
        expect(await store.upsert(note("zebra crossing", { mtimeMs: 2_000 }))).toBe(false);
        expect((await store.fingerprints("ingest")).get("ingest/n.md")).toEqual({ hash: note("zebra crossing").hash, mtimeMs: 2_000 });
        expect((await paths("zebra")).length).toBe(1);
      });

      it("re-indexes when the tags change under the same hash", async () => {
        await store.upsert(note("zebra crossing"));
        expect(await store.upsert(note("zebra crossing", { tags: ["t", "new"] }))).toBe(true);
        expect(await paths("tag:new")).toEqual(["ingest/n.md"]);
      });

      it("replaces a changed document's rows", async () => {
        await store.upsert(note("zebra crossing"));
        expect(await store.upsert(note("giraffe enclosure"))).toBe(true);
        expect(await paths("zebra")).toEqual([]);
        expect(await paths("giraffe")).toEqual(["ingest/n.md"]);
        expect((await store.countByProducer()).ingest).toBe(1);
      });

      it("says whether it holds any document of a producer, and no longer once the last is gone", async () => {
        expect(await store.holdsProducer("ingest")).toBe(false);
        await store.upsert(note("zebra crossing"));
        expect(await store.holdsProducer("ingest")).toBe(true);
        expect(await store.holdsProducer("signals")).toBe(false);
        await store.remove("ingest/n.md");
        expect(await store.holdsProducer("ingest")).toBe(false);
      });

      it("removes a document and reports whether it was there", async () => {
        await store.upsert(note("zebra crossing"));
        expect(await store.remove("ingest/n.md")).toBe(true);
        expect(await store.remove("ingest/n.md")).toBe(false);
        expect(await paths("zebra")).toEqual([]);
        expect((await store.fingerprints("ingest")).size).toBe(0);
      });

      it("indexes a long document whole, across chunks", async () => {
        const body = Array.from({ length: 30 }, (_, i) => `## Section ${i}\n\n${"filler text ".repeat(40)}marker${i}`).join("\n\n");
        await store.upsert(note(body));
        expect(await paths("marker0")).toEqual(["ingest/n.md"]);
        expect(await paths("marker29")).toEqual(["ingest/n.md"]);
      });

      it("keeps NUL bytes and odd characters out of harm's way", async () => {
        expect(await store.upsert(note("nul\0byte text with 'quotes' and \"double\" and \\ backslash", { title: "t\0itle" }))).toBe(true);
        expect(await paths("backslash")).toEqual(["ingest/n.md"]);
      });

      it("survives a reopen", async () => {
        await load();
        const again = await open(opts.vectors ? { embeddingDim: DIM } : undefined);
        expect((await again.search(parseQuery("stampede"), 10)).map((h) => h.path)).toEqual(["left/reference/lessons/cache-stampede.md"]);
      });
    });

    describe("refreshFolder", () => {
      let vault: string;
      const write = async (rel: string, text: string) => {
        await mkdir(dirname(join(vault, rel)), { recursive: true });
        await writeFile(join(vault, rel), text);
      };
      beforeEach(async () => {
        vault = await mkdtemp(join(tmpdir(), "index-vault-"));
      });
      afterEach(() => rm(vault, { recursive: true, force: true }));

      it("adds, updates and removes files of raw/", async () => {
        await write("raw/a.md", "---\ntitle: Alpha\ntags: [x]\n---\nalpha body");
        await write("raw/sub/b.txt", "bravo body");
        await write("raw/.hidden/c.md", "hidden");
        await write("raw/image.png", "not text");
        await write("elsewhere/d.md", "outside raw");
        expect(await refreshFolder(store, { vault })).toEqual({ added: 2, updated: 0, removed: 0, unchanged: 0, skipped: 0 });
        expect(await paths("alpha")).toEqual(["raw/a.md"]);
        expect((await search("tag:x"))[0]?.title).toBe("Alpha");
        expect((await search("bravo"))[0]?.title).toBe("b");

        expect(await refreshFolder(store, { vault })).toEqual({ added: 0, updated: 0, removed: 0, unchanged: 2, skipped: 0 });

        await write("raw/a.md", "---\ntitle: Alpha\n---\nalpha changed, now about charlie");
        await utimes(join(vault, "raw/a.md"), new Date(), new Date(Date.now() + 5_000));
        await rm(join(vault, "raw/sub/b.txt"));
        expect(await refreshFolder(store, { vault })).toEqual({ added: 0, updated: 1, removed: 1, unchanged: 0, skipped: 0 });
        expect(await paths("charlie")).toEqual(["raw/a.md"]);
        expect(await paths("bravo")).toEqual([]);
        expect(await paths("hidden")).toEqual([]);
      });

      it("pages the index's rows in the walk's byte order, names mixing cases, accents and symbols, and refreshes by it", async () => {
        // Names whose UTF-8 order differs from a locale's: the walk and the index's pages meet only in byte order.
        const names = ["Zeta.md", "a-b.md", "a.md", "a/x.md", "a0.md", "é.md", "\uFF21.md", "𝔸.md", "B.md", "b/c/d.md"];
        for (const n of names) await write(`raw/${n}`, `note ${n}`);
        expect(await refreshFolder(store, { vault })).toMatchObject({ added: names.length, removed: 0 });
        const rows = await store.fingerprintsAfter("raw", "", 100);
        const bytewise = names.map((n) => `raw/${n}`).sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
        expect(rows.map((r) => r.path)).toEqual(bytewise);
        expect((await store.fingerprintsAfter("raw", bytewise[3]!, 2)).map((r) => r.path)).toEqual(bytewise.slice(4, 6));
        expect(await refreshFolder(store, { vault })).toMatchObject({ added: 0, removed: 0, unchanged: names.length });
        await rm(join(vault, "raw/a.md"));
        await rm(join(vault, "raw/b"), { recursive: true });
        expect(await refreshFolder(store, { vault })).toMatchObject({ added: 0, removed: 2, unchanged: names.length - 2 });
      });

      it("counts a touched but unchanged file as unchanged, and stops re-reading it", async () => {
        await write("raw/a.md", "alpha");
        await refreshFolder(store, { vault });
        await utimes(join(vault, "raw/a.md"), new Date(), new Date(Date.now() + 60_000));
        expect(await refreshFolder(store, { vault })).toMatchObject({ unchanged: 1, updated: 0 });
        const fp = (await store.fingerprints("raw")).get("raw/a.md");
        expect(fp?.mtimeMs).toBeGreaterThan(Date.now());
      });

      it("does not read a file whose mtime is unchanged", async () => {
        // Whole seconds, so the mtime survives the round trip exactly.
        const mtime = new Date("2025-03-01T12:00:00Z");
        await write("raw/a.md", "original words");
        await utimes(join(vault, "raw/a.md"), mtime, mtime);
        await refreshFolder(store, { vault });
        await write("raw/a.md", "rewritten words");
        await utimes(join(vault, "raw/a.md"), mtime, mtime);
        expect(await refreshFolder(store, { vault })).toMatchObject({ unchanged: 1, updated: 0 });
        expect(await paths("original")).toEqual(["raw/a.md"]);
      });

      it("skips files too large to index", async () => {
        await write("raw/huge.md", "x ".repeat(MAX_INDEXED_FILE_BYTES / 2 + 1));
        await write("raw/small.md", "small");
        expect(await refreshFolder(store, { vault })).toMatchObject({ added: 1, skipped: 1 });
      });

      it("empties the producer when the folder is gone", async () => {
        await write("raw/a.md", "alpha");
        await refreshFolder(store, { vault });
        await rm(join(vault, "raw"), { recursive: true });
        expect(await refreshFolder(store, { vault })).toMatchObject({ removed: 1 });
        expect((await store.countByProducer()).raw).toBe(0);
      });

      it("leaves other producers alone", async () => {
        await load();
        await write("raw/a.md", "alpha");
        await refreshFolder(store, { vault });
        const counts = await store.countByProducer();
        expect(counts).toEqual({ raw: 1, ingest: 1, lessons: 1, arcs: 1, signals: 1, feed: 1, markers: 1 });
      });
    });

    if (!opts.vectors) {
      it("refuses vector search without a configured dimension", async () => {
        expect(store.hasVectors).toBe(false);
        await expect(store.vectorSearch([1, 0, 0, 0], 5)).rejects.toBeInstanceOf(VectorsUnavailableError);
      });
      return;
    }

    describe("vectors", () => {
      // Hand-made 4-d vectors: each axis a topic.
      const v = (x: number, y: number, z: number, w: number) => [x, y, z, w];
      const docs = () => {
        const all = corpus();
        const pick = (p: string) => all.find((d) => d.path === p)!;
        return {
          deploy: pick("raw/runbooks/deploy.md"),
          vacuum: pick("raw/runbooks/postgres-vacuum.md"),
          kitchen: pick("raw/notes/kitchen.md"),
          lesson: pick("left/reference/lessons/cache-stampede.md"),
          guide: pick("raw/guides/operations.md"),
        };
      };
      const loadVectors = async () => {
        const d = docs();
        await store.upsert(d.deploy, { embeddings: [v(1, 0, 0, 0)] });
        await store.upsert(d.vacuum, { embeddings: [v(0, 1, 0, 0)] });
        await store.upsert(d.kitchen, { embeddings: [v(0, 0, 1, 0)] });
        await store.upsert(d.lesson, { embeddings: [v(0.8, 0, 0, 0.6)] });
        const n = chunkDocument(d.guide).length;
        await store.upsert(d.guide, { embeddings: Array.from({ length: n }, (_, i) => (i === 2 ? v(0, 0.2, 0, 1) : v(0, 0, 0.3, 0.1))) });
      };

      it("ranks the nearest vector first", async () => {
        expect(store.hasVectors).toBe(true);
        await loadVectors();
        const hits = await store.vectorSearch(v(0.9, 0.1, 0, 0), 3);
        expect(hits.map((h) => h.path)).toEqual(["raw/runbooks/deploy.md", "left/reference/lessons/cache-stampede.md", "raw/runbooks/postgres-vacuum.md"]);
        expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
        expect(hits[0]!.score).toBeLessThanOrEqual(1);
        expect(hits[0]!.snippet).toContain("Deploy checklist");
      });

      it("returns a document once, as its nearest chunk", async () => {
        await loadVectors();
        const hits = await store.vectorSearch(v(0, 0, 0, 1), 10);
        expect(hits[0]?.id).toBe("raw/guides/operations.md#2");
        expect(hits.filter((h) => h.path === "raw/guides/operations.md").length).toBe(1);
      });

      it("applies tag and producer filters", async () => {
        await loadVectors();
        expect((await store.vectorSearch(v(1, 0, 0, 0), 10, { producers: ["lessons"] })).map((h) => h.path)).toEqual([
          "left/reference/lessons/cache-stampede.md",
        ]);
        expect((await store.vectorSearch(v(0, 0, 1, 0), 10, { tags: ["home"] })).map((h) => h.path)).toEqual(["raw/notes/kitchen.md"]);
      });

      it("computes embeddings through the callback only for changed documents", async () => {
        const d = docs().deploy;
        const calls: string[][] = [];
        const embed = async (texts: string[]) => {
          calls.push(texts);
          return texts.map(() => v(1, 0, 0, 0));
        };
        expect(await store.upsert(d, { embed })).toBe(true);
        expect(await store.upsert(d, { embed })).toBe(false);
        expect(calls.length).toBe(1);
        expect(calls[0]![0]).toStartWith("Deploy checklist\n\n");
      });

      it("refuses vectors of another dimension", async () => {
        const d = docs().deploy;
        await expect(store.upsert(d, { embeddings: [[1, 0, 0]] })).rejects.toBeInstanceOf(DimensionMismatchError);
        await expect(store.upsert(d, { embeddings: [v(1, 0, 0, 0), v(1, 0, 0, 0)] })).rejects.toThrow("one per chunk");
        await expect(store.vectorSearch([1, 0], 5)).rejects.toBeInstanceOf(DimensionMismatchError);
      });

      it("refuses to open over vectors of another dimension", async () => {
        await loadVectors();
        const err = await open({ embeddingDim: 8 }).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(DimensionMismatchError);
        expect((err as DimensionMismatchError).message).toContain("4-dimensional");
        expect((err as DimensionMismatchError).message).toContain("EMBEDDINGS_DIM=4");
        // The stored vectors are untouched.
        expect((await store.vectorSearch(v(1, 0, 0, 0), 1))[0]?.path).toBe("raw/runbooks/deploy.md");
      });

      it("opens without vectors over a store that has them, and still searches text", async () => {
        await loadVectors();
        const plain = await open();
        expect(plain.hasVectors).toBe(false);
        expect((await plain.search(parseQuery("stampede"), 5)).length).toBe(1);
      });
    });
  });
}
