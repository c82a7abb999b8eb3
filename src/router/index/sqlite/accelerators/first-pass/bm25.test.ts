import { Database } from "bun:sqlite";
import { describe, expect, it } from "bun:test";
import { prng } from "../../../../../../test/support/vault-gen.ts";
import { allRowLengths, growthBound, idf, phraseCount, phraseScore, rowLengths, tableTotals } from "./bm25.ts";

describe("FTS5's bm25 in JS", () => {
  it("gives FTS5's own score of each row, bit for bit, from the weighted count it recovers from that score", () => {
    const db = new Database(":memory:");
    db.run("CREATE VIRTUAL TABLE t USING fts5 (title, body, filters, tokenize = 'porter unicode61 remove_diacritics 2')");
    const rng = prng(3);
    const words = ["alpha", "beta", "gamma", "delta", "omega"];
    const insert = db.query("INSERT INTO t (rowid, title, body, filters) VALUES (?, ?, ?, ?)");
    for (let i = 1; i <= 400; i++) {
      const pick = () => words[Math.floor(rng() ** 2 * words.length)]!;
      insert.run(i, Array.from({ length: 1 + Math.floor(rng() * 4) }, pick).join(" "), Array.from({ length: Math.floor(rng() * 300) }, pick).join(" "), "x y");
    }
    const totals = tableTotals(db, "t");
    expect(totals.rows).toBe(400);
    const all = allRowLengths(db, "t")!;
    for (const clause of ['"alpha"', '"omega"', '"beta gamma"']) {
      const rows = db.query("SELECT rowid, bm25(t, 10.0, 1.0, 0.0) FROM t WHERE t MATCH ?").values(clause) as [number, number][];
      const matches = rows.length;
      const i = idf(totals.rows, matches);
      const some = rowLengths(
        db,
        "t",
        rows.map((r) => r[0]),
      );
      for (const [id, bm25] of rows) {
        const length = some.get(id)!;
        expect(all[id]).toBe(length);
        const f = phraseCount(-bm25, i, length, totals.tokens / totals.rows);
        expect(Number.isInteger(f)).toBe(true);
        expect(phraseScore(i, f, length, totals.tokens / totals.rows)).toBe(-bm25);
      }
    }
    db.close();
  });

  it("bounds how far any row's score can grow when the row count, matches and average length move", () => {
    const rng = prng(11);
    let tight = 0;
    for (let trial = 0; trial < 2000; trial++) {
      const rows0 = 100 + Math.floor(rng() * 10_000);
      const hits0 = 1 + Math.floor(rng() * rows0);
      const avg0 = 20 + rng() * 500;
      // A later state: more or fewer rows and matches, a longer or shorter average.
      const rows1 = Math.max(hits0, rows0 + Math.floor((rng() - 0.5) * rows0 * 0.4));
      const hits1 = Math.max(1, Math.min(rows1, hits0 + Math.floor((rng() - 0.5) * hits0 * 0.4)));
      const avg1 = avg0 * (0.6 + rng() * 0.8);
      const [i0, i1] = [idf(rows0, hits0), idf(rows1, hits1)];
      const bound = growthBound(i0, avg0, i1, avg1);
      for (let d = 0; d < 20; d++) {
        const f = rng() < 0.5 ? 1 : 1 + Math.floor(rng() * 200);
        const length = Math.floor(rng() ** 3 * 50_000);
        const ratio = phraseScore(i1, f, length, avg1) / phraseScore(i0, f, length, avg0);
        expect(ratio).toBeLessThanOrEqual(bound * (1 + 1e-12));
        if (ratio > bound * 0.99) tight++;
      }
    }
    // The bound is reached (nearly) by a long row with one match, not just a loose ceiling.
    expect(tight).toBeGreaterThan(100);
  });
});
