// Reading notes, their links and recent changes (issue 20) through the real process, on the
// embedded SQLite index and on a real PostgreSQL: GET /notes/{path}, POST /notes/batch,
// GET /notes, GET /notes/{path}/context over HTTP, the same through RouterClient and through
// the MCP SDK's client (tools get, multi_get, recent, context).
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdirSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ApiError, RouterClient } from "../src/router/client";
import { type MainProcess, startMain, tempDir } from "./support/main-process";
import { routerClient, ROUTER_TEST_TOKEN as TOKEN } from "./support/router-client";
import { createTestDatabase, requireServer } from "./support/servers";

type Json = Record<string, any>;

const backends: Array<{ name: string; env: () => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> } | null> }> = [
  { name: "SQLite", env: async () => ({ env: {}, cleanup: async () => {} }) },
  {
    name: "PostgreSQL",
    env: async () => {
      if (!(await requireServer("PostgreSQL"))) return null;
      const db = await createTestDatabase();
      return { env: { DATABASE_URL: db.url }, cleanup: () => db.drop() };
    },
  },
];

const DAY = 86_400_000;
const T0 = Date.parse("2026-03-01T12:00:00Z");

function put(vault: string, rel: string, content: string, mtimeMs?: number): void {
  const abs = join(vault, rel);
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, content);
  if (mtimeMs !== undefined) utimesSync(abs, new Date(mtimeMs), new Date(mtimeMs));
}

