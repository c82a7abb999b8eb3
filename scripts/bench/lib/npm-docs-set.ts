// A second, independent relevance set (issue 21 part 5), over a corpus the project does not
// write: the markdown documentation that ships inside the npm packages `bun install
// --frozen-lockfile` puts in node_modules/ (READMEs and docs/ of undici, playwright-core,
// @redocly/cli, zod, hono's zod-openapi, OpenTelemetry, …). The lockfile pins every version, so
// a fresh machine has the same files; the committed set records each file's sha256, and the
// bench says when one differs.
//
// The procedure (`bun scripts/bench/lib/npm-docs-set.ts --write` regenerates the committed
// scripts/bench/data/npm-docs-queries.json; the seed is fixed):
//   corpus     (pinned: the committed set names its packages; a check regenerates it over those,
//              so a dependency added later does not move it, and a version bump of one does)
//              every *.md under a top-level node_modules package (scoped ones too; not nested
//              node_modules, not dot folders), 1 KB to 300 KB, without CHANGELOG, HISTORY,
//              LICENSE, SECURITY, CONTRIBUTING, CODE_OF_CONDUCT, FUNDING or AUTHORS files,
//              without platform packages (package.json `os`/`cpu`), identical files once.
//   heading    known-item: an H2–H4 heading that no other document has, with at least two
//              content words (not stop words, 3+ letters), as written (markdown removed) →
//              its document.
//   sentence   known-item, simulated as Azzopardi et al. (SIGIR 2007) do: four content words
//              (4+ letters) drawn at random, in order, from one prose sentence of 12–40 words,
//              kept only when at most three documents hold all four → its document.
//   question   a how-to section turned into the question a user would ask: a heading that starts
//              with a verb or its -ing form ("Handling errors", "How to register components",
//              "Configure the pool") becomes "how do I handle errors in <package>?"; a heading
//              the author wrote as a question (ending in "?", 3+ words) is kept, with " in
//              <package>" before the "?". The heading line is removed from the indexed copy
//              of the document, so the question must be answered by the section's content,
//              not by the heading's own wording.
// Documents are visited in a seeded random order; each gives at most one query of each kind;
// at most QUERIES_PER_KIND of each. One relevant document per query (known-item), so nDCG@10
// is 1/log2(1 + rank) of that document.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { STOP_WORDS } from "../../../src/router/index/index.ts";
import { prng, type Rng } from "../../../test/support/vault-gen.ts";

export const SEED = 21;
export const QUERIES_PER_KIND = 60;
export const NPM_KINDS = ["heading", "sentence", "question"] as const;
export type NpmQueryKind = (typeof NPM_KINDS)[number];

export interface NpmDoc {
  /** Path under node_modules/, forward slashes: "undici/docs/docs/api/Pool.md". */
  file: string;
  package: string;
  version: string;
  sha256: string;
}

export interface NpmQuery {
  id: number;
  kind: NpmQueryKind;
  query: string;
  /** The relevant document (a `file` of the corpus). */
  relevant: string;
  /** For `question`: the heading line removed from the indexed copy of `relevant`. */
  hide?: string;
}

export interface NpmDocsSet {
  seed: number;
  procedure: string;
  corpus: NpmDoc[];
  queries: NpmQuery[];
}

const REPO = join(import.meta.dir, "..", "..", "..");
export const NODE_MODULES = join(REPO, "node_modules");
export const SET_FILE = join(REPO, "scripts", "bench", "data", "npm-docs-queries.json");

const SKIP_FILE = /^(changelog|history|license|licence|security|contributing|code_of_conduct|funding|authors)/i;
const MIN_BYTES = 1024;
const MAX_BYTES = 300_000;

function packages(root: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(root).sort()) {
    if (e.startsWith(".")) continue;
    if (e.startsWith("@")) for (const s of readdirSync(join(root, e)).sort()) out.push(`${e}/${s}`);
    else out.push(e);
  }
  return out;
}

function markdownFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.name === "node_modules" || e.name.startsWith(".")) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) markdownFiles(p, out);
    else if (e.isFile() && e.name.toLowerCase().endsWith(".md") && !SKIP_FILE.test(e.name)) out.push(p);
  }
  return out;
}

const sha256 = (text: string | Buffer) => createHash("sha256").update(text).digest("hex");

