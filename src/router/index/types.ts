// The search index's vocabulary: what is indexed, what a search returns, and the one
// interface both stores (sqlite/store.ts, postgres.ts) implement. Chosen once at start-up.
import type { DocLink } from "./links.ts";

/** Who wrote a document into the vault; spec: pipeline "index" stage counts rows per producer. */
export const PRODUCERS = ["raw", "ingest", "lessons", "arcs", "signals", "feed", "markers"] as const;
export type Producer = (typeof PRODUCERS)[number];

export function isProducer(value: string): value is Producer {
  return (PRODUCERS as readonly string[]).includes(value);
}

/** One document as the index sees it. `path` (vault-relative, forward slashes) is its id. */
export interface IndexDoc {
  path: string;
  producer: Producer;
  title: string;
  /** The text to index, frontmatter removed. */
  body: string;
  tags: string[];
  updatedAt: Date;
  /** sha256 (hex) of the file's content; an unchanged hash makes upsert a no-op. */
  hash: string;
  /** The file's mtime, for refresh's cheap "did it change?" test; defaults to updatedAt. */
  mtimeMs?: number;
}

/**
 * One search result. Both stores return one hit per document (its best chunk): a search UI
 * wants documents, and ten chunks of one long note would crowd out everything else.
 */
export interface SearchHit {
  /** `path#chunk`: stable while the document's text (and so its chunking) is unchanged. */
  id: string;
  path: string;
  producer: Producer;
  title: string;
  /** A passage of the best chunk with the matched terms wrapped in SNIPPET_MARK. */
  snippet: string;
  /**
   * Higher is better. A store answers its own ranking score (comparable within one result
   * list, not across stores or modes); search() turns it into 0–1 relative to the best hit.
   */
  score: number;
  /**
   * 0–1: the share of the query's content words the note holds (queryCoverage()); a phrase's
   * words count only where they stand together. 0 for hits found without words (filters, vectors).
   */
  coverage: number;
  tags: string[];
  updated_at: string;
}

/** How snippets mark matched terms, in both stores. Everything else in a snippet is plain text. */
export const SNIPPET_MARK = { open: "<mark>", close: "</mark>" } as const;

/** Filters that apply to full-text and vector search alike; a ParsedQuery is one. */
export interface SearchFilters {
  /** A document must carry every one of these tags (case-insensitive). */
  tags: string[];
  /** A document must come from one of these producers; empty = any. */
  producers: Producer[];
}

/** A search box's text, parsed (parseQuery() in query.ts): what a store's search() runs. */
export interface ParsedQuery extends SearchFilters {
  /** Loose words: each one counts (MatchMode "any"), or each is required ("all"). */
  terms: string[];
  /** Each phrase's words must appear together, in order. */
  phrases: string[][];
}

/**
 * How a query's words combine. "any" (the default): a note matches when it holds any word or
 * phrase, and notes holding more of them, closer together, rank higher. "all": a note must hold
 * every word and phrase (AND), nothing else is answered.
 */
export type MatchMode = "any" | "all";
export const MATCH_MODES: readonly MatchMode[] = ["any", "all"];

export interface SearchOptions {
  /** Default true; false leaves snippets empty and ids at chunk 0 (see IndexStore.search). */
  snippets?: boolean;
  /** Default "any" (see MatchMode). */
  match?: MatchMode;
}

export type HitSnippet = Pick<SearchHit, "id" | "snippet">;

export interface Fingerprint {
  hash: string;
  mtimeMs: number;
}

export interface UpsertOptions {
  /** One vector per chunk, in chunkDocument() order. */
  embeddings?: number[][];
  /**
   * Alternative to `embeddings`: called with embeddingInputs(doc) only when the document
   * changed, so an unchanged file costs no embedding call.
   */
  embed?: (texts: string[]) => Promise<number[][]>;
}

/** An indexed document without its text: what note listings and link resolution need. */
export interface NoteMeta {
  path: string;
  producer: Producer;
  title: string;
  tags: string[];
  updatedAt: Date;
  /** sha256 (hex) of the file's content when it was indexed. */
  hash: string;
}

/** A stored link and the document holding it. */
export interface StoredLink extends DocLink {
  source: string;
}

/** GET /notes: documents changed since a time, newest first (updated_at, then path), a page at a time. */
export interface RecentQuery {
  since?: Date;
  producer?: Producer;
  /** Case-insensitive. */
  tag?: string;
  /** Path prefix, e.g. "raw/runbooks/". */
  prefix?: string;
  limit: number;
  /** Resume after this document (the last of the previous page). */
  after?: { updatedAt: Date; path: string };
}

/** Links the index holds, and those whose target no indexed note carries the name of. */
export interface LinkCounts {
  links: number;
  dangling: number;
  /** A few dangling links, for the pipeline report's evidence. */
  examples: Array<{ source: string; target: string }>;
}

