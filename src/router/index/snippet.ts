// Snippets, for both stores: a chunk's text with its matched words marked (MARK_OPEN, MARK_CLOSE)
// cut to the window of SNIPPET_TOKENS words the way FTS5's snippet() cuts one. SQLite marks a
// chunk with FTS5's highlight(); Postgres marks the words at the positions its chunk's tsvector
// holds for the query's lexemes (markPositions).
import { SNIPPET_MARK } from "./types.ts";

/** Tokens of context in a snippet (FTS5 allows at most 64). */
const SNIPPET_TOKENS = 24;
/** highlight()'s marks, private-use characters no note holds (SNIPPET_MARK only in the answer). */
export const MARK_OPEN = "\uE001";
export const MARK_CLOSE = "\uE002";

/**
 * A snippet of a highlighted chunk, cut the way FTS5's snippet() cuts one: the window of
 * SNIPPET_TOKENS words holding the most distinct matched terms (then the most matches, then
 * the earliest), its matches centred, "…" where text was cut, marks as SNIPPET_MARK.
 * One pass over the character codes finds the words (split at \s, as /\s+/ splits) and keeps
 * only those a mark touches; a window's score changes only where one of them enters or leaves
 * it, so only those starts are scored, and only the window's words are copied out.
 */
export function markedSnippet(marked: string): string {
  const length = marked.length;
  // Words are one character apart at least, so there are at most half as many (rounded up).
  const most = (length + 1) >> 1;
  if (most > starts.length) {
    const grown = [new Int32Array(most), new Int32Array(most)] as const;
    if (most > KEPT_WORDS) return cutSnippet(marked, grown[0], grown[1]);
    [starts, ends] = grown;
  }
  return cutSnippet(marked, starts, ends);
}

/** markedSnippet with `starts` and `ends` long enough for every word of `marked`. */
function cutSnippet(marked: string, starts: Int32Array, ends: Int32Array): string {
  const length = marked.length;
  const marks: MarkedWord[] = []; // the words a mark opens, closes or spans, in order
  let n = 0;
  let open = false;
  let termStart = 0; // where the open mark's text begins
  for (let i = 0; i < length; ) {
    while (i < length && isSpace(marked.charCodeAt(i))) i++;
    if (i === length) break;
    starts[n] = i;
    const opened = open;
    let closed = NONE;
    let hits = 0;
    for (; i < length; i++) {
      const c = marked.charCodeAt(i);
      if (c === OPEN_CODE) {
        open = true;
        termStart = i + 1;
        hits++;
      } else if (c === CLOSE_CODE) {
        if (open) {
          if (closed === NONE) closed = [];
          closed.push(termText(marked, termStart, i));
        }
        open = false;
      } else if (isSpace(c)) break;
    }
    ends[n] = i;
    if (opened || hits > 0) marks.push({ word: n, opened, closed, hits });
    n++;
  }
  const width = Math.min(SNIPPET_TOKENS, n);
  // The earliest of the best windows starts at 0 or where a marked word enters or leaves one:
  // those starts, in order (two ascending streams merged), with the marks inside kept counted.
  let start = 0;
  let bestScore = -1;
  let count = 0;
  const inWindow = new Map<string, number>();
  const enter = (m: MarkedWord, by: number) => {
    for (const t of m.closed) {
      const c = (inWindow.get(t) ?? 0) + by;
      if (c === 0) inWindow.delete(t);
      else inWindow.set(t, c);
    }
    count += by * m.hits;
  };
  let lo = 0; // the first mark still in the window
  let hi = 0; // the first mark not yet entered
  let entering = 0; // the next mark whose word a window would gain as its last
  let leaving = 0; // the next mark whose word a window would lose as its first
  for (let s = 0; s <= n - width; ) {
    while (hi < marks.length && marks[hi]!.word < s + width) enter(marks[hi++]!, 1);
    while (lo < hi && marks[lo]!.word < s) enter(marks[lo++]!, -1);
    const score = inWindow.size * 1_000 + count;
    if (score > bestScore) [start, bestScore] = [s, score];
    let next = Infinity;
    while (entering < marks.length && marks[entering]!.word - width + 1 <= s) entering++;
    while (leaving < marks.length && marks[leaving]!.word + 1 <= s) leaving++;
    if (entering < marks.length) next = marks[entering]!.word - width + 1;
    if (leaving < marks.length) next = Math.min(next, marks[leaving]!.word + 1);
    s = next;
  }
  // Centre what the window matched, so a match is not its first or last word.
  let first = -1;
  let last = -1;
  for (const m of marks) {
    if (m.word < start) continue;
    if (m.word >= start + width) break;
    if (first === -1) first = m.word;
    last = m.word;
  }
  if (first !== -1) start = Math.max(0, Math.min(n - width, first - Math.floor((width - (last - first + 1)) / 2)));
  const openedAt = (word: number) => marks.some((m) => m.word === word && m.opened);
  let text = width === 0 ? "" : marked.slice(starts[start], ends[start + width - 1]).replace(SPACES, " ");
  if (start < n && openedAt(start)) text = MARK_OPEN + text;
  if (start + width < n ? openedAt(start + width) : open) text += MARK_CLOSE;
  if (start > 0) text = `…${text}`;
  if (start + width < n) text += "…";
  return text.replaceAll(MARK_OPEN, SNIPPET_MARK.open).replaceAll(MARK_CLOSE, SNIPPET_MARK.close);
}

