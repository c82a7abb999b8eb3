// Splits a document's body into passages of about TARGET_CHUNK_CHARS for the index: by
// heading first (a heading stays with its text, and is repeated on a section's later
// chunks), then by paragraph, then — for one giant paragraph — by line and word.
import type { IndexDoc } from "./types.ts";

export const TARGET_CHUNK_CHARS = 1_500;

export interface Chunk {
  /** 0-based position in the document; with the path it makes the hit id. */
  seq: number;
  text: string;
}

/** A short document is one chunk; an empty one still gets one (its title is searchable). */
export function chunkText(body: string, target = TARGET_CHUNK_CHARS): Chunk[] {
  const text = body.trim();
  if (text.length <= target) return [{ seq: 0, text }];
  const pieces: string[] = [];
  let current = "";
  const flush = () => {
    if (current.trim()) pieces.push(current.trim());
    current = "";
  };
  for (const section of sections(text)) {
    if (section.text.length > target) {
      // Too big for one chunk: it starts its own, split by paragraph, heading repeated.
      flush();
      pieces.push(...splitSection(section, target));
    } else if (current.length + section.text.length + 2 > target) {
      flush();
      current = section.text;
    } else {
      current = current ? `${current}\n\n${section.text}` : section.text;
    }
  }
  flush();
  return pieces.map((t, seq) => ({ seq, text: t }));
}

export function chunkDocument(doc: Pick<IndexDoc, "body">): Chunk[] {
  return chunkText(doc.body);
}

/** What to embed per chunk: the title gives a passage its context. */
export function embeddingInputs(doc: Pick<IndexDoc, "title" | "body">): string[] {
  return chunkDocument(doc).map((c) => (doc.title ? `${doc.title}\n\n${c.text}` : c.text));
}

interface Section {
  heading: string | null;
  text: string;
}

const HEADING = /^#{1,6}\s/;
const FENCE = /^\s*(```|~~~)/;

/** Heading-led sections; lines inside code fences are never headings. */
function sections(text: string): Section[] {
  const out: Section[] = [];
  let lines: string[] = [];
  let heading: string | null = null;
  let inFence = false;
  const push = () => {
    const body = lines.join("\n").trim();
    if (body) out.push({ heading, text: body });
  };
  for (const line of text.split("\n")) {
    if (FENCE.test(line)) inFence = !inFence;
    if (!inFence && HEADING.test(line)) {
      push();
      lines = [];
      heading = line.trim();
    }
    lines.push(line);
  }
  push();
  return out;
}

function splitSection(section: Section, target: number): string[] {
  const prefix = section.heading ? `${section.heading}\n\n` : "";
  const body = section.heading ? section.text.slice(section.text.indexOf("\n") + 1).trim() : section.text;
  const room = Math.max(200, target - prefix.length);
  const out: string[] = [];
  let current = "";
  for (const para of paragraphs(body).flatMap((p) => (p.length > room ? hardSplit(p, room) : [p]))) {
    if (current && current.length + para.length + 2 > room) {
      out.push(current);
      current = para;
    } else {
      current = current ? `${current}\n\n${para}` : para;
    }
  }
  if (current) out.push(current);
  // The first piece already starts with the heading's own line; later ones get it repeated.
  return out.map((p) => `${prefix}${p}`.trim());
}

/** Blank-line separated blocks; a code fence is one block however many blank lines it holds. */
function paragraphs(text: string): string[] {
  const out: string[] = [];
  let block: string[] = [];
  let inFence = false;
  for (const line of text.split("\n")) {
    if (FENCE.test(line)) inFence = !inFence;
    if (!inFence && line.trim() === "") {
      if (block.length) out.push(block.join("\n"));
      block = [];
    } else block.push(line);
  }
  if (block.length) out.push(block.join("\n"));
  return out;
}

/** Cuts an over-long block at line breaks, else at spaces, else anywhere. */
function hardSplit(text: string, room: number): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > room) {
    const window = rest.slice(0, room);
    let cut = window.lastIndexOf("\n");
    if (cut < room / 2) cut = window.lastIndexOf(" ");
    if (cut < room / 2) cut = room;
    out.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) out.push(rest);
  return out;
}
