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
export const NOT_ASCII = /[^\x20-\x7e]/;
/** A text outside ASCII. */
const NOT_ASCII_TEXT = /[\u0080-\uffff]/;

/**
 * What Postgres tokenizes: words only, as FTS5's unicode61 sees them. Its own parser would keep
 * "v1.2", "a.b.com" or "/usr/bin" whole, so the word "usr" would find nothing there.
 */
export function searchable(text: string): string {
  return text.normalize("NFC").replace(/[^\p{L}\p{N}\p{M}]+/gu, " ");
}

/** A lexeme (ASCII: one byte a character, as a binary tsvector holds it), and its positions in the text being lexed (that text's `gen`). */
interface Lexeme {
  lexeme: string;
  gen: number;
  at: number[];
  /** tsvectorBinary's scratch: the join (its `mark`) that met it, its first positions and their offset, any later ones. */
  mark: number;
  first: number[];
  base: number;
  more: number[] | null;
  /** Its place among its lexicon's lexemes in tsvector order (see LexemeOrder), and that order. */
  rank: number;
  order: LexemeOrder;
  /** Its salient entries ("t:" and "s:" the lexeme), and salientOf's scratch: the document that met it, its count there. */
  t: string;
  s: string;
  seen: number;
  count: number;
}

/** A word's lexeme, null for a stop word (which takes a position), false when not one token. */
type Entry = Lexeme | null | false;

/**
 * A lexed text: its lexemes in the order first met, each one's positions (ascending), every
 * position weighted `weight`.
 */
export interface Lexed {
  lexemes: Lexeme[];
  at: number[][];
  weight: "A" | "B";
  /** The last position holding a lexeme (tsvector_concat shifts what follows by it); 0 when none. */
  maxPos: number;
}

/** `lexed`'s tsvector literal. */
export function literalOf(lexed: Lexed): string {
  const { lexemes, at, weight } = lexed;
  const parts = new Array<string>(lexemes.length);
  const sep = `${weight},`;
  for (let i = 0; i < lexemes.length; i++) parts[i] = `'${lexemes[i]!.lexeme.replace(/['\\]/g, "\\$&")}':${at[i]!.join(sep)}${weight}`;
  return parts.join(" ");
}

/**
 * Words to their entries, in an open-addressed table a word can be looked up in where it stands
 * in a text (by its hash and its characters), without a string of its own.
 */
class WordTable {
  private keys: string[] = [];
  private values: Entry[] = [];
  /** Grown as words are learned: an index that is only searched holds next to none. */
  private slots = new Int32Array(1 << 10).fill(-1);
  size = 0;

  /** The hash find() takes: the one lex() computes as it reads a word. */
  static hash(s: string, start: number, end: number): number {
    let h = 0;
    for (let i = start; i < end; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
    return h;
  }

  /** The entry of the word s[start, end) whose hash is h; undefined when not known. */
  find(s: string, start: number, end: number, h: number): Entry | undefined {
    const k = this.index(s, start, end, h);
    return k < 0 ? undefined : this.values[k];
  }

  get(word: string): Entry | undefined {
    return this.find(word, 0, word.length, WordTable.hash(word, 0, word.length));
  }

  has(word: string): boolean {
    return this.get(word) !== undefined;
  }

  set(word: string, entry: Entry): void {
    const h = WordTable.hash(word, 0, word.length);
    const k = this.index(word, 0, word.length, h);
    if (k >= 0) {
      this.values[k] = entry;
      return;
    }
    if ((this.size + 1) * 2 > this.slots.length) this.grow();
    this.place(h, this.keys.length);
    this.keys.push(word);
    this.values.push(entry);
    this.size++;
  }

  /** The word's index in keys, or -1. */
  private index(s: string, start: number, end: number, h: number): number {
    const { slots, keys } = this;
    const mask = slots.length - 1;
    const len = end - start;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const k = slots[i]!;
      if (k < 0) return -1;
      const key = keys[k]!;
      if (key.length !== len) continue;
      let j = 0;
      while (j < len && key.charCodeAt(j) === s.charCodeAt(start + j)) j++;
      if (j === len) return k;
    }
  }

