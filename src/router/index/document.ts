// Turns a markdown (or text) file into an IndexDoc: frontmatter read for title and tags,
// the title falling back to the first "# " heading and then to the file name.
import { basename, extname } from "node:path";
import type { IndexDoc, Producer } from "./types.ts";

export function hashContent(content: string | Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(content).digest("hex");
}

export interface Frontmatter {
  data: Record<string, unknown>;
  body: string;
}

const FRONTMATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

/** Splits leading YAML frontmatter off; unparseable frontmatter is left in the body as text. */
export function splitFrontmatter(content: string): Frontmatter {
  const text = content.replace(/^\uFEFF/, "");
  const m = FRONTMATTER.exec(text);
  if (!m) return { data: {}, body: text };
  try {
    // Bun's native YAML parser, far faster than the `yaml` package: a refresh parses every file.
    const data: unknown = Bun.YAML.parse(m[1] as string);
    const isRecord = data !== null && typeof data === "object" && !Array.isArray(data);
    return { data: isRecord ? (data as Record<string, unknown>) : {}, body: text.slice(m[0].length) };
  } catch {
    return { data: {}, body: text };
  }
}

/** Frontmatter title, else the first level-1 heading, else the file name without extension. */
export function deriveTitle(path: string, data: Record<string, unknown>, body: string): string {
  if (typeof data.title === "string" && data.title.trim()) return data.title.trim();
  const h1 = /^# +(.+?)\s*#*\s*$/m.exec(body);
  if (h1?.[1]) return h1[1].trim();
  return basename(path, extname(path));
}

/** `tags: [a, b]`, `tags: a, b` or `tags: a b`; a leading "#" is dropped. */
export function frontmatterTags(data: Record<string, unknown>): string[] {
  const raw = data.tags ?? data.tag;
  const list = Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(/[,\s]+/) : [];
  const tags = list
    .filter((t): t is string | number => typeof t === "string" || typeof t === "number")
    .map((t) => String(t).trim().replace(/^#/, ""))
    .filter(Boolean);
  return [...new Set(tags)];
}

export interface FileInput {
  /** Vault-relative path, forward slashes. */
  path: string;
  producer: Producer;
  content: string;
  mtimeMs: number;
  /** Extra tags (e.g. from an ingest request), merged after the frontmatter's. */
  tags?: string[];
}

export function documentFromFile(input: FileInput): IndexDoc {
  const { data, body } = splitFrontmatter(input.content);
  return {
    path: input.path,
    producer: input.producer,
    title: deriveTitle(input.path, data, body),
    body,
    tags: [...new Set([...frontmatterTags(data), ...(input.tags ?? [])])],
    updatedAt: new Date(input.mtimeMs),
    hash: hashContent(input.content),
    mtimeMs: input.mtimeMs,
  };
}
