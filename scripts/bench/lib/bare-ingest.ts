// The floor for POST /ingest (scripts/bench/ingest.ts): a bare Bun.serve doing the minimum an
// ingest must do, and nothing else — parse the JSON body, sha256 the content, look the hash up
// in a ledger folder, insert one FTS5 row, write the note and its ledger entry each to a temp
// file renamed into place. No auth, no validation, no frontmatter, no lock, no log line.
// POST /ingest/batch does the same for a JSON array of items, all rows in one transaction
// (the floor for `router-cli import`). PORT and DIR come from the environment.
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const port = Number(process.env.PORT);
const dir = process.env.DIR!;
const notes = join(dir, "vault", "ingest");
const ledger = join(dir, "ingested");
mkdirSync(notes, { recursive: true });
mkdirSync(ledger, { recursive: true });

const db = new Database(join(dir, "floor.sqlite"), { create: true });
db.run("PRAGMA journal_mode = WAL");
db.run("PRAGMA synchronous = NORMAL");
// The index's own tokenizer (src/router/index/sqlite/schema.ts), so the row costs what brain-stack's text costs.
db.run("CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(path, body, tokenize = 'porter unicode61 remove_diacritics 2')");
const insert = db.query("INSERT INTO fts (path, body) VALUES (?, ?)");
let seq = 0;

const atomic = (path: string, data: string) => {
  const temp = `${path}.${++seq}.tmp`;
  writeFileSync(temp, data);
  renameSync(temp, path);
};

/** One item; the row is inserted by the caller (one statement, or one transaction for a batch). */
function one(content: string): { id: string; path: string; duplicate: boolean } {
  const id = new Bun.CryptoHasher("sha256").update(content).digest("hex").slice(0, 16);
  const mark = join(ledger, `${id}.json`);
  const path = `ingest/${id}.md`;
  if (existsSync(mark)) return { id, path, duplicate: true };
  atomic(join(dir, "vault", path), content);
  const result = { id, path, duplicate: false };
  atomic(mark, JSON.stringify(result));
  return result;
}

Bun.serve({
  hostname: "127.0.0.1",
  port,
  routes: {
    "/health": () => new Response("ok"),
    "/ingest": {
      POST: async (req) => {
        const { content } = (await req.json()) as { content: string };
        const r = one(content);
        if (!r.duplicate) insert.run(r.path, content);
        return Response.json(r, { status: r.duplicate ? 200 : 201 });
      },
    },
    "/ingest/batch": {
      POST: async (req) => {
        const { items } = (await req.json()) as { items: { content: string }[] };
        const results = db.transaction(() =>
          items.map((it) => {
            const r = one(it.content);
            if (!r.duplicate) insert.run(r.path, it.content);
            return r;
          }),
        )();
        return Response.json({ results });
      },
    },
  },
});
