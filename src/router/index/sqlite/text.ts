// The SQLite index's text side, apart from the store: the FTS5 MATCH expressions of a query's
// words (the filters' are in filters.ts), and what it does with FTS5's highlight() of a
// document — cut back into chunks and the best chunk chosen (snippet.ts cuts the snippet).
import { MARK_CLOSE, MARK_OPEN } from "../snippet.ts";

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
