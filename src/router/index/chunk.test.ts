import { describe, expect, it } from "bun:test";
import { chunkText, embeddingInputs, TARGET_CHUNK_CHARS } from "./chunk.ts";
import { deriveTitle, documentFromFile, frontmatterTags, splitFrontmatter } from "./document.ts";

const para = (n: number, word = "lorem") => Array.from({ length: n }, (_, i) => `${word}${i}`).join(" ");

describe("chunkText", () => {
  it("keeps a short document as one chunk", () => {
    expect(chunkText("# Title\n\nShort body.")).toEqual([{ seq: 0, text: "# Title\n\nShort body." }]);
  });

  it("gives an empty document one empty chunk, so its title stays searchable", () => {
    expect(chunkText("")).toEqual([{ seq: 0, text: "" }]);
  });

  it("splits a long document at headings, each heading with its text", () => {
    const sections = ["## Alpha", "## Beta", "## Gamma"].map((h) => `${h}\n\n${para(150, h.slice(3).toLowerCase())}`);
    const chunks = chunkText(sections.join("\n\n"));
    expect(chunks.length).toBe(3);
    chunks.forEach((c, i) => {
      expect(c.seq).toBe(i);
      expect(c.text.startsWith(["## Alpha", "## Beta", "## Gamma"][i] as string)).toBe(true);
    });
  });

  it("packs small sections together up to the target size", () => {
    const text = Array.from({ length: 40 }, (_, i) => `## S${i}\n\n${para(10)}`).join("\n\n");
    const chunks = chunkText(text);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.length).toBeLessThan(40);
    for (const c of chunks) expect(c.text.length).toBeLessThanOrEqual(TARGET_CHUNK_CHARS);
  });

  it("splits an over-long section by paragraph and repeats its heading", () => {
    const text = `## Big\n\n${Array.from({ length: 8 }, () => para(60)).join("\n\n")}`;
    const chunks = chunkText(text);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) {
      expect(c.text.startsWith("## Big\n\n")).toBe(true);
      expect(c.text.length).toBeLessThanOrEqual(TARGET_CHUNK_CHARS);
    }
  });

  it("cuts one giant paragraph at spaces", () => {
    const chunks = chunkText(para(2_000));
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) expect(c.text.length).toBeLessThanOrEqual(TARGET_CHUNK_CHARS);
    expect(chunks.map((c) => c.text).join(" ")).toBe(para(2_000));
  });

  it("does not take a '#' line inside a code fence for a heading", () => {
    const text = `## Real\n\n\`\`\`sh\n# just a comment\n${para(100)}\n\`\`\`\n\n${para(200)}`;
    expect(chunkText(text).some((c) => c.text.startsWith("# just a comment"))).toBe(false);
  });

  it("loses no words", () => {
    const text = Array.from({ length: 12 }, (_, i) => `## H${i}\n\n${para(40 + i * 13, `w${i}x`)}`).join("\n\n");
    const words = (s: string) => s.split(/\s+/).filter((w) => w && !w.startsWith("#") && !/^H\d+$/.test(w));
    expect(new Set(chunkText(text).flatMap((c) => words(c.text)))).toEqual(new Set(words(text)));
  });
});

describe("documentFromFile", () => {
  it("takes the frontmatter title and tags", () => {
    const doc = documentFromFile({
      path: "raw/notes/a.md",
      producer: "raw",
      content: "---\ntitle: Deploys\ntags: [ops, '#oncall']\n---\n# Other heading\nBody",
      mtimeMs: 5,
    });
    expect(doc.title).toBe("Deploys");
    expect(doc.tags).toEqual(["ops", "oncall"]);
    expect(doc.body).toBe("# Other heading\nBody");
    expect(doc.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(doc.updatedAt.getTime()).toBe(5);
  });

  it("falls back to the first # heading, then to the file name", () => {
    expect(deriveTitle("raw/x.md", {}, "intro\n## Not this\n# Heading One\n")).toBe("Heading One");
    expect(deriveTitle("raw/sub/my-note.md", {}, "no heading")).toBe("my-note");
  });

  it("reads comma- or space-separated tag strings", () => {
    expect(frontmatterTags({ tags: "a, b c" })).toEqual(["a", "b", "c"]);
  });

  it("leaves unparseable frontmatter in the body", () => {
    const text = "---\n: [unclosed\n---\nbody";
    expect(splitFrontmatter(text)).toEqual({ data: {}, body: text });
  });
});

describe("embeddingInputs", () => {
  it("prefixes each chunk with the title", () => {
    expect(embeddingInputs({ title: "T", body: "b" })).toEqual(["T\n\nb"]);
  });
});
