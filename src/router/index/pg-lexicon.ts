// Postgres' `english` text search configuration applied in the router, so a build sends each
// text's tsvector as a literal (cheap for Postgres to read) instead of the text for
// to_tsvector, whose parser is most of a write's cost on the server. Exact by construction: a
// word's lexeme is learned from the server itself (to_tsvector of the word alone, once, then
// kept), and only texts where that is provably the same as parsing them whole are lexed here
// — ASCII after `searchable` (words and spaces), each word one parser token, within
// to_tsvector's position limits. Anything else returns undefined: the caller lets Postgres
// parse that document.
import type { Sql, TransactionSql } from "postgres";

/** to_tsvector skips a word this long (with a notice) without giving it a position. */
const MAX_WORD_BYTES = 2047;
/** The last position a tsvector stores (MAXENTRYPOS - 1); past it positions collapse. */
const MAX_POSITION = 16_383;
/** to_tsvector keeps at most this many positions of one lexeme (MAXNUMPOS - 1). */
const MAX_POSITIONS_PER_LEXEME = 255;
/** Words kept, at most; past it the lexicon starts over (a build's vocabulary is mostly Zipfian). */
const LEXICON_WORDS = 100_000;
/** What `searchable` leaves of an ASCII text: printable characters (words and spaces). */
const NOT_ASCII = /[^\x20-\x7e]/;

/** A lexeme, its quoted literal, and its positions in the text being lexed (that text's `gen`). */
interface Lexeme {
  lexeme: string;
  quoted: string;
  gen: number;
  at: number[];
}

/** A word's lexeme, null for a stop word (which takes a position), false when not one token. */
type Entry = Lexeme | null | false;

/** A lexed text: its tsvector literal, and how often each lexeme stands in it (for the document's salient lexemes). */
export interface Lexed {
  literal: string;
  lexemes: { lexeme: string; n: number }[];
  /** The last position holding a lexeme (tsvector_concat shifts what follows by it); 0 when none. */
  maxPos: number;
}

export class PgLexicon {
  private words = new Map<string, Entry>();
  /** One entry per lexeme, shared by the words that stem to it (lex() groups positions by entry). */
  private lexemes = new Map<string, Lexeme>();
  /** How many tokens the parser makes of a known word that is not one (see tokens()). */
  private parts = new Map<string, number>();
  /** Counts lex() calls: a lexeme met in the current one has this `gen`. */
  private gen = 0;

  /**
   * `text` (searchable: words and spaces) as to_tsvector('english') would make it, every
   * position weighted `weight`; undefined when this cannot be told without the server, and
   * then the words not yet known are added to `unknown` (for learn()).
   */
  lex(text: string, weight: "A" | "B", unknown?: Set<string>): Lexed | undefined {
    if (NOT_ASCII.test(text)) return undefined;
    // The lexemes met in this text, each holding its positions until the literal is written.
    const gen = ++this.gen;
    const met: Lexeme[] = [];
    let pos = 0;
    let maxPos = 0;
    let missing = false;
    for (const word of text.toLowerCase().split(" ")) {
      if (!word) continue;
      const entry = this.words.get(word);
      if (entry === undefined) {
        if (word.length >= MAX_WORD_BYTES) return undefined;
        missing = true;
        unknown?.add(word);
        continue;
      }
      if (entry === false) return undefined;
      pos++;
      if (entry === null || missing) continue;
      if (entry.gen !== gen) {
        entry.gen = gen;
        entry.at = [pos];
        met.push(entry);
      } else if (entry.at.push(pos) > MAX_POSITIONS_PER_LEXEME) return undefined;
      maxPos = pos;
    }
    if (missing || pos > MAX_POSITION) return undefined;
    const parts = new Array<string>(met.length);
    const lexemes = new Array<{ lexeme: string; n: number }>(met.length);
    const sep = `${weight},`;
    for (let i = 0; i < met.length; i++) {
      const e = met[i]!;
      parts[i] = `${e.quoted}:${e.at.join(sep)}${weight}`;
      lexemes[i] = { lexeme: e.lexeme, n: e.at.length };
    }
    return { literal: parts.join(" "), lexemes, maxPos };
  }

  /** Learns `words` (lower-cased, from lex()) from the server, in one query. */
  async learn(sql: Sql | TransactionSql, words: Set<string>): Promise<void> {
    if (words.size === 0) return;
    if (this.words.size + words.size > LEXICON_WORDS) {
      this.words = new Map();
      this.lexemes = new Map();
      this.parts = new Map();
    }
    const list = [...words];
    // A word is one token when the parser finds one non-blank token in it (blank is token type 12).
    const rows = await sql<{ tokens: number; lexemes: string[] | null }[]>`
      SELECT (SELECT count(*)::int FROM ts_parse('default', w) WHERE tokid <> 12) AS tokens,
             (SELECT array_agg(lexeme) FROM unnest(to_tsvector('english', w))) AS lexemes
        FROM unnest(${list}::text[]) WITH ORDINALITY AS u(w, i) ORDER BY i`;
    for (const [i, row] of rows.entries()) {
      const lexemes = row.lexemes ?? [];
      if (row.tokens !== 1) this.parts.set(list[i]!, row.tokens);
      this.words.set(list[i]!, row.tokens !== 1 || lexemes.length > 1 ? false : lexemes[0] === undefined ? null : this.entry(lexemes[0]));
    }
  }

  /**
   * The positions to_tsvector gives `word` (lower-cased, one of searchable's words): one for a
   * word the parser reads as one token (a stop word too), one per token otherwise; undefined
   * until the word is learned.
   */
  tokens(word: string): number | undefined {
    if (!this.words.has(word)) return undefined;
    return this.parts.get(word) ?? 1;
  }

  private entry(lexeme: string): Lexeme {
    let e = this.lexemes.get(lexeme);
    if (!e) {
      e = { lexeme, quoted: `'${lexeme.replace(/['\\]/g, "\\$&")}'`, gen: 0, at: [] };
      this.lexemes.set(lexeme, e);
    }
    return e;
  }
}

/**
 * salient_lexemes() (migration 0005) of a document lexed here: "t:" and each title lexeme, then
 * "s:" and each lexeme held strongly (in the title, or at least twice over the body's chunks),
 * each list in tsvector order; as one space-separated string (lexemes hold no spaces). Undefined
 * when the chunks' joined positions would pass the tsvector's last one, where Postgres merges
 * them: it computes it then.
 */
export function salientOf(title: Lexed, chunks: Lexed[]): string | undefined {
  let end = 0;
  for (const c of chunks) end += c.maxPos;
  if (end > MAX_POSITION) return undefined;
  const t = title.lexemes.map((l) => l.lexeme);
  const strong = new Set(t);
  if (chunks.length === 1) {
    for (const { lexeme, n } of chunks[0]!.lexemes) if (n >= 2) strong.add(lexeme);
  } else {
    const counts = new Map<string, number>();
    for (const c of chunks) for (const { lexeme, n } of c.lexemes) counts.set(lexeme, (counts.get(lexeme) ?? 0) + n);
    for (const [lexeme, n] of counts) if (n >= 2) strong.add(lexeme);
  }
  // Lexemes lexed here are ASCII: the default sort (by code unit) is tsvector's bytewise order.
  t.sort();
  const s = [...strong].sort();
  let out = "";
  for (const l of t) out += out ? ` t:${l}` : `t:${l}`;
  for (const l of s) out += out ? ` s:${l}` : `s:${l}`;
  return out;
}