  private place(h: number, k: number): void {
    const mask = this.slots.length - 1;
    let i = h & mask;
    while (this.slots[i]! >= 0) i = (i + 1) & mask;
    this.slots[i] = k;
  }

  private grow(): void {
    this.slots = new Int32Array(this.slots.length * 2).fill(-1);
    for (const [k, key] of this.keys.entries()) this.place(WordTable.hash(key, 0, key.length), k);
  }
}

export class PgLexicon {
  private words = new WordTable();
  /** One entry per lexeme, shared by the words that stem to it (lex() groups positions by entry). */
  private lexemes = new Map<string, Lexeme>();
  private order = new LexemeOrder();
  /** How many tokens the parser makes of a known word that is not one (see tokens()). */
  private parts = new Map<string, number>();
  /** Counts lex() calls: a lexeme met in the current one has this `gen`. */
  private gen = 0;

  /**
   * `text`'s words (searchable()) as to_tsvector('english') would make them, every position
   * weighted `weight`; undefined when this cannot be told without the server, and then the
   * words not yet known are added to `unknown` (for learn()).
   */
  lex(text: string, weight: "A" | "B", unknown?: Set<string>): Lexed | undefined {
    let lower: string;
    if (!NOT_ASCII_TEXT.test(text)) lower = text.toLowerCase();
    else {
      lower = searchable(text);
      if (NOT_ASCII.test(lower)) return undefined;
      lower = lower.toLowerCase();
    }
    // The words are the runs of letters and digits (all that searchable() leaves, and in ASCII
    // nothing else is a letter or a digit), each looked up where it stands: no string is made
    // of a known word. The lexemes met in this text each hold its positions (kept by the
    // result: the next text gets new arrays).
    const gen = ++this.gen;
    const met: Lexeme[] = [];
    const words = this.words;
    let pos = 0;
    let maxPos = 0;
    let missing = false;
    let start = -1;
    let h = 0;
    const n = lower.length;
    for (let i = 0; i <= n; i++) {
      const c = i < n ? lower.charCodeAt(i) : 32;
      if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
        if (start < 0) {
          start = i;
          h = 0;
        }
        h = (Math.imul(h, 31) + c) | 0;
        continue;
      }
      if (start < 0) continue;
      const entry = words.find(lower, start, i, h);
      if (entry === undefined) {
        if (i - start >= MAX_WORD_BYTES) return undefined;
        missing = true;
        unknown?.add(lower.slice(start, i));
        start = -1;
        continue;
      }
      start = -1;
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
    const at = new Array<number[]>(met.length);
    for (let i = 0; i < met.length; i++) at[i] = met[i]!.at;
    return { lexemes: met, at, weight, maxPos };
  }

  /** Learns `words` (lower-cased, from lex()) from the server, in one query. */
  async learn(sql: Sql | TransactionSql, words: Set<string>): Promise<void> {
    if (words.size === 0) return;
    if (this.words.size + words.size > LEXICON_WORDS) {
      this.words = new WordTable();
      this.lexemes = new Map();
      this.order = new LexemeOrder();
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
      // A lexeme outside ASCII (none of an ASCII word's, as Postgres' stemmers go) is left to the server.
      const [lexeme] = lexemes;
      this.words.set(
        list[i]!,
        row.tokens !== 1 || lexemes.length > 1 || NOT_ASCII.test(lexeme ?? "") ? false : lexeme === undefined ? null : this.entry(lexeme),
      );
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
      e = {
        lexeme,
        rank: 0,
        order: this.order,
        gen: 0,
        at: [],
        mark: 0,
        first: [],
        base: 0,
        more: null,
        t: `t:${lexeme}`,
        s: `s:${lexeme}`,
        seen: 0,
        count: 0,
      };
      this.lexemes.set(lexeme, e);
      this.order.added.push(e);
    }
    return e;
  }
}

/**
 * A lexicon's lexemes in the order a tsvector holds them (tsCompareString: by their bytes, a
 * prefix first; ASCII, so as JavaScript compares strings), each one's rank its place: a
 * tsvector's entries are then sorted by number. Lexemes learned since are merged in when a
 * tsvector next needs the ranks.
 */
