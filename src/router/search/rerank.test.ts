import { describe, expect, it } from "bun:test";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SearchHit } from "../index/types";
import { blend, rerankRoute, retrievalWeight } from "./rerank";
import { rerankQuery, rerankText } from "./search";

describe("blend (retrieval rank by position + reranker score)", () => {
  it("weights retrieval 0.75 for ranks 1–3, 0.6 for 4–10, 0.4 beyond", () => {
    expect([1, 3, 4, 10, 11, 40].map(retrievalWeight)).toEqual([0.75, 0.75, 0.6, 0.6, 0.4, 0.4]);
  });

  it("never lets any reranker move retrieval's first hit down", () => {
    // Seeded random scores over 2–40 candidates, with the first always scored lowest.
    let seed = 7;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let trial = 0; trial < 500; trial++) {
      const n = 2 + Math.floor(rand() * 39);
      const raw = Array.from({ length: n }, (_, i) => (i === 0 ? -100 : rand() * 10));
      expect(blend(raw)[0]!.index).toBe(0);
    }
  });

  it("lets the reranker reorder below the top: a strongly preferred 12th hit reaches 2nd", () => {
    const raw = Array.from({ length: 12 }, (_, i) => (i === 11 ? 1 : 0));
    const order = blend(raw).map((b) => b.index);
    expect(order.slice(0, 3)).toEqual([0, 11, 1]);
    expect(blend(raw).find((b) => b.index === 11)!.blended).toBeCloseTo(0.4 / 12 + 0.6, 10);
  });

  it("keeps the fused order when the reranker cannot tell the hits apart, or left them all out", () => {
    expect(blend([3, 3, 3, 3, 3]).map((b) => b.index)).toEqual([0, 1, 2, 3, 4]);
    const partial = blend([Number.NaN, 0.2, Number.NaN, 0.9]);
    expect(partial.find((b) => b.index === 0)).toMatchObject({ rerank: 0, rerankRank: null });
    expect(partial.find((b) => b.index === 3)).toMatchObject({ rerank: 1, rerankRank: 1 });
  });
});

describe("rerankRoute and rerankQuery", () => {
  it("adds /rerank to a bare service URL and keeps a given route", () => {
    expect(rerankRoute("http://tei:8080")).toBe("http://tei:8080/rerank");
    expect(rerankRoute("https://api.jina.ai/v1/rerank")).toBe("https://api.jina.ai/v1/rerank");
    expect(rerankRoute("https://api.cohere.com/v2/rerank")).toBe("https://api.cohere.com/v2/rerank");
  });

  it("sends the query as typed, less its filters", () => {
    expect(rerankQuery('how do I "roll back" a deploy tag:ops producer:raw')).toBe('how do I "roll back" a deploy');
  });
});

describe("rerankText (what the reranker reads of a hit)", () => {
  const hit = (path: string, snippet: string): SearchHit => ({
    id: `${path}#0`,
    path,
    producer: "raw",
    title: "Deploys",
    snippet,
    score: 1,
    coverage: 1,
    tags: [],
    updated_at: "",
  });
  const root = mkdtempSync(join(tmpdir(), "rerank-text-"));
  const vault = join(root, "vault");
  mkdirSync(join(vault, "raw"), { recursive: true });
  writeFileSync(join(vault, "raw", "deploys.md"), `---\ntags: [ops]\n---\n# Deploys\n${"Ship small. ".repeat(300)}\n## Rollback\nRun make rollback.`);
  writeFileSync(join(root, "secret.md"), "TOP SECRET");
  symlinkSync(join(root, "secret.md"), join(vault, "raw", "link.md"));

  it("is the title, the matched passage when the opening lacks it, then the opening, cut at 2,000 characters", async () => {
    const text = await rerankText(hit("raw/deploys.md", "… Run make <mark>rollback</mark>."), vault);
    expect(text).toStartWith("Deploys\n\n… Run make rollback.\n\n# Deploys Ship small.");
    expect(text.length).toBe(2000);
    expect(text).not.toContain("tags:");
    const early = await rerankText(hit("raw/deploys.md", "<mark>Ship</mark> small."), vault);
    expect(early).toStartWith("Deploys\n\n# Deploys Ship small.");
  });

  it("reads nothing through a symlink or outside the vault: title and snippet only", async () => {
    expect(await rerankText(hit("raw/link.md", "a <mark>b</mark>"), vault)).toBe("Deploys\n\na b");
    expect(await rerankText(hit("../secret.md", "a"), vault)).toBe("Deploys\n\na");
  });
});
