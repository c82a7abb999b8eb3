// The floor for POST /search (issue 21): a bare Bun.serve over the index file brain-stack
// built, doing the least a ranked full-text answer takes — parse the JSON body, the same FTS5
// expression (every word counts: the words OR-ed, quoted, as brain-stack's default "match any"),
// bm25 with the same weights (title 10, body 1), the best `limit` with their path and title, and
// a marked snippet of each (FTS5's snippet(), the highlight() family). No auth, validation,
// coverage, closeness, best chunk or hit shaping.
// PORT and DB come from the environment.
import { Database } from "bun:sqlite";
import { clauses, parseQuery } from "../../../src/router/index/query.ts";
import { docExpression } from "../../../src/router/index/sqlite/filters.ts";
import { ftsExpression } from "../../../src/router/index/sqlite/text.ts";

const db = new Database(process.env.DB!, { readonly: true, strict: true });
const search = db.query<{ path: string; title: string; score: number; snippet: string }, [string, number]>(
  `SELECT d.path, d.title, -t.rank AS score,
          (SELECT snippet(docs_fts, 1, '<mark>', '</mark>', '…', 24) FROM docs_fts WHERE docs_fts MATCH ?1 AND rowid = t.id) AS snippet
     FROM (SELECT rowid AS id, bm25(docs_fts, 10.0, 1.0, 0.0) AS rank FROM docs_fts WHERE docs_fts MATCH ?1 ORDER BY rank LIMIT ?2) t
     JOIN docs d ON d.id = t.id ORDER BY t.rank`,
);

Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT),
  routes: {
    "/health": () => new Response("ok"),
    "/search": {
      POST: async (req) => {
        const { query, limit } = (await req.json()) as { query: string; limit?: number };
        const parsed = parseQuery(query);
        const parts = clauses(parsed);
        const hits = parts.length ? search.all(docExpression(ftsExpression(parts, "OR"), parsed), limit ?? 10) : [];
        return Response.json({ hits });
      },
    },
  },
  fetch: () => new Response("not found", { status: 404 }),
});