class LexemeOrder {
  private sorted: Lexeme[] = [];
  added: Lexeme[] = [];

  settle(): void {
    if (this.added.length === 0) return;
    const added = this.added.sort((a, b) => (a.lexeme < b.lexeme ? -1 : 1));
    this.added = [];
    const old = this.sorted;
    const out = new Array<Lexeme>(old.length + added.length);
    let i = 0;
    let j = 0;
    for (let k = 0; k < out.length; k++) {
      const e = j >= added.length || (i < old.length && old[i]!.lexeme < added[j]!.lexeme) ? old[i++]! : added[j++]!;
      e.rank = k;
      out[k] = e;
    }
    this.sorted = out;
  }
}

/** Counts salientOf() calls: a lexeme met in the current one has this `seen`. */
let salients = 0;

/**
 * salient_lexemes() (migration 0005) of a document lexed here: "t:" and each title lexeme, then
 * "s:" and each lexeme held strongly (in the title, or at least twice over the body's chunks);
 * a set (the salient index reads it by containment), in no particular order. Undefined when the
 * chunks' joined positions would pass the tsvector's last one, where Postgres merges them: it
 * computes it then.
 */
export function salientOf(title: Lexed, chunks: Lexed[]): string[] | undefined {
  let end = 0;
  for (const c of chunks) end += c.maxPos;
  if (end > MAX_POSITION) return undefined;
  const seen = ++salients;
  const out: string[] = [];
  for (const e of title.lexemes) out.push(e.t);
  for (const e of title.lexemes) {
    e.seen = seen;
    e.count = 2;
    out.push(e.s);
  }
  for (const { lexemes, at } of chunks)
    for (let i = 0; i < lexemes.length; i++) {
      const e = lexemes[i]!;
      if (e.seen !== seen) {
        e.seen = seen;
        e.count = 0;
      }
      if (e.count >= 2) continue;
      e.count += at[i]!.length;
      if (e.count >= 2) out.push(e.s);
    }
  return out;
}

/** A tsvector position's weight bits (WEP_SETWEIGHT): A 3, B 2. */
const WEIGHT_BITS = { A: 3 << 14, B: 2 << 14 } as const;
/** tsvector_concat keeps at most this many positions of one lexeme (MAXNUMPOS). */
const MAX_CONCAT_POSITIONS = 256;

/** Counts tsvectorBinary() calls: a lexeme met in the current one has this `mark`. */
let joins = 0;

/**
 * Writes the tsvector of `parts` joined as tsvector_concat joins them (each part's positions
 * shifted by the last position before it, a lexeme's positions in order) as a COPY field in
 * tsvector's binary form (tsvectorrecv): the entry count, then per lexeme its bytes, a NUL, its
 * position count and each position with its weight, as uint16. The entries go sorted: tsvectorrecv
 * checks their order as it reads them, and sorts them when they are not. False, and nothing written, where tsvector_concat would drop
 * positions (past the last position a tsvector keeps, or past MAX_CONCAT_POSITIONS of one
 * lexeme): Postgres joins those itself.
 */
