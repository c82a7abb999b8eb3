// The second relevance set (scripts/bench/lib/npm-docs-set.ts): the committed queries are what
// the documented procedure gives over the node_modules that bun.lock installs — regenerated
// here and compared — and every query points at a corpus file that holds what it claims.
import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { generateSet, loadSet, NODE_MODULES, NPM_KINDS, plainText, questionOf } from "../scripts/bench/lib/npm-docs-set";

describe("the npm-docs relevance set", () => {
  const committed = loadSet();

  it("is exactly what the procedure generates from this install over its packages (seed and corpus unchanged)", () => {
    expect(generateSet(NODE_MODULES, { packages: [...new Set(committed.corpus.map((d) => d.package))] })).toEqual(committed);
  });

  it("holds every kind, each query naming a corpus file, a question's hidden heading in its file", () => {
    for (const k of NPM_KINDS) expect(committed.queries.filter((q) => q.kind === k).length).toBeGreaterThanOrEqual(40);
    const files = new Set(committed.corpus.map((d) => d.file));
    for (const q of committed.queries) {
      expect(files.has(q.relevant)).toBe(true);
      const text = readFileSync(join(NODE_MODULES, q.relevant), "utf8");
      if (q.kind === "question") expect(text.split("\n")).toContain(q.hide!);
      if (q.kind === "heading") expect(text.split("\n").some((l) => /^#{2,4}\s/.test(l) && plainText(l.replace(/^#+\s+/, "")) === q.query)).toBe(true);
      if (q.kind === "sentence") for (const w of q.query.split(" ")) expect(text.toLowerCase()).toContain(w);
    }
  });

  it("turns how-to headings into questions and leaves others alone", () => {
    expect(questionOf("Handling errors", "undici")).toBe("how do I handle errors in undici?");
    expect(questionOf("How to register components", "@hono/zod-openapi")).toBe("how do I register components in zod-openapi?");
    expect(questionOf("Setting the timeout", "x")).toBe("how do I set the timeout in x?");
    expect(questionOf("Why use re2-wasm?", "re2-wasm")).toBe("Why use re2-wasm in re2-wasm?");
    expect(questionOf("Installation", "x")).toBeUndefined();
    expect(questionOf("Pool stats", "undici")).toBeUndefined();
  });
});
