import { describe, expect, it } from "bun:test";
import type { ParsedQuery } from "../index/query";
import type { IndexStore, SearchFilters, SearchHit, SearchOptions } from "../index/types";
import { fuseRrf, fuseScores, RRF_K, search } from "./search";

const hit = (path: string, score: number, snippet = `${path} text`): SearchHit => ({
  id: `${path}#0`,
  path,
  producer: "raw",
  title: path,
  snippet,
  score,
  coverage: 1,
  tags: [],
  updated_at: "2025-01-01T00:00:00.000Z",
});

const paths = (hits: SearchHit[]) => hits.map((h) => h.path);

describe("fuseScores (score-aware fusion)", () => {
  it("normalises each list to 0–1 and adds them with equal weights", () => {
    const bm25 = [hit("a", 12), hit("b", 6), hit("c", 2)];
    const vector = [hit("c", 0.9), hit("d", 0.7), hit("a", 0.5)];
    const fused = fuseScores([bm25, vector], 10);
    // a: 0.5·1 + 0.5·0 = 0.5; b: 0.5·0.4 = 0.2; c: 0.5·0 + 0.5·1 = 0.5; d: 0.5·0.5 = 0.25
    expect(fused.map((h) => [h.path, h.score])).toEqual([
      ["a", 0.5],
      ["c", 0.5],
      ["d", 0.25],
      ["b", 0.2],
    ]);
  });

  it("keeps how close the hits of a list are, where RRF keeps only their order", () => {
    // b is nearly as good as the best in both lists, though first in neither.
    const bm25 = [hit("a", 10), hit("b", 9.9), hit("c", 1)];
    const vector = [hit("c", 0.9), hit("b", 0.89), hit("a", 0.1)];
    expect(paths(fuseScores([bm25, vector], 3))).toEqual(["b", "a", "c"]);
    expect(paths(fuseRrf([bm25, vector], 3))).toEqual(["a", "c", "b"]);
  });

  it("honours other weights", () => {
    const bm25 = [hit("a", 2), hit("b", 1)];
    const vector = [hit("b", 0.9), hit("a", 0.1)];
    expect(paths(fuseScores([bm25, vector], 2, [0.8, 0.2]))).toEqual(["a", "b"]);
    expect(paths(fuseScores([bm25, vector], 2, [0.2, 0.8]))).toEqual(["b", "a"]);
  });

  it("counts every hit of a list whose scores are all alike as that list's best", () => {
    const fused = fuseScores([[hit("a", 3)], [hit("b", 0.4), hit("c", 0.4)]], 10);
    expect(fused.map((h) => h.score)).toEqual([0.5, 0.5, 0.5]);
    expect(paths(fused)).toEqual(["a", "b", "c"]); // ties by path
  });

  it("keeps the first list's hit (BM25's marked snippet) and honours the limit", () => {
    const fused = fuseScores(
      [
        [hit("a", 5, "<mark>a</mark>"), hit("b", 1)],
        [hit("a", 0.9, "plain a"), hit("c", 0.8)],
      ],
      2,
    );
    expect(fused.length).toBe(2);
    expect(fused[0]!.snippet).toBe("<mark>a</mark>");
  });

  it("handles empty lists", () => {
    expect(fuseScores([[], []], 10)).toEqual([]);
    expect(paths(fuseScores([[], [hit("v", 0.3)]], 10))).toEqual(["v"]);
  });
});

describe("fuseRrf (reciprocal rank fusion)", () => {
  it("sums 1 / (k + rank) over the lists", () => {
    const fused = fuseRrf(
      [
        [hit("a", 9), hit("b", 8)],
        [hit("b", 0.9), hit("c", 0.8)],
      ],
      10,
    );
    expect(paths(fused)).toEqual(["b", "a", "c"]);
    expect(fused[0]!.score).toBeCloseTo(1 / (RRF_K + 2) + 1 / (RRF_K + 1), 6);
    expect(fused[1]!.score).toBeCloseTo(1 / (RRF_K + 1), 6);
  });
});