export function tsvectorBinary(parts: Lexed[], out: BinaryWriter): boolean {
  let end = 0;
  for (const p of parts) end += p.maxPos;
  if (end >= MAX_POSITION) return false;
  const mark = ++joins;
  const keys: Lexeme[] = [];
  let bytes = 4;
  let shift = 0;
  for (const { lexemes, at, weight, maxPos } of parts) {
    // Weight bits above, the position below (which stays under 2^14): one sum.
    const base = WEIGHT_BITS[weight] + shift;
    for (let i = 0; i < lexemes.length; i++) {
      const e = lexemes[i]!;
      const positions = at[i]!;
      bytes += 2 * positions.length;
      if (e.mark !== mark) {
        e.mark = mark;
        e.first = positions;
        e.base = base;
        e.more = null;
        keys.push(e);
        bytes += e.lexeme.length + 3;
        continue;
      }
      const more = e.more ?? [];
      e.more = more;
      if (e.first.length + more.length + positions.length > MAX_CONCAT_POSITIONS) return false;
      for (let j = 0; j < positions.length; j++) more.push(base + positions[j]!);
    }
    shift += maxPos;
  }
  sortByRank(keys);
  out.need(bytes + 4);
  const buf = out.buf;
  let o = out.at;
  buf.writeInt32BE(bytes, o);
  buf.writeInt32BE(keys.length, o + 4);
  o += 8;
  for (const e of keys) {
    const l = e.lexeme;
    for (let j = 0; j < l.length; j++) buf[o++] = l.charCodeAt(j);
    buf[o++] = 0;
    const { first, base, more } = e;
    const n = first.length + (more ? more.length : 0);
    buf[o++] = n >> 8;
    buf[o++] = n & 0xff;
    for (let j = 0; j < first.length; j++) {
      const x = base + first[j]!;
      buf[o++] = x >> 8;
      buf[o++] = x & 0xff;
    }
    if (more)
      for (let j = 0; j < more.length; j++) {
        const x = more[j]!;
        buf[o++] = x >> 8;
        buf[o++] = x & 0xff;
      }
  }
  out.at = o;
  return true;
}

/** sortByRank's scratch: each key's rank and index, as one number. */
let rankKeys = new Float64Array(1024);

/** `keys` (of one lexicon: one document's) in tsvector order, by their ranks. */
function sortByRank(keys: Lexeme[]): void {
  const n = keys.length;
  if (n < 2) return;
  keys[0]!.order.settle();
  if (rankKeys.length < n) rankKeys = new Float64Array(n * 2);
  // An index stays under 2^14 (a tsvector that keeps all its positions holds fewer lexemes).
  const scratch = rankKeys.subarray(0, n);
  for (let i = 0; i < n; i++) scratch[i] = keys[i]!.rank * 16_384 + i;
  scratch.sort();
  const copy = keys.slice();
  for (let i = 0; i < n; i++) keys[i] = copy[scratch[i]! % 16_384]!;
}

/** A growing buffer of COPY's binary format, big-endian. */
export class BinaryWriter {
  buf = Buffer.allocUnsafe(1 << 16);
  at = 0;

  /** Room for `n` more bytes. */
  need(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }

  uint8(x: number): void {
    this.need(1);
    this.buf[this.at++] = x;
  }

  uint16(x: number): void {
    this.need(2);
    this.buf.writeUInt16BE(x, this.at);
    this.at += 2;
  }

  int16(x: number): void {
    this.need(2);
    this.buf.writeInt16BE(x, this.at);
    this.at += 2;
  }

  int32(x: number): void {
    this.need(4);
    this.buf.writeInt32BE(x, this.at);
    this.at += 4;
  }

  int64(x: bigint): void {
    this.need(8);
    this.buf.writeBigInt64BE(x, this.at);
    this.at += 8;
  }

  float64(x: number): void {
    this.need(8);
    this.buf.writeDoubleBE(x, this.at);
    this.at += 8;
  }

  bytes(b: Uint8Array): void {
    this.need(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }

  /** A text field: its length, then its UTF-8 bytes. */
  text(s: string): void {
    this.need(4 + s.length * 3);
    const n = this.buf.write(s, this.at + 4, "utf8");
    this.buf.writeInt32BE(n, this.at);
    this.at += 4 + n;
  }

  /** A text[] field (array_recv): one dimension, no NULLs, element type text (oid 25); none: no dimension. */
  textArray(items: string[]): void {
    const start = this.at;
    this.int32(0); // the field's length, written below
    this.int32(items.length === 0 ? 0 : 1);
    this.int32(0);
    this.int32(25);
    if (items.length > 0) {
      this.int32(items.length);
      this.int32(1);
      for (const s of items) this.text(s);
    }
    this.buf.writeInt32BE(this.at - start - 4, start);
  }

  /** The bytes written so far (until the next write or reset()). */
  written(): Buffer {
    return this.buf.subarray(0, this.at);
  }

  /** Empty again, keeping its buffer. */
  reset(): void {
    this.at = 0;
  }
}
