import { Database } from "bun:sqlite";
import { describe, expect, it } from "bun:test";
import { corpus } from "../../../test/fixtures/index-corpus.ts";
import { clausePositions, clauseStems } from "./positions.ts";
import { clauses, parseQuery } from "./query.ts";
import { anyScore, closeness, type Occurrence } from "./rank.ts";
import { ftsExpression } from "./sqlite/text.ts";

const at = (clause: number, position: number, field = 1, len = 1): Occurrence => ({ field, at: position, clause, len });

describe("closeness", () => {
  it("is 1 for words side by side, less the further apart, 0 for fewer than two clauses in a field", () => {
    expect(closeness([at(0, 4), at(1, 5)])).toBe(1);
    expect(closeness([at(0, 4), at(1, 14)])).toBeCloseTo(2 / 11, 6);
    expect(closeness([at(0, 4), at(0, 9)])).toBe(0);
    expect(closeness([at(0, 1, 0), at(1, 2, 1)])).toBe(0);
  });

  it("takes the shortest window holding each clause once, in the field holding the most of them", () => {
    // Far apart first, then side by side further on.
    expect(closeness([at(0, 0), at(1, 40), at(0, 60), at(1, 61)])).toBe(1);
    // Three clauses in the body beat two side by side in the title.
    expect(closeness([at(0, 0, 0), at(1, 1, 0), at(0, 0), at(1, 5), at(2, 9)])).toBeCloseTo(3 / 10, 6);
    // A phrase's own length counts.
    expect(closeness([at(0, 3, 1, 2), at(1, 5)])).toBe(1);
  });

  it("scales a text score by coverage and up to half again by closeness", () => {
    expect(anyScore(2, 1, 0)).toBe(2);
    expect(anyScore(2, 0.5, 1)).toBe(1.5);
  });
});

describe("clausePositions", () => {
  it("finds words by their stems, diacritics folded, and phrases only where their words stand together", () => {
    const stems = clauseStems(clauses(parseQuery('drift clocks café "rolling restart"')));
    const found = clausePositions(stems, ["Clock notes", "The clock drifts. Le CAFÉ ouvre. A rolling update, then a restart."]);
    expect(found.held).toEqual([true, true, true, false]);
    expect(found.occurrences.filter((o) => o.clause === 1).map((o) => [o.field, o.at])).toEqual([
      [0, 0],
      [1, 1],
    ]);
    expect(clausePositions(stems, ["", "a rolling restart"]).held).toEqual([false, false, false, true]);
  });

  it("says a note holds a clause exactly where FTS5 (porter unicode61) matches it", () => {
    const db = new Database(":memory:");
    db.run("CREATE VIRTUAL TABLE t USING fts5 (title, body, tokenize = 'porter unicode61 remove_diacritics 2')");
    const docs = corpus();
    const insert = db.query("INSERT INTO t (rowid, title, body) VALUES (?, ?, ?)");
    for (const [i, d] of docs.entries()) insert.run(i + 1, d.title, d.body);
    const queries = [
      "postgres vacuum tables",
      "rolling restarts deploy",
      '"rolling restart" probes',
      "caching stampedes warmed",
      "naïve café",
      "kubernetes helm charts",
    ];
    for (const q of queries) {
      const parts = clauses(parseQuery(q));
      const stems = clauseStems(parts);
      parts.forEach((part, c) => {
        const fts = new Set((db.query("SELECT rowid FROM t WHERE t MATCH ?").values(ftsExpression([part], "AND")) as [number][]).map((r) => r[0]));
        docs.forEach((d, i) => {
          expect({ q, clause: part, path: d.path, held: clausePositions(stems, [d.title, d.body]).held[c] }).toEqual({
            q,
            clause: part,
            path: d.path,
            held: fts.has(i + 1),
          });
        });
      });
    }
    db.close();
  });
});