/** The corpus as node_modules holds it now, by the rules above. */
export function scanCorpus(root = NODE_MODULES, only?: ReadonlySet<string>): NpmDoc[] {
  const seen = new Set<string>();
  const docs: NpmDoc[] = [];
  for (const pkg of packages(root)) {
    if (only && !only.has(pkg)) continue;
    const dir = join(root, pkg);
    const manifest = join(dir, "package.json");
    if (!existsSync(manifest)) continue;
    const pj = JSON.parse(readFileSync(manifest, "utf8")) as { version?: string; os?: unknown; cpu?: unknown };
    if (pj.os || pj.cpu) continue;
    for (const abs of markdownFiles(dir)) {
      const size = statSync(abs).size;
      if (size < MIN_BYTES || size > MAX_BYTES) continue;
      const bytes = readFileSync(abs);
      const hash = sha256(bytes);
      if (seen.has(hash)) continue;
      seen.add(hash);
      docs.push({ file: relative(root, abs).split(sep).join("/"), package: pkg, version: pj.version ?? "?", sha256: hash });
    }
  }
  return docs;
}

interface Heading {
  level: number;
  line: string;
  text: string;
}

interface Parsed {
  headings: Heading[];
  sentences: string[];
  words: Set<string>;
}

/** Markdown inline syntax out: links keep their text, code keeps its content, emphasis and html go. */
export function plainText(s: string): string {
  return s
    .replace(/!\[[^\]]*\]\([^)]*\)/g, " ")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, " ")
    .replace(/[`*~]/g, "")
    .replace(/_/g, " ") // emphasis or snake_case: either way a word break, as the index tokenises it
    .replace(/\s+/g, " ")
    .trim();
}

const wordList = (s: string) => s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
const contentWords = (s: string, min: number) => wordList(s).filter((w) => w.length >= min && !STOP_WORDS.has(w) && /^\p{L}+$/u.test(w));

function parse(text: string): Parsed {
  const headings: Heading[] = [];
  const sentences: string[] = [];
  let fence = false;
  let paragraph: string[] = [];
  const flush = () => {
    const para = plainText(paragraph.join(" "));
    paragraph = [];
    for (const s of para.split(/(?<=[.!?])\s+(?=[A-Z])/)) {
      const n = wordList(s).length;
      if (n >= 12 && n <= 40 && !/https?:|\|/.test(s)) sentences.push(s);
    }
  };
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      fence = !fence;
      flush();
      continue;
    }
    if (fence) continue;
    const h = /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (h) {
      flush();
      headings.push({ level: h[1]!.length, line, text: plainText(h[2]!) });
    } else if (/^\s*$/.test(line) || /^\s*([-*+]|\d+\.|>|\|)/.test(line)) {
      flush();
    } else paragraph.push(line.trim());
  }
  flush();
  return { headings, sentences, words: new Set(wordList(text)) };
}

/** Base forms of the verbs a how-to heading may start with ("handling" → "handle"). */
const VERBS = new Set(
  (
    "access add authenticate authorize build bundle cache call cancel catch change check close compose configure connect convert create " +
    "customize debug define deploy disable enable escape export extend filter format generate get handle import install instrument " +
    "intercept limit lint load log manage match measure migrate mock override parse pass publish read record register render retry " +
    "return reuse run send serialize set share specify split start stop stream test throw trace transform update upgrade upload use " +
    "validate wrap write"
  ).split(" "),
);

function verbBase(word: string): string | undefined {
  const w = word.toLowerCase();
  if (VERBS.has(w)) return w;
  if (!w.endsWith("ing")) return undefined;
  const stem = w.slice(0, -3);
  return [stem, `${stem}e`, stem.slice(0, -1)].find((c) => VERBS.has(c));
}

const shortName = (pkg: string) => pkg.replace(/^@[^/]+\//, "");

/** The question a how-to heading becomes, or undefined. */
export function questionOf(heading: string, pkg: string): string | undefined {
  const name = shortName(pkg);
  const text = heading.replace(/\s+/g, " ").trim();
  if (/\?$/.test(text)) {
    const words = wordList(text);
    if (words.length < 3 || contentWords(text, 3).length < 1) return undefined;
    return `${text.slice(0, -1).trim()} in ${name}?`;
  }
  const rest = text.replace(/^how to\s+/i, "");
  const [first, ...others] = rest.split(" ");
  const base = first ? verbBase(first.replace(/[^\p{L}]/gu, "")) : undefined;
  if (!base || others.length === 0 || contentWords(others.join(" "), 3).length === 0) return undefined;
  return `how do I ${base} ${others
    .join(" ")
    .replace(/[.:]+$/, "")
    .toLowerCase()} in ${name}?`;
}

function shuffle<T>(rng: Rng, xs: T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export const PROCEDURE =
  "corpus: *.md of top-level node_modules packages (1 KB–300 KB; no changelog/license/security/contributing; no platform packages; duplicates once). " +
  "heading: a unique H2–H4 heading with 2+ content words → its file. sentence: 4 content words in order from a 12–40-word prose sentence, held by ≤ 3 documents → its file. " +
  "question: a how-to heading as 'how do I <verb> … in <package>?' (or an authored question heading + ' in <package>'), the heading line removed from the indexed copy → its file. " +
  `Seeded random order (seed ${SEED}); one query of each kind per document at most; ${QUERIES_PER_KIND} per kind at most.`;

/**
 * The set over node_modules, or (`packages`) over those packages only: the committed set is
 * checked against its own packages, so a dependency added later does not move it, while a
 * changed version of one of its packages does.
 */
export function generateSet(root = NODE_MODULES, opts: { packages?: readonly string[] } = {}): NpmDocsSet {
  const corpus = scanCorpus(root, opts.packages ? new Set(opts.packages) : undefined);
  const parsed = new Map(corpus.map((d) => [d.file, parse(readFileSync(join(root, d.file), "utf8"))]));
  const headingCount = new Map<string, number>();
  for (const p of parsed.values()) {
    for (const h of new Set(p.headings.map((h) => h.text.toLowerCase()))) headingCount.set(h, (headingCount.get(h) ?? 0) + 1);
  }
  const rng = prng(SEED);
  const queries: NpmQuery[] = [];
  const count = (k: NpmQueryKind) => queries.filter((q) => q.kind === k).length;
  for (const doc of shuffle(rng, corpus)) {
    const p = parsed.get(doc.file)!;
    const used = new Set<string>();
    // question first: its heading leaves the indexed copy, so it must not also be a heading query.
    if (count("question") < QUERIES_PER_KIND) {
      const candidates = p.headings.filter(
        (h) => h.level >= 2 && h.level <= 4 && questionOf(h.text, doc.package) && p.headings.filter((o) => o.line === h.line).length === 1,
      );
      if (candidates.length > 0) {
        const h = candidates[Math.floor(rng() * candidates.length)]!;
        used.add(h.line);
        queries.push({ id: 0, kind: "question", query: questionOf(h.text, doc.package)!, relevant: doc.file, hide: h.line });
      }
    }
    if (count("heading") < QUERIES_PER_KIND) {
      const candidates = p.headings.filter(
        (h) => h.level >= 2 && h.level <= 4 && !used.has(h.line) && headingCount.get(h.text.toLowerCase()) === 1 && contentWords(h.text, 3).length >= 2,
      );
      if (candidates.length > 0) {
        const h = candidates[Math.floor(rng() * candidates.length)]!;
        queries.push({ id: 0, kind: "heading", query: h.text, relevant: doc.file });
      }
    }
    if (count("sentence") < QUERIES_PER_KIND && p.sentences.length > 0) {
      for (let attempt = 0; attempt < 5; attempt++) {
        const sentence = p.sentences[Math.floor(rng() * p.sentences.length)]!;
        const words = [...new Set(contentWords(sentence, 4))];
        if (words.length < 4) continue;
        const chosen = new Set(
          shuffle(
            rng,
            words.map((_, i) => i),
          ).slice(0, 4),
        );
        const picked = words.filter((_, i) => chosen.has(i));
        const holders = [...parsed.values()].filter((o) => picked.every((w) => o.words.has(w))).length;
        if (holders > 3) continue;
        queries.push({ id: 0, kind: "sentence", query: picked.join(" "), relevant: doc.file });
        break;
      }
    }
  }
  for (const [i, q] of queries.entries()) q.id = i + 1;
  return { seed: SEED, procedure: PROCEDURE, corpus, queries };
}

export function loadSet(): NpmDocsSet {
  return JSON.parse(readFileSync(SET_FILE, "utf8")) as NpmDocsSet;
}

/** The indexed copy of a corpus file: the original, less the heading lines question queries hide. */
export function indexedCopy(text: string, hide: string[]): string {
  if (hide.length === 0) return text;
  const drop = new Set(hide);
  return text
    .split("\n")
    .filter((line) => !drop.has(line))
    .join("\n");
}

/** Where a corpus file lives in the bench's vault. */
export const vaultPathOf = (file: string) => `raw/npm/${file}`;

if (import.meta.main) {
  const set = generateSet();
  const summary =
    `${set.corpus.length} documents from ${new Set(set.corpus.map((d) => d.package)).size} packages; ` +
    NPM_KINDS.map((k) => `${set.queries.filter((q) => q.kind === k).length} ${k}`).join(", ");
  if (process.argv.includes("--write")) {
    mkdirSync(dirname(SET_FILE), { recursive: true });
    writeFileSync(SET_FILE, `${JSON.stringify(set, null, 1)}\n`);
    console.log(`wrote ${relative(REPO, SET_FILE)}: ${summary}`);
  } else {
    console.log(summary);
    for (const q of set.queries.slice(0, 30)) console.log(`${q.kind.padEnd(8)} ${q.query}  →  ${q.relevant}`);
  }
}
