// The search query language (issue 3, POST /search): words, "quoted phrases", tag:x and
// producer:x. The parser is the only place user text becomes search terms: it keeps nothing
// but words (letters and digits), so no input can make an FTS5 or tsquery syntax error —
// each store then quotes every word again on its own terms.
import { QueryError } from "./errors.ts";
import { STOP_WORDS } from "./stopwords.ts";
import { isProducer, type ParsedQuery, PRODUCERS, type Producer } from "./types.ts";

// The parsed query's type lives with the store interface that takes it (types.ts), so the two
// modules do not import each other; it is exported here too, beside parseQuery().
export type { ParsedQuery };

/** Words past this count are ignored; a search box is not a document. */
export const MAX_QUERY_WORDS = 32;
/** Longer "words" are noise (hashes, base64) and Postgres refuses words over 2047 bytes. */
const MAX_WORD_LENGTH = 100;
const MAX_FILTER_LENGTH = 256;

/** A word: a letter or digit, then letters, digits and combining marks (what FTS5's unicode61 keeps). */
const WORD = /[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu;
const FILTER = /^(tag|producer):/i;
const CONTROL = /[\p{Cc}\p{Cf}]/gu;

/** The words of a text, in order, as the query sees them. */
export function words(text: string): string[] {
  return (text.normalize("NFC").match(WORD) ?? []).filter((w) => w.length <= MAX_WORD_LENGTH);
}

export function parseQuery(input: string): ParsedQuery {
  const terms: string[] = [];
  const phrases: string[][] = [];
  const tags: string[] = [];
  const producers: Producer[] = [];
  let budget = MAX_QUERY_WORDS;
  const take = (ws: string[]) => {
    const kept = ws.slice(0, Math.max(0, budget));
    budget -= kept.length;
    return kept;
  };

  let i = 0;
  while (i < input.length) {
    const ch = input[i] as string;
    if (/\s/u.test(ch)) {
      i++;
      continue;
    }
    if (ch === '"') {
      const [text, next] = readQuoted(input, i);
      i = next;
      const ws = take(words(text));
      if (ws.length === 1) terms.push(ws[0] as string);
      else if (ws.length > 1) phrases.push(ws);
      continue;
    }
    const filter = FILTER.exec(input.slice(i, i + 9));
    if (filter) {
      i += filter[0].length;
      let value: string;
      if (input[i] === '"') [value, i] = readQuoted(input, i);
      else [value, i] = readBare(input, i);
      value = value.replace(CONTROL, "").trim().toLowerCase().slice(0, MAX_FILTER_LENGTH);
      if (!value) continue; // a bare "tag:" asks for nothing
      if ((filter[1] as string).toLowerCase() === "tag") tags.push(value);
      else if (isProducer(value)) producers.push(value);
      else
        throw new QueryError(`unknown producer "${value}": use one of ${PRODUCERS.join(", ")}`, {
          producer: value,
          allowed: PRODUCERS,
        });
      continue;
    }
    const [text, next] = readBare(input, i);
    i = next;
    terms.push(...take(words(text)));
  }
  return { terms: looseTerms(terms), phrases, tags: unique(tags), producers: unique(producers) };
}

/** True when the query asks for text at all (and not only for filters). */
export function hasText(q: ParsedQuery): boolean {
  return q.terms.length > 0 || q.phrases.length > 0;
}

/**
 * The query's match clauses: each one word or one phrase. A store joins them with OR (every
 * word counts) or, for `"match": "all"`, with AND.
 */
export function clauses(q: ParsedQuery): string[][] {
  return [...q.terms.map((t) => [t]), ...q.phrases];
}

/**
 * What each clause (clauses() order) weighs in a hit's coverage: a loose word 1, a phrase its
 * words less stop words (at least 1) — so "the root cause" counts as two words, held together.
 */
export function clauseWeights(q: ParsedQuery): number[] {
  return clauses(q).map((c) => (c.length === 1 ? 1 : Math.max(1, c.filter((w) => !STOP_WORDS.has(w.toLowerCase())).length)));
}

/**
 * A hit's coverage (SearchHit.coverage): the weight of the clauses it holds over the weight of
 * all of them, rounded to 3 decimals. `held[i]` says whether the note holds clause i.
 */
export function queryCoverage(weights: number[], held: ArrayLike<boolean>): number {
  let all = 0;
  let got = 0;
  weights.forEach((w, i) => {
    all += w;
    if (held[i]) got += w;
  });
  return all === 0 ? 0 : Math.round((got / all) * 1000) / 1000;
}

/** Stop words carry no meaning and Postgres never indexes them; keep them only if nothing else is left. */
function looseTerms(terms: string[]): string[] {
  const seen = unique(terms.map((t) => t.toLowerCase()));
  const meaningful = seen.filter((t) => !STOP_WORDS.has(t));
  return meaningful.length > 0 ? meaningful : seen;
}

function readQuoted(input: string, start: number): [string, number] {
  const end = input.indexOf('"', start + 1);
  return end === -1 ? [input.slice(start + 1), input.length] : [input.slice(start + 1, end), end + 1];
}

function readBare(input: string, start: number): [string, number] {
  let end = start;
  while (end < input.length && !/\s/u.test(input[end] as string) && input[end] !== '"') end++;
  return [input.slice(start, end), end];
}

function unique<T>(xs: T[]): T[] {
  return [...new Set(xs)];
}