for (const backend of backends) {
  describe(`notes on ${backend.name}`, () => {
    let main: MainProcess | undefined;
    let cleanup = async () => {};
    let vault = "";
    let outside = "";
    const api = routerClient(() => main!.routerUrl!);
    const client = () => new RouterClient({ baseUrl: main!.routerUrl!, token: TOKEN });
    const tick = async () => {
      const res = await api.call("/tick", { wait: true });
      expect(res.body.error_tail ?? res.body.status).toBe("succeeded");
    };
    let mcp: Client;
    const tool = async (name: string, args: Json) =>
      (await mcp.callTool({ name, arguments: args }, undefined, { timeout: 30_000 })) as {
        isError?: boolean;
        content: Array<{ text?: string }>;
        structuredContent?: Json;
      };

    beforeAll(async () => {
      const setup = await backend.env();
      if (!setup) return;
      cleanup = setup.cleanup;
      const root = tempDir("router-notes");
      vault = join(root, "vault");
      outside = join(root, "outside.md");
      writeFileSync(outside, "# Secret\nnot in the vault");
      put(
        vault,
        "raw/decisions/use-postgres.md",
        "---\ntitle: Use Postgres\ntags: [db, decision]\nowner: lena\n---\n# Use Postgres\nWe chose it after [[benchmarks]].\nSee also [the runbook](../runbooks/postgres.md) and [[missing-note]].\nline four\nline five\n",
        T0 + 5 * DAY,
      );
      put(vault, "raw/benchmarks.md", "# Benchmarks\nNumbers behind [[use-postgres]]. Method in [[method]].\n", T0 + 3 * DAY);
      put(vault, "raw/runbooks/postgres.md", "# Postgres runbook\nVacuum weekly.\n", T0 + 2 * DAY);
      put(vault, "raw/method.md", "# Method\nHow we measure.\n", T0 + 1 * DAY);
      put(vault, "raw/unrelated.md", "# Unrelated\nNo links here.\n", T0);
      for (let i = 0; i < 60; i++) put(vault, `raw/many/n${String(i).padStart(2, "0")}.md`, `# Many ${i}\n${"x".repeat(1000)}\n`, T0 - (i + 1) * DAY);
      main = await startMain(
        ["--only", "router", "--vault", vault],
        { KB_ROUTER_TOKEN: TOKEN, TICK_INTERVAL_SECONDS: "0", ...setup.env },
        { expect: ["router"] },
      );
      await tick();
      mcp = new Client({ name: "router-notes-test", version: "1.0.0" });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(`${main.mcpUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    });
    afterAll(async () => {
      await mcp?.close().catch(() => {});
      await main?.stop();
      await cleanup();
    });
    const run = (name: string, fn: () => Promise<void>) => it(name, async () => (main ? fn() : undefined), 60_000);

    describe("GET /notes/{path}", () => {
      run("returns the note: frontmatter, title, tags, body, links resolved or dangling, and backlinks", async () => {
        const res = await api.call("/notes/raw/decisions/use-postgres.md");
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({
          path: "raw/decisions/use-postgres.md",
          producer: "raw",
          title: "Use Postgres",
          tags: ["db", "decision"],
          frontmatter: { title: "Use Postgres", owner: "lena" },
          indexed: true,
          truncated: false,
          truncated_by: null,
          total_lines: 5,
        });
        expect(res.body.body).toStartWith("# Use Postgres\nWe chose it");
        expect(res.body.updated_at).toBe(new Date(T0 + 5 * DAY).toISOString());
        expect(res.body.links).toEqual([
          { kind: "wiki", target: "benchmarks", path: "raw/benchmarks.md", title: "Benchmarks" },
          { kind: "wiki", target: "missing-note", path: null, title: null },
          { kind: "path", target: "raw/runbooks/postgres.md", path: "raw/runbooks/postgres.md", title: "Postgres runbook" },
        ]);
        expect(res.body.backlinks.map((b: Json) => b.path)).toEqual(["raw/benchmarks.md"]);
        expect(res.headers.get("etag")).toBe(`"${res.body.hash}"`);
        // The same with the slashes encoded, as a client that treats the path as one segment sends it.
        expect((await api.call(`/notes/${encodeURIComponent("raw/decisions/use-postgres.md")}`)).body.hash).toBe(res.body.hash);
      });

      run("answers 304 to its ETag, and 200 with a new ETag once the file changes", async () => {
        put(vault, "raw/etag.md", "# ETag\nfirst\n");
        const first = await api.call("/notes/raw/etag.md");
        const etag = first.headers.get("etag")!;
        const again = await api.call("/notes/raw/etag.md", undefined, { headers: { authorization: `Bearer ${TOKEN}`, "if-none-match": etag } });
        expect(again.status).toBe(304);
        expect(again.text).toBe("");
        expect(await client().noteIfChanged("raw/etag.md", first.body.hash)).toBeNull();
        put(vault, "raw/etag.md", "# ETag\nsecond\n");
        const changed = await api.call("/notes/raw/etag.md", undefined, { headers: { authorization: `Bearer ${TOKEN}`, "if-none-match": etag } });
        expect(changed.status).toBe(200);
        expect(changed.headers.get("etag")).not.toBe(etag);
        expect(changed.body).toMatchObject({ body: "# ETag\nsecond\n", indexed: false });
        expect((await client().noteIfChanged("raw/etag.md", etag))?.body).toBe("# ETag\nsecond\n");
      });

      run("returns a line range or cuts at max_chars, and says so", async () => {
        const range = await api.call("/notes/raw/decisions/use-postgres.md?lines=4-5");
        expect(range.body).toMatchObject({ body: "line four\nline five\n", from_line: 4, to_line: 5, total_lines: 5, truncated: true, truncated_by: "lines" });
        const one = await api.call("/notes/raw/decisions/use-postgres.md?lines=2");
        expect(one.body.body).toBe("We chose it after [[benchmarks]].");
        const cut = await api.call("/notes/raw/decisions/use-postgres.md?max_chars=10");
        expect(cut.body).toMatchObject({ body: "# Use Post", truncated: true, truncated_by: "max_chars", from_line: 1, to_line: 1 });
        expect(cut.body.total_chars).toBeGreaterThan(100);
        for (const lines of ["0-3", "5-2", "a-b"]) {
          const bad = await api.call(`/notes/raw/decisions/use-postgres.md?lines=${lines}`);
          expect({ lines, status: bad.status, code: bad.body.error?.code }).toEqual({ lines, status: 400, code: "invalid_request" });
        }
      });

      run("refuses paths out of the vault and symlinks, in or out", async () => {
        symlinkSync(outside, join(vault, "raw", "link-out.md"));
        symlinkSync(join(vault, "raw", "method.md"), join(vault, "raw", "link-in.md"));
        symlinkSync(dirname(outside), join(vault, "raw", "dir-out"));
        for (const path of [
          "raw%2F..%2F..%2Foutside.md",
          "..%2Foutside.md",
          "%2Fetc%2Fpasswd",
          "raw/link-out.md",
          "raw/link-in.md",
          "raw/dir-out/outside.md",
        ]) {
          const res = await api.call(`/notes/${path}`);
          expect({ path, status: res.status, code: res.body.error?.code }).toEqual({ path, status: 400, code: "invalid_path" });
          expect(res.text).not.toContain("not in the vault");
        }
        // Gone again before any tick walks raw/ (the tick's own symlink handling is not under test here).
        for (const link of ["link-out.md", "link-in.md", "dir-out"]) rmSync(join(vault, "raw", link));
      });

      run("answers 404 for a missing note and for files the index does not cover", async () => {
        put(vault, ".brain/state.md", "# internal");
        put(vault, "bundles/x.md", "# a dispatch bundle");
        put(vault, "raw/.hidden.md", "# hidden");
        for (const path of ["raw/nope.md", ".brain/state.md", "bundles/x.md", "raw/.hidden.md", "raw/runbooks"]) {
          const res = await api.call(`/notes/${path}`);
          expect({ path, status: res.status, code: res.body.error?.code }).toEqual({ path, status: 404, code: "note_not_found" });
        }
        await expect(client().note("raw/nope.md")).rejects.toMatchObject({ status: 404, code: "note_not_found" });
      });
    });

    describe("POST /notes/batch", () => {
      run("reads the named notes, and says which could not be read", async () => {
        const res = await api.call("/notes/batch", { paths: ["raw/method.md", "raw/nope.md", "../outside.md", "raw/benchmarks.md"] });
        expect(res.status).toBe(200);
        expect(res.body.notes.map((n: Json) => n.path)).toEqual(["raw/method.md", "raw/benchmarks.md"]);
        expect(res.body.notes[1].backlinks.map((b: Json) => b.path)).toEqual(["raw/decisions/use-postgres.md"]);
        expect(res.body.errors).toEqual([
          expect.objectContaining({ path: "raw/nope.md", code: "note_not_found" }),
          expect.objectContaining({ path: "../outside.md", code: "invalid_path" }),
        ]);
        expect(res.body).toMatchObject({ left_out: [], left_out_count: 0 });
      });

      run("returns at most 50 notes of a glob and lists the rest", async () => {
        const res = await api.call("/notes/batch", { glob: "raw/many/*.md", max_total_chars: 1_000_000 });
        expect(res.body.matched).toBe(60);
        expect(res.body.notes).toHaveLength(50);
        expect(res.body.left_out_count).toBe(10);
        expect(res.body.left_out).toEqual(Array.from({ length: 10 }, (_, i) => ({ path: `raw/many/n${50 + i}.md`, reason: "max_notes" })));
      });

      run("keeps the bodies within max_total_chars, cutting the last and leaving out the rest", async () => {
        const res = await api.call("/notes/batch", { glob: "raw/many/n0*.md", max_total_chars: 2_500 });
        const bodies = res.body.notes.map((n: Json) => n.body.length);
        expect(bodies.reduce((a: number, b: number) => a + b, 0)).toBeLessThanOrEqual(2_500);
        expect(res.body.notes.at(-1).truncated_by).toBe("max_chars");
        expect(res.body.left_out.every((l: Json) => l.reason === "max_total_chars")).toBe(true);
        expect(res.body.notes.length + res.body.left_out_count).toBe(10);
        const per = await client().notes({ paths: ["raw/method.md"], max_chars: 5 });
        expect(per.notes[0]).toMatchObject({ body: "# Met", truncated: true });
      });

      run("refuses a request with both or neither of paths and glob, too many paths, or a glob out of the vault", async () => {
        expect((await api.call("/notes/batch", {})).status).toBe(400);
        expect((await api.call("/notes/batch", { paths: ["raw/a.md"], glob: "raw/*" })).status).toBe(400);
        const many = await api.call("/notes/batch", { paths: Array.from({ length: 201 }, (_, i) => `raw/${i}.md`) });
        expect(many.status).toBe(400);
        const out = await api.call("/notes/batch", { glob: "../**/*.md" });
        expect(out.status).toBe(400);
        expect(out.body.error.code).toBe("invalid_path");
      });
    });

    describe("GET /notes", () => {
      run("lists notes changed since a time, newest first, filtered, in pages", async () => {
        const since = new Date(T0 + 1 * DAY).toISOString();
        const res = await api.call(`/notes?since=${encodeURIComponent(since)}&prefix=raw/&limit=3`);
        expect(res.status).toBe(200);
        // Files written by the tests themselves are newer; the fixture's order is what matters here.
        const fixture = ["raw/decisions/use-postgres.md", "raw/benchmarks.md", "raw/runbooks/postgres.md", "raw/method.md"];
        const seen: string[] = [];
        let page: Json = res.body;
        for (;;) {
          seen.push(...page.notes.map((n: Json) => n.path));
          if (!page.next_cursor) break;
          page = (await api.call(`/notes?since=${encodeURIComponent(since)}&prefix=raw/&limit=3&cursor=${page.next_cursor}`)).body;
        }
        expect(seen.filter((p) => fixture.includes(p))).toEqual(fixture);
        expect(new Set(seen).size).toBe(seen.length);
        expect(seen).not.toContain("raw/unrelated.md");
        const tagged = await client().recent({ tag: "DECISION" });
        expect(tagged.notes.map((n) => n.path)).toEqual(["raw/decisions/use-postgres.md"]);
        expect(tagged.notes[0]).toMatchObject({ title: "Use Postgres", producer: "raw", tags: ["db", "decision"] });
        expect((await api.call("/notes?since=yesterday")).status).toBe(400);
        const byDate = await api.call(`/notes?since=${new Date(T0 + 5 * DAY).toISOString().slice(0, 10)}&prefix=raw/decisions/`);
        expect(byDate.body.notes.map((n: Json) => n.path)).toEqual(["raw/decisions/use-postgres.md"]);
        expect((await api.call("/notes?cursor=garbage")).body.error.code).toBe("invalid_cursor");
        expect((await api.call("/notes?producer=nobody")).status).toBe(400);
      });
    });

    describe("GET /notes/{path}/context", () => {
      run("gathers the linked notes breadth-first, by distance then recency", async () => {
        const one = await api.call("/notes/raw/decisions/use-postgres.md/context");
        expect(one.status).toBe(200);
        expect(one.body.notes.map((n: Json) => [n.path, n.distance])).toEqual([
          ["raw/decisions/use-postgres.md", 0],
          ["raw/benchmarks.md", 1],
          ["raw/runbooks/postgres.md", 1],
        ]);
        expect(one.body.notes[1].via).toEqual({ from: "raw/decisions/use-postgres.md", relation: "links_to" });
        const two = await client().context("raw/decisions/use-postgres.md", { depth: 2 });
        expect(two.notes.map((n) => [n.path, n.distance])).toEqual([
          ["raw/decisions/use-postgres.md", 0],
          ["raw/benchmarks.md", 1],
          ["raw/runbooks/postgres.md", 1],
          ["raw/method.md", 2],
        ]);
        const back = await api.call("/notes/raw/method.md/context?depth=1");
        expect(back.body.notes[1]).toMatchObject({ path: "raw/benchmarks.md", via: { from: "raw/method.md", relation: "linked_from" } });
      });

      run("stays within max_chars, listing what it left out", async () => {
        const res = await api.call("/notes/raw/decisions/use-postgres.md/context?depth=2&max_chars=200");
        expect(res.body.total_chars).toBeLessThanOrEqual(200);
        expect(res.body.notes[0].path).toBe("raw/decisions/use-postgres.md");
        expect(res.body.left_out.map((l: Json) => l.reason)).toContain("max_chars");
        expect(res.body.notes.length + res.body.left_out.length).toBe(4);
        expect((await api.call("/notes/raw/method.md/context?depth=4")).status).toBe(400);
        expect((await api.call("/notes/raw/nope.md/context")).status).toBe(404);
      });
    });

    describe("links follow the vault", () => {
      run("after ingest, rename and delete, links and backlinks stay right and dangling ones are reported", async () => {
        put(vault, "raw/target.md", "# Target\nlinked to\n");
        await tick();
        const ing = await api.ingest("# Pointer\nThis points at [[target]].", ["links"]);
        expect(ing.status).toBe(201);
        const pointer = ing.body.paths[0] as string;
        expect((await api.call("/notes/raw/target.md")).body.backlinks.map((b: Json) => b.path)).toEqual([pointer]);

        renameSync(join(vault, "raw/target.md"), join(vault, "raw/target-renamed.md"));
        put(vault, "raw/old-name.md", "# Old\n[[target-renamed]]\n");
        await tick();
        const after = await api.call(`/notes/${pointer}`);
        expect(after.body.links).toEqual([{ kind: "wiki", target: "target", path: null, title: null }]);
        expect((await api.call("/notes/raw/target-renamed.md")).body.backlinks.map((b: Json) => b.path)).toEqual(["raw/old-name.md"]);

        rmSync(join(vault, "raw/target-renamed.md"));
        await tick();
        expect((await api.call("/notes/raw/old-name.md")).body.links[0]).toMatchObject({ target: "target-renamed", path: null });
        const report = await api.call("/health/pipeline");
        const index = report.body.stages.find((s: Json) => s.name === "index");
        expect(index.verdict).toBe("ok");
        expect(index.evidence.links.dangling).toBeGreaterThanOrEqual(3);
        expect(index.evidence.links.examples.length).toBeGreaterThan(0);
        for (const e of index.evidence.links.examples) expect(typeof e.source === "string" && typeof e.target === "string").toBe(true);
        expect(index.message).toMatch(/\d+ link\(s\), \d+ dangling/);
      });
    });

    describe("MCP tools", () => {
      run("lists get, multi_get, recent and context beside the others", async () => {
        const names = (await mcp.listTools()).tools.map((t) => t.name);
        for (const n of ["get", "multi_get", "recent", "context", "search"]) expect(names).toContain(n);
      });

      run("get, multi_get, recent and context answer as the HTTP API does", async () => {
        const got = await tool("get", { path: "raw/decisions/use-postgres.md", from_line: 4, to_line: 4 });
        expect(got.structuredContent).toMatchObject({ path: "raw/decisions/use-postgres.md", body: "line four", truncated_by: "lines" });
        const http = await api.call("/notes/raw/decisions/use-postgres.md");
        expect((await tool("get", { path: "raw/decisions/use-postgres.md" })).structuredContent).toEqual(http.body);

        const multi = await tool("multi_get", { glob: "raw/many/*.md", max_total_chars: 5_000 });
        expect(multi.structuredContent!.notes.length).toBeLessThan(10);
        expect(multi.structuredContent!.left_out_count).toBe(60 - multi.structuredContent!.notes.length);

        const recent = await tool("recent", { prefix: "raw/decisions/", limit: 5 });
        expect(recent.structuredContent).toEqual((await api.call("/notes?prefix=raw/decisions/&limit=5")).body);

        const ctx = await tool("context", { path: "raw/decisions/use-postgres.md", depth: 2 });
        expect(ctx.structuredContent).toEqual((await api.call("/notes/raw/decisions/use-postgres.md/context?depth=2")).body);
      });

      run("answers a refused path or a missing note as a tool error", async () => {
        const outside = await tool("get", { path: "../outside.md" });
        expect(outside.isError).toBe(true);
        expect(outside.content[0]!.text).toStartWith("invalid_path:");
        const missing = await tool("context", { path: "raw/nope.md" });
        expect(missing.isError).toBe(true);
        expect(missing.content[0]!.text).toStartWith("note_not_found:");
        const both = await tool("multi_get", { paths: ["raw/a.md"], glob: "raw/*" });
        expect(both.isError).toBe(true);
      });
    });

    run("RouterClient reads a note by path and throws ApiError for a refused one", async () => {
      const note = await client().note("raw/decisions/use-postgres.md", { lines: "1-1" });
      expect(note).toMatchObject({ title: "Use Postgres", body: "# Use Postgres", to_line: 1 });
      const err = await client()
        .note("raw/../../outside.md")
        .catch((e) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ status: 400, code: "invalid_path" });
    });
  });
}
