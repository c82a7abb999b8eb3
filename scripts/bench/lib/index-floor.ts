// The floor for an index build (issue 21): what a bare indexer does at the least — read each
// note under raw/, one FTS5 row (title, body; porter unicode61, the index's tokenizer) and one
// docs row (path, mtime) per note, 256 notes per transaction. No frontmatter, hash, chunks,
// tags or links: the figure brain-stack's build is compared with, not a second index.
import { Database } from "bun:sqlite";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export interface FloorBuild {
  docs: number;
  ms: number;
}

export async function buildFloor(vault: string, file: string): Promise<FloorBuild> {
  const t0 = performance.now();
  const db = new Database(file, { create: true, strict: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA synchronous = NORMAL");
  db.run("CREATE TABLE docs (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, mtime_ms REAL NOT NULL)");
  db.run("CREATE VIRTUAL TABLE docs_fts USING fts5 (title, body, tokenize = 'porter unicode61 remove_diacritics 2')");
  const doc = db.query<{ id: number }, [string, number]>("INSERT INTO docs (path, mtime_ms) VALUES (?, ?) RETURNING id");
  const fts = db.query("INSERT INTO docs_fts (rowid, title, body) VALUES (?, ?, ?)");
  const root = join(vault, "raw");
  const files = readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".md"))
    .map((e) => join(e.parentPath, e.name));
  for (let i = 0; i < files.length; i += 256) {
    const batch = files.slice(i, i + 256);
    const texts = await Promise.all(batch.map((f) => Bun.file(f).text()));
    db.transaction(() => {
      batch.forEach((f, j) => {
        const { id } = doc.get(f, statSync(f).mtimeMs)!;
        fts.run(id, f.slice(f.lastIndexOf("/") + 1, -3), texts[j]!);
      });
    })();
  }
  db.close();
  return { docs: files.length, ms: performance.now() - t0 };
}