/** The SQLite index's first pass (champion lists): built off the request path, in it, or none. */
export const FIRST_PASS_MODES = ["background", "inline", "off"] as const;
export type FirstPass = (typeof FIRST_PASS_MODES)[number];

export interface IndexStore {
  readonly kind: "sqlite" | "postgres";
  /** The configured embedding dimension; undefined = no vectors. */
  readonly embeddingDim: number | undefined;
  /** True when vectors are configured and vectorSearch() can run. */
  readonly hasVectors: boolean;
  /** Creates or upgrades the schema; idempotent (the factories call it at start-up). */
  migrate(): Promise<void>;
  /** Chunks and (re)writes the document's rows. Returns false when nothing changed. */
  upsert(doc: IndexDoc, opts?: UpsertOptions): Promise<boolean>;
  /**
   * Many documents at once, as upsert() would write them one by one (the same return per
   * document): SQLite's group commit makes them one transaction; Postgres writes them with
   * one statement per table in one transaction. refreshFolder writes its batches with it.
   */
  upsertMany(docs: IndexDoc[], opts?: Pick<UpsertOptions, "embed">): Promise<boolean[]>;
  /** A first build's writes (refreshFolder on an empty index); a store may defer work to its end (SQLite: three b-trees). */
  bulkLoad<T>(load: () => Promise<T>): Promise<T>;
  /** Returns true when the path was indexed. */
  remove(path: string): Promise<boolean>;
  /**
   * BM25 / full-text search, one hit per document, best first. `snippets: false` skips the
   * costly part (each hit's best chunk and marked snippet: id `path#0`, snippet ""), for
   * callers that only need the ranking, such as hybrid fusion, which then asks snippets()
   * for the few hits it keeps.
   */
  search(query: ParsedQuery, limit: number, opts?: SearchOptions): Promise<SearchHit[]>;
  /**
   * The `id` (best chunk) and marked `snippet` that search() gives each of these documents
   * for this query; a document that no longer matches is left out.
   */
  snippets(query: ParsedQuery, paths: string[]): Promise<Map<string, HitSnippet>>;
  /** Nearest chunks by cosine similarity, one hit per document, nearest first. */
  vectorSearch(vector: number[], limit: number, filters?: Partial<SearchFilters>): Promise<SearchHit[]>;
  /** path → {hash, mtimeMs} of every document of one producer, for incremental refresh. */
  fingerprints(producer: Producer): Promise<Map<string, Fingerprint>>;
  /**
   * The same a page at a time, for a refresh that streams: at most `limit` documents of
   * `producer` whose path sorts after `after` ("" for the first page), in path order by UTF-8
   * bytes (comparePaths' order, so a sorted walk can be compared with it as both stream).
   */
  fingerprintsAfter(producer: Producer, after: string, limit: number): Promise<Array<Fingerprint & { path: string }>>;
  /** These documents' metadata (paths not indexed are left out), in no particular order. */
  notes(paths: string[]): Promise<NoteMeta[]>;
  /** Documents whose noteName() is one of `names` (link resolution's candidates). */
  notesNamed(names: string[]): Promise<NoteMeta[]>;
  /** The stored links of these documents. */
  linksFrom(paths: string[]): Promise<StoredLink[]>;
  /** Every stored link whose target's name is one of `names` (backlink candidates). */
  linksNamed(names: string[]): Promise<StoredLink[]>;
  /** Documents changed since a time, newest first (see RecentQuery). */
  recent(query: RecentQuery): Promise<NoteMeta[]>;
  /** Indexed paths starting with `prefix`, in path order, at most `limit`. */
  pathsUnder(prefix: string, limit: number): Promise<string[]>;
  /** Link totals for the pipeline report. */
  linkCounts(): Promise<LinkCounts>;
  /** Documents per producer; every producer is present (0 when none). */
  countByProducer(): Promise<Record<Producer, number>>;
  /** Whether the index holds any document of `producer` (without counting them all). */
  holdsProducer(producer: Producer): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * What a store that answers writes before it commits them (SQLite's held commits) offers the
 * router beyond IndexStore; heldCommits() finds it. Postgres commits before it answers: none.
 */
export interface HeldCommits {
  /**
   * The last process that held this index for writing stopped without closing it (killed, or
   * it crashed): rows of notes whose files were written may be missing. The router catches up
   * from the vault's files before it serves.
   */
  readonly stoppedUnclean: boolean;
  /** Commits the writes the store answered before committing. */
  settle(): void;
  /**
   * `listener` is told the vault paths whose answered writes a failed commit (a full disk)
   * lost from the index; the router indexes them again from their files.
   */
  onLostWrites(listener: (paths: string[]) => void): void;
}

/** The store's held commits, when it answers writes before it commits them. */
export function heldCommits(store: IndexStore): HeldCommits | undefined {
  const held = store as IndexStore & Partial<HeldCommits>;
  return typeof held.settle === "function" && typeof held.onLostWrites === "function" ? (held as HeldCommits) : undefined;
}
