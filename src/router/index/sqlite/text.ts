// The SQLite index's text side, apart from the store: the FTS5 MATCH expressions of a query's
// words (the filters' are in filters.ts), and what it does with FTS5's highlight() of a
// document — cut back into chunks, the best chunk chosen, and a snippet cut from it the way
// FTS5's snippet() would.
import { SNIPPET_MARK } from "../types.ts";

/** Tokens of context in a snippet (FTS5 allows at most 64). */
const SNIPPET_TOKENS = 24;
/** highlight()'s marks, private-use characters no note holds (SNIPPET_MARK only in the answer). */
export const MARK_OPEN = "\uE001";
export const MARK_CLOSE = "\uE002";
/** Every word double-quoted (inner quotes doubled): FTS5 then reads it as a string, never as syntax. */
export function ftsExpression(parts: string[][], op: "AND" | "OR"): string {
  return parts.map((words) => `"${words.join(" ").replaceAll('"', '""')}"`).join(` ${op} `);
}

/**
 * A document's highlighted body cut back into its chunks (`lengths`: each chunk's text, in
 * order; the body joins them with "\n\n"). A mark open across a cut is closed and reopened.
 */
export function splitMarked(marked: string, lengths: number[]): string[] {
  if (lengths.length <= 1) return [marked];
  const out: string[] = [];
  let at = 0; // in `marked`
  let open = false;
  let nextOpen = marked.indexOf(MARK_OPEN);
  let nextClose = marked.indexOf(MARK_CLOSE);
  /** Moves `at` past `count` characters of text, and past the marks among them. */
  const advance = (count: number) => {
    for (;;) {
      const mark = Math.min(nextOpen === -1 ? Infinity : nextOpen, nextClose === -1 ? Infinity : nextClose);
      if (mark - at >= count || mark === Infinity) {
        at = Math.min(marked.length, at + count);
        return;
      }
      count -= mark - at;
      open = mark === nextOpen;
      at = mark + 1;
      if (open) nextOpen = marked.indexOf(MARK_OPEN, at);
      else nextClose = marked.indexOf(MARK_CLOSE, at);
    }
  };
  lengths.forEach((length, i) => {
    const start = at;
    const opened = open;
    advance(length);
    // A mark closing right at the chunk's end is the chunk's.
    while (at < marked.length && at === nextClose) {
      open = false;
      at++;
      nextClose = marked.indexOf(MARK_CLOSE, at);
    }
    out.push((opened ? MARK_OPEN : "") + marked.slice(start, at) + (open ? MARK_CLOSE : ""));
    if (i < lengths.length - 1) advance(2); // the "\n\n" between chunks
  });
  return out;
}

/** The chunk holding the most distinct matched words, then the most matches, then the first. */
export function bestChunk(chunks: string[]): { seq: number; marked: string } {
  let best = { seq: 0, marked: chunks[0] ?? "", score: -1 };
  chunks.forEach((marked, seq) => {
    const terms = new Set<string>();
    let count = 0;
    for (let i = marked.indexOf(MARK_OPEN); i !== -1; i = marked.indexOf(MARK_OPEN, i + 1)) {
      const end = marked.indexOf(MARK_CLOSE, i);
      terms.add(marked.slice(i + 1, end === -1 ? undefined : end).toLowerCase());
      count++;
    }
    const score = terms.size * 1_000_000 + count;
    if (score > best.score) best = { seq, marked, score };
  });
  return best;
}

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