/** A word of markedSnippet's chunk that a mark touches. */
interface MarkedWord {
  word: number;
  /** A mark is open where the word starts. */
  opened: boolean;
  /** The terms whose mark closes in the word. */
  closed: string[];
  /** The marks the word opens. */
  hits: number;
}

/** Each word's first character and one past its last, reused from call to call up to KEPT_WORDS words. */
let starts = new Int32Array(4096);
let ends = new Int32Array(4096);
const KEPT_WORDS = 65_536;

const OPEN_CODE = MARK_OPEN.charCodeAt(0);
const CLOSE_CODE = MARK_CLOSE.charCodeAt(0);
const SPACES = /\s+/g;

/** A marked term as one lower-cased string, its words one space apart (marks inside dropped). */
function termText(marked: string, from: number, to: number): string {
  const raw = marked.slice(from, to);
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === OPEN_CODE || c === CLOSE_CODE || isSpace(c)) return raw.replace(SPACES, " ").replaceAll(MARK_OPEN, "").replaceAll(MARK_CLOSE, "").toLowerCase();
  }
  return raw.toLowerCase();
}

/** What /\s/ matches: ASCII and Unicode white space, line terminators and U+FEFF. */
function isSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 160) return false;
  return (
    c === 160 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
  );
}

const NONE: string[] = [];

/** A letter, digit or mark: what `searchable` (pg-lexicon.ts) keeps of a text, its words. */
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
/**
 * A word the parser may read as more than one token: a number run into letters ("9e9the" is a
 * number and a word). A word of letters, or letters then digits, is always one.
 */
const MAYBE_SPLIT = /^\p{N}+[^\p{N}]/u;
/** Words that begin with digits and go on with something else (a candidate for MAYBE_SPLIT). */
const DIGITS_THEN_MORE = /(?<![\p{L}\p{N}\p{M}])\p{N}+[\p{L}\p{M}][\p{L}\p{N}\p{M}]*/gu;

/** The words of `text` whose token count markPositions must be told (lower-cased, NFC). */
export function wordsMaybeSplit(text: string): string[] {
  const out: string[] = [];
  for (const [word] of text.matchAll(DIGITS_THEN_MORE)) out.push(word.normalize("NFC").toLowerCase());
  return out;
}

/** Whether the character at `i` of `text` (a UTF-16 code unit, or a pair's first) is a word's; its length in `text` when so, else 0. */
function wordChar(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) ? 1 : 0;
  const cp = text.codePointAt(i)!;
  const len = cp > 0xffff ? 2 : 1;
  return WORD_CHAR.test(text.slice(i, i + len)) ? len : 0;
}

/**
 * `text` with its words at `positions` marked: a position counts the text's tokens from 1, as
 * to_tsvector numbers those of the text it indexed (its runs of letters, digits and marks, each
 * one word, which `tokens` says the parser reads as that many tokens when MAYBE_SPLIT holds of
 * it; one when it does not say). Postgres' snippets: its chunk's tsvector gives where the
 * query's lexemes stand.
 */
export function markPositions(text: string, positions: Iterable<number>, tokens?: (word: string) => number | undefined): string {
  const at = new Set(positions);
  if (at.size === 0) return text;
  let out = "";
  let from = 0;
  let n = 0;
  let left = at.size;
  const length = text.length;
  for (let i = 0; i < length && left > 0; ) {
    let step = wordChar(text, i);
    if (step === 0) {
      i++;
      continue;
    }
    const start = i;
    while (step > 0) {
      i += step;
      step = i < length ? wordChar(text, i) : 0;
    }
    const first = n + 1;
    const c = text.charCodeAt(start);
    if (tokens && ((c >= 48 && c <= 57) || c >= 128)) {
      const word = text.slice(start, i);
      n += MAYBE_SPLIT.test(word) ? (tokens(word.normalize("NFC").toLowerCase()) ?? 1) : 1;
    } else n++;
    let hit = false;
    for (let p = first; p <= n; p++) {
      if (at.has(p)) {
        hit = true;
        left--;
      }
    }
    if (!hit) continue;
    out += `${text.slice(from, start)}${MARK_OPEN}${text.slice(start, i)}${MARK_CLOSE}`;
    from = i;
  }
  return out + text.slice(from);
}
