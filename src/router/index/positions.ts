// Where a note holds the query's clauses, found in its text by the rules the SQLite index
// tokenizes by (unicode61 with diacritics removed, then the Porter stemmer): which clauses it
// holds (coverage) and where (closeness, rank.ts). Read from a few dozen candidates' text in
// JS, because tokenizing them again in FTS5 (a temporary table) cost more than the search.
// The index decides what matches; this only weighs what it found, so a word on which this
// stemmer and FTS5's differ moves a rank, never a match.
import { stemmer } from "stemmer";
import type { Occurrence } from "./rank.ts";

/** A token as unicode61 sees one: letters, digits and private-use characters. */
const TOKEN = /[\p{L}\p{N}\p{Co}]+/gu;
const MARKS = /\p{M}/gu;

/** A token's folded form: lower case, diacritics removed (remove_diacritics 2). */
function fold(token: string): string {
  const lower = token.toLowerCase();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII test
  return /^[\x00-\x7f]*$/.test(lower) ? lower : lower.normalize("NFD").replace(MARKS, "");
}

/** Each clause's words as stems, in order (a phrase's several, a word's one). */
export function clauseStems(parts: string[][]): string[][] {
  return parts.map((words) => words.flatMap((w) => (w.match(TOKEN) ?? []).map((t) => stemmer(fold(t)))));
}

/** unicode61's token characters beyond ASCII: letters, digits and private-use characters. */
const WIDE_TOKEN_CHAR = /[\p{L}\p{N}\p{Co}]/u;

function isTokenChar(c: number, text: string, at: number): boolean {
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57);
  const cp = text.codePointAt(at)!;
  return WIDE_TOKEN_CHAR.test(String.fromCodePoint(cp)) || /\p{M}/u.test(String.fromCodePoint(cp));
}

/** Stems of tokens already stemmed: a note's words recur, in it and across the candidates of one search and the next. */
const STEMS = new Map<string, string>();
const MAX_STEMS = 65_536;

function stemOf(token: string): string {
  let stem = STEMS.get(token);
  if (stem === undefined) {
    if (STEMS.size >= MAX_STEMS) STEMS.clear();
    stem = stemmer(token);
    STEMS.set(token, stem);
  }
  return stem;
}

const lowerCode = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);

/**
 * Which clauses the fields (title, body, …) hold, and where each stands: a word wherever a token
 * stems to it, a phrase where its stems stand one after another in one field. One pass over the
 * character codes; only a token starting with the first two letters of a wanted stem is cut out
 * and stemmed (stemming keeps a word's first two letters, and leaves shorter tokens alone).
 */
export function clausePositions(stems: string[][], fields: string[]): { held: boolean[]; occurrences: Occurrence[] } {
  const wanted = new Set(stems.flat());
  const heads = new Set<number>();
  for (const w of wanted) heads.add(w.length >= 2 ? w.charCodeAt(0) * 65_536 + w.charCodeAt(1) : -1);
  const held = stems.map(() => false);
  const occurrences: Occurrence[] = [];
  fields.forEach((text, field) => {
    const at = new Map<string, Set<number>>();
    let index = 0;
    const n = text.length;
    for (let i = 0; i < n; ) {
      const c = text.charCodeAt(i);
      if (!isTokenChar(c, text, i)) {
        i++;
        continue;
      }
      const start = i;
      let ascii = c < 128;
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d >= 128) ascii = false;
        if (!isTokenChar(d, text, i)) break;
      }
      const length = i - start;
      let stem: string | undefined;
      if (!ascii) {
        const token = fold(text.slice(start, i));
        stem = token.length < 3 ? token : stemOf(token);
      } else if (length < 3) stem = text.slice(start, i).toLowerCase();
      else if (heads.has(lowerCode(c) * 65_536 + lowerCode(text.charCodeAt(start + 1)))) stem = stemOf(text.slice(start, i).toLowerCase());
      if (stem !== undefined && wanted.has(stem)) {
        const set = at.get(stem) ?? new Set<number>();
        at.set(stem, set);
        set.add(index);
      }
      index++;
    }
    if (at.size === 0) return;
    stems.forEach((seq, clause) => {
      const first = seq[0];
      if (first === undefined) return;
      for (const start of at.get(first) ?? []) {
        if (!seq.every((s, k) => k === 0 || at.get(s)?.has(start + k))) continue;
        held[clause] = true;
        occurrences.push({ field, at: start, clause, len: seq.length });
      }
    });
  });
  return { held, occurrences };
}