describe("search", () => {
  /** An IndexStore that answers fixed lists and records what it was asked. */
  const fakeIndex = (bm25: SearchHit[], nearest: SearchHit[], hasVectors = true) => {
    const calls: string[] = [];
    const index = {
      kind: "sqlite",
      embeddingDim: hasVectors ? 2 : undefined,
      hasVectors,
      async search(q: ParsedQuery, limit: number, opts?: SearchOptions) {
        calls.push(`search ${q.terms.join(" ")} ${limit}${opts?.snippets === false ? " no-snippets" : ""}${opts?.match === "all" ? " all" : ""}`);
        return bm25.slice(0, limit);
      },
      async snippets(q: ParsedQuery, wanted: string[]) {
        calls.push(`snippets ${q.terms.join(" ")} ${wanted.join(",")}`);
        return new Map(wanted.map((p) => [p, { id: `${p}#3`, snippet: `<mark>${p}</mark>` }]));
      },
      async vectorSearch(v: number[], limit: number, filters?: Partial<SearchFilters>) {
        calls.push(`vector ${v.join(",")} ${limit} ${JSON.stringify(filters)}`);
        return nearest.slice(0, limit);
      },
    } as unknown as IndexStore;
    return { index, calls };
  };

  it("runs BM25 alone without embeddings", async () => {
    const { index, calls } = fakeIndex([hit("a", 2)], [hit("b", 0.9)], false);
    const result = await search({ index }, "deploy", 5);
    expect(result).toEqual({ mode: "bm25", hits: [hit("a", 1)] });
    expect(calls).toEqual(["search deploy 5"]);
  });

  it("answers scores a person can read: 0–1 relative to the best hit, 3 decimals; the raw score under explain", async () => {
    const { index } = fakeIndex([hit("a", 0.00000104), hit("b", 0.00000052), hit("c", 0.000000347)], [], false);
    const result = await search({ index }, "deploy", 5);
    expect(result.hits.map((h) => h.score)).toEqual([1, 0.5, 0.334]);
    const explained = await search({ index }, "deploy", 5, { explain: true });
    expect(explained.hits.map((h) => h.score)).toEqual([1, 0.5, 0.334]);
    expect(explained.hits.map((h) => h.explain?.bm25?.score)).toEqual([0.00000104, 0.00000052, 0.000000347]);
  });

  it("asks the index for every word (match any) unless match all is asked, and then keeps no vector neighbour lacking a word", async () => {
    const { index, calls } = fakeIndex([hit("a", 2), hit("b", 1)], [hit("v", 0.9), hit("b", 0.8)]);
    const embed = async (texts: string[]) => texts.map(() => [1, 0]);
    expect(paths((await search({ index, embed }, "deploy", 5)).hits)).toContain("v");
    expect(calls[0]).toBe("search deploy 50 no-snippets");
    calls.length = 0;
    const strict = await search({ index, embed }, "deploy", 5, { match: "all" });
    expect(calls[0]).toBe("search deploy 50 no-snippets all");
    expect(paths(strict.hits).sort()).toEqual(["a", "b"]);
  });

  it("fuses BM25 and vector hits by score when embeddings are configured", async () => {
    const bm25 = [hit("clear", 30), hit("x", 3), hit("y", 2.9)];
    const nearest = [hit("y", 0.81), hit("x", 0.8), hit("clear", 0.79)];
    const { index, calls } = fakeIndex(bm25, nearest);
    const result = await search({ index, embed: async (texts) => texts.map(() => [1, 0]) }, "deploy tag:ops", 2);
    expect(result.mode).toBe("hybrid");
    expect(paths(result.hits)).toEqual(paths(fuseScores([bm25, nearest], 2)));
    expect(paths(result.hits)).toEqual(["clear", "y"]);
    expect(calls).toEqual(["search deploy 50 no-snippets", `vector 1,0 50 ${JSON.stringify({ tags: ["ops"], producers: [] })}`, "snippets deploy clear,y"]);
  });

  it("cuts snippets only for the BM25 hits that survive fusion; vector-only hits keep their own", async () => {
    const bm25 = [hit("a", 10), ...Array.from({ length: 40 }, (_, i) => hit(`t${i}`, 1 - i / 100))];
    const nearest = [hit("v", 0.9, "plain v"), hit("a", 0.8)];
    const { index, calls } = fakeIndex(bm25, nearest);
    const result = await search({ index, embed: async (texts) => texts.map(() => [1, 0]) }, "deploy", 2);
    expect(result.hits.map((h) => [h.path, h.id, h.snippet])).toEqual([
      ["a", "a#3", "<mark>a</mark>"],
      ["v", "v#0", "plain v"],
    ]);
    expect(calls.at(-1)).toBe("snippets deploy a");
  });

  it("does not embed a query of filters alone", async () => {
    const { index } = fakeIndex([hit("a", 0)], []);
    const embed = async () => {
      throw new Error("must not embed");
    };
    expect((await search({ index, embed }, "tag:ops", 5)).mode).toBe("bm25");
  });
});
