// Links between notes, as the index keeps them: `[[wikilinks]]` (Obsidian's: by name, case
// insensitive, `[[folder/name]]` narrows by path) and relative markdown links to notes
// (`[text](../runbooks/deploy.md)`, resolved against the linking note's folder). Extraction
// runs on every indexed document, so it is a few regex passes and nothing more; resolution
// to vault paths happens when the links are read (resolveLink), so a rename or a delete needs
// no rewrite of other notes' rows: a link to a note that is gone simply dangles.
import { posix } from "node:path";

export type LinkKind = "wiki" | "path";

/** One stored link of a document. */
export interface DocLink {
  kind: LinkKind;
  /**
   * wiki: the target lower-cased, extension and `#heading` / `|alias` removed ("deploy",
   * "runbooks/deploy"); path: the vault path the link resolves to ("raw/runbooks/deploy.md").
   */
  target: string;
  /** noteName() of the target: what a store looks candidates up by. */
  name: string;
}

/** What the index covers as notes; a link to anything else (an image, a PDF) is not a note link. */
const NOTE_EXT = /\.(md|markdown|txt)$/i;
const OTHER_EXT = /\.[A-Za-z0-9]{1,8}$/;
/** `[[target]]`, `[[target#heading]]`, `[[target|alias]]` (and `![[embed]]`: the "!" is outside the match). */
const WIKI = /\[\[([^[\]\n|#^]*)(?:[#^|][^[\]\n]*)?\]\]/g;
/** `[text](target)` or `[text](<target with spaces>)`, an optional "title" after. */
const MD_LINK = /\]\(\s*(<[^>\n]*>|[^()\s]+)(?:\s+["'(][^\n]*?["')])?\s*\)/g;
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const INLINE_CODE = /`[^`\n]*`/g;

/** A note's name, as wikilinks name it: file name without extension, lower-cased. */
export function noteName(path: string): string {
  const base = path.slice(path.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  return (dot > 0 && NOTE_EXTENSIONS.has(base.slice(dot + 1).toLowerCase()) ? base.slice(0, dot) : base).toLowerCase();
}

const NOTE_EXTENSIONS = new Set(["md", "markdown", "txt"]);

/** The links of one document (`path` vault-relative, `body` without frontmatter), de-duplicated. */
export function extractLinks(path: string, body: string): DocLink[] {
  // Cheap exit: most notes of a big vault hold neither form.
  const hasWiki = body.includes("[[");
  const hasMd = body.includes("](");
  if (!hasWiki && !hasMd) return [];
  const code = body.includes("`") || body.includes("~~~") ? codeRanges(body) : NO_RANGES;
  const seen = new Set<string>();
  const out: DocLink[] = [];
  const add = (kind: LinkKind, target: string) => {
    const key = `${kind}\0${target}`;
    if (target === "" || seen.has(key)) return;
    seen.add(key);
    out.push({ kind, target, name: noteName(target) });
  };
  if (hasWiki) {
    for (const m of body.matchAll(WIKI)) {
      if (inRanges(code, m.index)) continue;
      const raw = (m[1] ?? "").trim().replaceAll("\\", "/");
      if (raw === "" || (OTHER_EXT.test(raw) && !NOTE_EXT.test(raw))) continue;
      add("wiki", raw.replace(NOTE_EXT, "").replace(/^\/+/, "").toLowerCase());
    }
  }
  if (hasMd) {
    const dir = posix.dirname(path);
    for (const m of body.matchAll(MD_LINK)) {
      if (inRanges(code, m.index)) continue;
      const target = markdownTarget(dir, m[1] ?? "");
      if (target) add("path", target);
    }
  }
  return out;
}

type Ranges = number[]; // [start, end, start, end, …], ascending
const NO_RANGES: Ranges = [];

/** Where the body holds code (fenced blocks, `inline spans`): links there are examples, not links. */
function codeRanges(body: string): Ranges {
  const out: Ranges = [];
  let open: { at: number; fence: string } | undefined;
  for (const fence of fenceLines(body)) {
    if (!open) open = fence;
    else if (fence.fence === open.fence) {
      const end = body.indexOf("\n", fence.at);
      out.push(open.at, end === -1 ? body.length : end);
      open = undefined;
    }
  }
  if (open) out.push(open.at, body.length); // an unclosed fence runs to the end
  if (body.includes("`")) {
    const inline: Ranges = [];
    for (const m of body.matchAll(INLINE_CODE)) if (!inRanges(out, m.index)) inline.push(m.index, m.index + m[0].length);
    if (inline.length) return merge(out, inline);
  }
  return out;
}

/** Lines opening or closing a fenced block (``` or ~~~ after at most three spaces), in order. */
function fenceLines(body: string): Array<{ at: number; fence: string }> {
  const out: Array<{ at: number; fence: string }> = [];
  for (const fence of ["```", "~~~"]) {
    for (let i = body.indexOf(fence); i !== -1; i = body.indexOf(fence, i + 3)) {
      const lineStart = body.lastIndexOf("\n", i - 1) + 1;
      if (i - lineStart <= 3 && body.slice(lineStart, i).trim() === "") {
        out.push({ at: lineStart, fence });
        const eol = body.indexOf("\n", i);
        if (eol === -1) break;
        i = eol - 2; // the rest of the line is the info string
      }
    }
  }
  return out.length > 1 && out.some((f) => f.fence === "~~~") ? out.sort((a, b) => a.at - b.at) : out;
}

function merge(a: Ranges, b: Ranges): Ranges {
  const pairs: Array<[number, number]> = [];
  for (const r of [a, b]) for (let i = 0; i < r.length; i += 2) pairs.push([r[i]!, r[i + 1]!]);
  return pairs.sort((x, y) => x[0] - y[0]).flat();
}

function inRanges(ranges: Ranges, at: number): boolean {
  for (let i = 0; i < ranges.length; i += 2) {
    if (at < ranges[i]!) return false;
    if (at < ranges[i + 1]!) return true;
  }
  return false;
}

/** A markdown link's vault path, or null when it is no link to a note inside the vault. */
function markdownTarget(dir: string, raw: string): string | null {
  let href = raw.startsWith("<") ? raw.slice(1, -1) : raw;
  if (href === "" || href.startsWith("#") || SCHEME.test(href) || href.startsWith("//")) return null;
  href = href.replace(/[?#].*$/, "");
  try {
    href = decodeURIComponent(href);
  } catch {
    return null;
  }
  if (href.includes("\0")) return null;
  if (!NOTE_EXT.test(href)) {
    if (OTHER_EXT.test(href.slice(href.lastIndexOf("/") + 1))) return null;
    href += ".md"; // `[x](deploy)`: Obsidian's extension-less form
  }
  const joined = href.startsWith("/") ? posix.normalize(href.slice(1)) : posix.join(dir, href);
  if (joined === ".." || joined.startsWith("../") || joined.startsWith("/")) return null;
  return joined;
}

/** A note as link resolution needs it. */
export interface LinkCandidate {
  path: string;
}

/**
 * The note a link names, among the notes of its name (`candidates`: those whose noteName()
 * is link.name): a path link's exact path; a wikilink's note whose path (without extension)
 * is the target or ends with "/" + target — the shortest such path, then the first by name,
 * as Obsidian prefers the nearest-to-root match. Undefined: the link dangles.
 */
export function resolveLink<T extends LinkCandidate>(link: Pick<DocLink, "kind" | "target">, candidates: readonly T[]): T | undefined {
  if (link.kind === "path") return candidates.find((c) => c.path === link.target);
  let best: T | undefined;
  for (const c of candidates) {
    const stem = c.path.replace(NOTE_EXT, "").toLowerCase();
    if (stem !== link.target && !stem.endsWith(`/${link.target}`)) continue;
    if (!best || c.path.length < best.path.length || (c.path.length === best.path.length && c.path < best.path)) best = c;
  }
  return best;
}
