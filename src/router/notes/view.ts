// What GET /notes/{path} (and the batch, and MCP's get) answers for a note: the file's
// frontmatter, title, tags and body (whole, a line range, or cut at max_chars, the cut said),
// its content hash, its outgoing links resolved to notes and the notes linking to it.
import { deriveTitle, frontmatterTags, splitFrontmatter } from "../index/document";
import { extractLinks } from "../index/links";
import type { NoteMeta, Producer } from "../index/types";
import type { NoteFile, NotesDeps } from "./file";
import { backlinksOf, resolveLinks } from "./graph";

export interface LineRange {
  /** First body line, from 1. */
  from: number;
  /** Last body line, inclusive; default the last. */
  to?: number;
}

/** `lines=` as the API takes it: "START-END", "START-" (to the end) or "START" (that line). */
export function lineRange(spec: string | undefined): LineRange | undefined {
  if (!spec) return undefined;
  const [from, to] = spec.split("-");
  return { from: Number(from), to: to === undefined ? Number(from) : to === "" ? undefined : Number(to) };
}

export interface ViewOptions {
  lines?: LineRange;
  maxChars?: number;
}

export interface NoteRef {
  path: string;
  title: string;
  producer: Producer;
  updated_at: string;
}

export interface NoteLink {
  kind: "wiki" | "path";
  /** As written (a wikilink lower-cased, without #heading or |alias); a markdown link as its vault path. */
  target: string;
  /** The note it resolves to; null: it dangles (no such note in the index). */
  path: string | null;
  title: string | null;
}

export interface BodyCut {
  body: string;
  /** Body lines returned (from 1; the frontmatter is not counted). */
  from_line: number;
  to_line: number;
  total_lines: number;
  total_chars: number;
  /** True when body is not the whole body; truncated_by says what cut it. */
  truncated: boolean;
  truncated_by: "lines" | "max_chars" | null;
}

export interface NoteView extends BodyCut {
  path: string;
  producer: Producer;
  title: string;
  tags: string[];
  frontmatter: Record<string, unknown>;
  updated_at: string;
  /** sha256 of the file's content; the ETag. */
  hash: string;
  /** The index holds this note at this content (false: not yet indexed, or changed since). */
  indexed: boolean;
  links: NoteLink[];
  backlinks: NoteRef[];
}

export const noteRef = (n: NoteMeta): NoteRef => ({ path: n.path, title: n.title, producer: n.producer, updated_at: n.updatedAt.toISOString() });

/** Views of several read files at once: the index is asked for all of them together. */
export async function noteViews(deps: NotesDeps, files: NoteFile[], opts: (file: NoteFile) => ViewOptions = () => ({})): Promise<NoteView[]> {
  const parsed = files.map((f) => ({ file: f, ...splitFrontmatter(f.content) }));
  const paths = files.map((f) => f.path);
  // Every file's links resolved in one go: a batch of 50 notes costs the index one lookup.
  const extracted = parsed.map((p) => extractLinks(p.file.path, p.body));
  const [resolved, backlinks, indexed] = await Promise.all([
    resolveLinks(deps.index, extracted.flat()),
    backlinksOf(deps.index, paths),
    deps.index.notes(paths),
  ]);
  let at = 0;
  const outgoing = extracted.map((links) => {
    const mine = resolved.slice(at, at + links.length);
    at += links.length;
    return mine;
  });
  const sources = [...new Set([...backlinks.values()].flat())];
  const meta = new Map((await deps.index.notes(sources)).map((n) => [n.path, n]));
  const indexedHash = new Map(indexed.map((n) => [n.path, n.hash]));
  return parsed.map(({ file, data, body }, i) => ({
    path: file.path,
    producer: file.producer,
    title: deriveTitle(file.path, data, body),
    tags: frontmatterTags(data),
    frontmatter: data,
    updated_at: new Date(file.mtimeMs).toISOString(),
    hash: file.hash,
    indexed: indexedHash.get(file.path) === file.hash,
    ...cutBody(body, opts(file)),
    links: outgoing[i]!.map((l) => ({ kind: l.kind, target: l.target, path: l.note?.path ?? null, title: l.note?.title ?? null })),
    backlinks: (backlinks.get(file.path) ?? [])
      .map((p) => meta.get(p))
      .filter((n): n is NoteMeta => n !== undefined)
      .sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || (a.path < b.path ? -1 : 1))
      .map(noteRef),
  }));
}

/** The body, or a line range of it, cut at maxChars (never inside a surrogate pair). */
export function cutBody(body: string, opts: ViewOptions = {}): BodyCut {
  const lines = body.split("\n");
  if (lines.length > 1 && lines.at(-1) === "") lines.pop(); // a final newline ends the last line
  const total = lines.length;
  const from = Math.max(1, opts.lines?.from ?? 1);
  const to = Math.min(total, opts.lines?.to ?? total);
  let text = from > to ? "" : lines.slice(from - 1, to).join("\n");
  if (to === total && from <= to && body.endsWith("\n")) text += "\n";
  let truncatedBy: BodyCut["truncated_by"] = from > 1 || to < total ? "lines" : null;
  let last = from > to ? from - 1 : to;
  if (opts.maxChars !== undefined && text.length > opts.maxChars) {
    let end = opts.maxChars;
    const code = text.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end--;
    text = text.slice(0, end);
    last = from + (text.match(/\n/g)?.length ?? 0) - (text.endsWith("\n") ? 1 : 0);
    truncatedBy = "max_chars";
  }
  return {
    body: text,
    from_line: from,
    to_line: Math.max(from - 1, last),
    total_lines: total,
    total_chars: body.length,
    truncated: truncatedBy !== null,
    truncated_by: truncatedBy,
  };
}
