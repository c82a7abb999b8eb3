// The embedded IndexStore: bun:sqlite with FTS5 (BM25, title weighted 10× the body) in one
// WAL-mode file under the data directory. Vectors, when a dimension is configured, live in
// the same file (vectors.ts); the FTS5 expressions and what is done with highlight()ed text, in text.ts.
import { Database, type SQLQueryBindings, type Statement } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { log } from "../../../common/logger";
import { chunkDocument, embeddingInputs } from "../chunk.ts";
import { resolveEmbeddings } from "../embeddings.ts";
import { DimensionMismatchError } from "../errors.ts";
import { hitSnippet, plainSnippet } from "../hit.ts";
import { type DocLink, extractLinks, noteName } from "../links.ts";
import { clauses, hasText, type ParsedQuery } from "../query.ts";
import {
  type Fingerprint,
  type HeldCommits,
  type HitSnippet,
  type IndexDoc,
  type IndexStore,
  type LinkCounts,
  type NoteMeta,
  PRODUCERS,
  type Producer,
  type RecentQuery,
  type SearchFilters,
  type SearchHit,
  type SearchOptions,
  type StoredLink,
  type UpsertOptions,
} from "../types.ts";
import { BackgroundCheckpointer } from "./accelerators/checkpoints/checkpointer.ts";
import { ChampionLists, type ChampionOptions } from "./accelerators/first-pass/champion-lists.ts";
import { HeldWrites } from "./accelerators/held-commits/held-commits.ts";
import { HeldGroupCommit } from "./accelerators/held-commits/held-group-commit.ts";
import { docFilters, filterSql, linkExpression, producerExpression, tagsOf } from "./filters.ts";
import { GroupCommit, type GroupCommitOptions } from "./group-commit.ts";
import { DOC_TOKENIZER, DOC_WEIGHTS, type DocRow, docHit, Ranking } from "./ranking.ts";
import { DEFERRED_INDEXES, SCHEMA } from "./schema.ts";
import { ftsExpression } from "./text.ts";
import { TextRows } from "./text-rows.ts";
import { SqliteVectors } from "./vectors.ts";

export interface SqliteIndexOptions {
  /** The data directory; the index is `index.sqlite` inside it (created if missing). */
  dataDir: string;
  /** Embedding dimension; unset = no vectors. Must match what the file already holds. */
  embeddingDim?: number;
  /** Load sqlite-vec for vector distances (default true); false forces the JS scan. */
  sqliteVec?: boolean;
  /** The searches' first pass (accelerators/first-pass); `{ depth: 0 }` turns it off. */
  champions?: ChampionOptions;
  /**
   * Checkpoint the WAL in a worker thread, off the event loop (accelerators/checkpoints): the
   * router's, whose requests commit one note at a time. Default off (a one-off build or a
   * test has no event loop to spare).
   */
  backgroundCheckpoints?: boolean;
  /**
   * Hold a write transaction open this long for the writes that follow (accelerators/
   * held-commits): a write is answered once this process's searches see it, and committed
   * with the others of its window. Default 0 (each batch commits before it is answered).
   */
  holdCommitMs?: number;
  /**
   * Build the searches' champion lists in a worker thread (ChampionOptions.workerFile): the
   * router's, whose first searches of a common word would otherwise hold every request behind
   * a build. Default off (a build here is what a one-off search or a test wants).
   */
  backgroundListBuilds?: boolean;
}

export const SQLITE_INDEX_FILE = "index.sqlite";

/** The b-trees a first build defers (bulkLoad), created if missing. */
const CREATE_DEFERRED = DEFERRED_INDEXES.map((i) => i.create).join("\n");

type MetaRow = Pick<DocRow, "path" | "producer" | "title" | "tags" | "updated_at" | "hash">;
/** The columns upsert() compares to tell an unchanged document. */
type SameRow = Pick<DocRow, "id" | "producer" | "title" | "tags" | "hash" | "mtime_ms" | "name">;
const META_COLUMNS = "d.path, d.producer, d.title, d.tags, d.updated_at, d.hash";
/** Above every character: `prefix` ≤ path < prefix + MAX_CHAR is "path starts with prefix". */
const MAX_CHAR = "\u{10FFFF}";

export async function openSqliteIndex(opts: SqliteIndexOptions): Promise<SqliteIndexStore> {
  const store = new SqliteIndexStore(opts);
  try {
    await store.migrate();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

const logger = log("index");

/**
 * The stores of this process on each file. A store that holds its commits keeps the write
 * lock between writes; another connection of the same process waiting on it would block the
 * event loop its hold timer needs, so a store settles the others before it writes.
 */
const storesOnFile = new Map<string, Set<SqliteIndexStore>>();

function settleOthers(file: string, self: SqliteIndexStore): void {
  for (const other of storesOnFile.get(file) ?? []) if (other !== self) other.settle();
}

export class SqliteIndexStore implements IndexStore, HeldCommits {
  readonly kind = "sqlite";
  readonly file: string;
  readonly embeddingDim: number | undefined;
  private readonly db: Database;
  private readonly sqliteVec: boolean;
  private vectors: SqliteVectors | undefined;
  private readonly writes: GroupCommit;
  /** docs_fts's rows: every write to it, and the pending rows of held commits. */
  private readonly text: TextRows;
  /** The searches' first pass (champion lists); undefined when off (`champions: { depth: 0 }`). */
  readonly champions: ChampionLists | undefined;
  private readonly checkpointer: BackgroundCheckpointer | undefined;
  /** Held commits (holdCommitMs): the open marker and the writes a failed commit lost. */
  private readonly held: HeldWrites | undefined;
  /** The searches' ranking (its counts: how many searches needed the every-word query). */
  readonly ranking: Ranking;

  constructor(opts: SqliteIndexOptions) {
    mkdirSync(opts.dataDir, { recursive: true });
    this.file = join(opts.dataDir, SQLITE_INDEX_FILE);
    // A store that answers before it commits marks the file held open (HeldWrites).
    const holdMs = opts.holdCommitMs ?? 0;
    const held = holdMs > 0 ? new HeldWrites(this.file) : undefined;
    this.held = held;
    this.embeddingDim = opts.embeddingDim;
    this.sqliteVec = opts.sqliteVec ?? true;
    this.db = new Database(this.file, { create: true, strict: true });
    this.db.run("PRAGMA journal_mode = WAL");
    this.db.run("PRAGMA synchronous = NORMAL");
    this.db.run("PRAGMA foreign_keys = ON");
    this.db.run("PRAGMA busy_timeout = 5000");
    // A page cache larger than SQLite's default, bounded: an index build dirties pages faster
    // than it commits, so the cache fills to its limit and stays resident (memory the process
    // keeps), while searches gain nothing from it (the OS page cache holds the file). The bound
    // keeps a build's hot FTS5 structure pages and the docs b-tree in process.
    this.db.run("PRAGMA cache_size = -16384");
    // Statement journals (a group commit's savepoints) in memory: past SQLite's spill threshold
    // one would go to a temp file, created and deleted once per commit.
    this.db.run("PRAGMA temp_store = MEMORY");
    const checkpointer = opts.backgroundCheckpoints ? new BackgroundCheckpointer(this.db, this.file) : undefined;
    this.checkpointer = checkpointer;
    const champions =
      opts.champions?.depth === 0
        ? undefined
        : new ChampionLists(this.db, DOC_WEIGHTS, DOC_TOKENIZER, { ...opts.champions, workerFile: opts.backgroundListBuilds ? this.file : undefined });
    this.champions = champions;
    this.ranking = new Ranking(this.db, (sql) => this.read(sql), champions);
    this.text = new TextRows(this.db, held !== undefined, (id, dropped) => champions?.written(id, dropped));
    const writes: GroupCommitOptions = {
      committed: (n) => {
        held?.committed();
        checkpointer?.committed(n);
      },
      // A rolled-back batch's text writes were told to the first pass: it starts afresh.
      rolledBack: () => {
        this.text.rolledBack();
        champions?.clear();
      },
      beforeBegin: () => settleOthers(this.file, this),
      lost: (err, n) => {
        if (held) held.failed(err, n);
        else logger.error(`index: a commit of ${n} writes failed (${err instanceof Error ? err.message : String(err)})`);
      },
    };
    this.writes = held ? new HeldGroupCommit(this.db, { ...writes, holdMs, beforeCommit: () => this.text.flush() }) : new GroupCommit(this.db, writes);
    const peers = storesOnFile.get(this.file) ?? new Set();
    peers.add(this);
    storesOnFile.set(this.file, peers);
  }

  /** Commits what every store of this process on the file holds. */
  private settleFile(): void {
    settleOthers(this.file, this);
    this.writes.settle();
  }

  /** The last process that held this index's commits stopped without closing it (HeldCommits). */
  get stoppedUnclean(): boolean {
    return this.held?.stoppedUnclean ?? false;
  }

  /** Held commits: `listener` is told the paths whose answered writes a failed commit lost (HeldCommits.onLostWrites). */
  onLostWrites(listener: (paths: string[]) => void): void {
    this.held?.onLostWrites(listener);
  }

  /** Commits what this store holds (held commits): its writes are then every connection's. */
  settle(): void {
    this.writes.settle();
  }

  /**
   * Every read outside a write is prepared here: a read of docs_fts first writes the pending
   * rows of held commits (TextRows.readsText), so it sees this store's answered writes.
   */
  private read<R = unknown>(sql: string): Statement<R, SQLQueryBindings[]> {
    this.text.readsText(sql);
    return this.db.query<R, SQLQueryBindings[]>(sql);
  }

  /** The write path's statements, prepared once (after migrate(): they name v5's tables). */
  private get w(): WriteStatements {
    this.stmts ??= prepareWrites(this.db);
    return this.stmts;
  }
  private stmts: WriteStatements | undefined;

  get hasVectors(): boolean {
    return this.vectors !== undefined;
  }

  /** "sqlite-vec" when the extension loaded, "js" for the brute-force fallback, or null. */
  get vectorEngine(): "sqlite-vec" | "js" | null {
    return this.vectors?.engine ?? null;
  }

  async migrate(): Promise<void> {
    settleOthers(this.file, this);
    const { user_version: version } = this.db.query<{ user_version: number }, []>("PRAGMA user_version").get()!;
    this.db
      .transaction(() => {
        for (let v = version; v < SCHEMA.length; v++) {
          const step = SCHEMA[v]!;
          if (typeof step === "string") this.db.run(step);
          else step(this.db);
          this.db.run(`PRAGMA user_version = ${v + 1}`);
        }
        // A first build that stopped before it put its deferred indexes back (bulkLoad).
        this.db.run(CREATE_DEFERRED);
      })
      .immediate();
    this.configureVectors();
  }

  /**
   * A first build: when the index holds no document, `load` runs without the b-trees that take
   * a scattered insert per note (DEFERRED_INDEXES), which are then built once, sorted, at the
   * end, which writes far fewer pages. Meanwhile lookups they serve (notes
   * by name, listings by time) scan the table; a crash before the end leaves them
   * to migrate(), which puts them back at the next open. On a non-empty index: just `load`.
   */
  async bulkLoad<T>(load: () => Promise<T>): Promise<T> {
    this.writes.settle();
    if (this.db.query("SELECT 1 FROM docs LIMIT 1").get() !== null) return load();
    this.db.run(DEFERRED_INDEXES.map((i) => `DROP INDEX IF EXISTS ${i.name};`).join("\n"));
    try {
      return await load();
    } finally {
      await this.writes.run(() => this.db.run(CREATE_DEFERRED));
    }
  }

  /** Records the dimension on first use; refuses a file that holds another one. */
  private configureVectors(): void {
    const dim = this.embeddingDim;
    if (dim === undefined) return;
    if (!Number.isInteger(dim) || dim < 1) throw new RangeError(`embedding dimension must be a positive integer, got ${dim}`);
    const row = this.db.query<{ value: string }, [string]>("SELECT value FROM index_meta WHERE key = ?").get("embedding_dim");
    if (row && Number(row.value) !== dim) {
      throw new DimensionMismatchError(
        Number(row.value),
        dim,
        `set EMBEDDINGS_DIM=${row.value} (the model the index was built with), or delete ${this.file} and let the next refresh rebuild it`,
      );
    }
    if (!row) this.db.query("INSERT INTO index_meta (key, value) VALUES ('embedding_dim', ?)").run(String(dim));
    this.vectors = new SqliteVectors(this.db, dim, this.sqliteVec);
  }

  /** The documents' writes start together, so the group commit takes them as one transaction. */
  upsertMany(docs: IndexDoc[], opts: Pick<UpsertOptions, "embed"> = {}): Promise<boolean[]> {
    return Promise.all(docs.map((doc) => this.upsert(doc, opts)));
  }

  async upsert(doc: IndexDoc, opts: UpsertOptions = {}): Promise<boolean> {
    const mtimeMs = doc.mtimeMs ?? doc.updatedAt.getTime();
    const tagsJson = JSON.stringify(doc.tags);
    const w = this.w;
    if (!opts.embeddings && !opts.embed) {
      // Nothing to wait for: the lookup goes inside the write's transaction too. Outside one,
      // a read is a WAL read transaction of its own (its shared-memory locks are four fcntl
      // calls), paid by every ingest before its write.
      return this.writes.run(() => {
        this.held?.wrote(doc.path);
        const old = w.same.get(doc.path);
        if (old && this.isSame(old, doc, tagsJson)) {
          this.touchSame(old, doc, mtimeMs);
          return false;
        }
        this.writeDoc(doc, tagsJson, mtimeMs, prepareDoc(doc), undefined, old?.id ?? null);
        return true;
      });
    }
    const old = w.same.get(doc.path);
    if (old && this.isSame(old, doc, tagsJson)) {
      if (old.mtime_ms !== mtimeMs || old.name === null)
        await this.writes.run(() => {
          this.held?.wrote(doc.path);
          this.touchSame(old, doc, mtimeMs);
        });
      return false;
    }
    const prepared = prepareDoc(doc);
    const embeddings = await resolveEmbeddings(opts, prepared.chunks.length, this.embeddingDim, () => embeddingInputs(doc));
    return this.writes.run(() => {
      this.held?.wrote(doc.path);
      this.writeDoc(doc, tagsJson, mtimeMs, prepared, embeddings);
      return true;
    });
  }

  /** The row holds this document as it is (its text, title, producer and tags). */
  private isSame(old: SameRow, doc: IndexDoc, tagsJson: string): boolean {
    return old.hash === doc.hash && old.title === doc.title && old.producer === doc.producer && old.tags === tagsJson;
  }

  /** An unchanged document (inside a write): its mtime, and its links if it was indexed before links were kept (name null). */
  private touchSame(old: SameRow, doc: IndexDoc, mtimeMs: number): void {
    const links = old.name === null ? extractLinks(doc.path, doc.body) : undefined;
    if (old.mtime_ms === mtimeMs && !links) return;
    const w = this.w;
    w.touch.run(mtimeMs, noteName(doc.path), old.id);
    if (!links) return;
    this.insertLinks(old.id, links);
    // Its filters gain the names it links to (backlinks find it by them).
    const text = this.text.get(old.id);
    if (!text) return;
    const filters = docFilters(doc.producer, tagsOf(doc), links);
    this.writes.defer(() => {
      this.text.drop(old.id);
      this.text.put(old.id, { title: text.title, body: text.body, filters });
    });
  }

  /**
   * A new or changed document's rows (inside a write): the old ones go first. `oldId` is the
   * row this transaction already found for the path (null: none); undefined looks it up.
   */
  private writeDoc(
    doc: IndexDoc,
    tagsJson: string,
    mtimeMs: number,
    p: PreparedDoc,
    embeddings: number[][] | undefined,
    oldId: number | null = this.w.idOf.get(doc.path)?.id ?? null,
  ): void {
    const w = this.w;
    if (oldId !== null) this.deleteDoc(oldId);
    const { id } = w.doc.get(doc.path, doc.producer, doc.title, tagsJson, doc.updatedAt.getTime(), doc.hash, mtimeMs, noteName(doc.path), p.lengths)!;
    this.writes.defer(() => this.text.put(id, { title: doc.title, body: p.body, filters: p.filters }));
    this.insertLinks(id, p.links);
    if (embeddings && this.vectors) for (const [seq, vector] of embeddings.entries()) this.vectors.put(id, seq, vector);
  }

  async remove(path: string): Promise<boolean> {
    return this.writes.run(() => {
      this.held?.wrote(path);
      const row = this.w.idOf.get(path);
      if (row) this.deleteDoc(row.id);
      return row !== null;
    });
  }

  async search(query: ParsedQuery, limit: number, opts: SearchOptions = {}): Promise<SearchHit[]> {
    if (!hasText(query)) return this.browse(query, limit);
    // FTS5 keeps a held transaction's totals (row count, average length) in memory until it
    // commits; the champion lists read them from the table: commit first (and what another
    // store of this process on the file holds, which this connection cannot see).
    this.settleFile();
    const snippets = opts.snippets ?? true;
    return this.ranking.match(query, opts.match ?? "any", limit, snippets);
  }

  async snippets(query: ParsedQuery, paths: string[]): Promise<Map<string, HitSnippet>> {
    const out = new Map<string, HitSnippet>();
    if (!hasText(query) || paths.length === 0) return out;
    this.settleFile();
    const docs = this.read<{ id: number; path: string }>("SELECT id, path FROM docs WHERE path IN (SELECT value FROM json_each(?))").all(JSON.stringify(paths));
    // OR: marks every clause a document holds, as search() marks them in either match mode.
    const best = this.ranking.bestChunks(
      ftsExpression(clauses(query), "OR"),
      docs.map((d) => d.id),
    );
    for (const d of docs) {
      const chunk = best.get(d.id);
      if (chunk) out.set(d.path, hitSnippet(d.path, chunk.seq, chunk.snippet));
    }
    return out;
  }

  async vectorSearch(vector: number[], limit: number, filters: Partial<SearchFilters> = {}): Promise<SearchHit[]> {
    const vectors = this.requireVectors();
    const filter = filterSql(filters);
    const best = vectors.nearest((sql) => this.read(sql), vector, limit, filter.sql, filter.params);
    const bodies = this.bodies(best.map((b) => b.id));
    return best.map((row) => docHit(row, 1 - row.distance, plainSnippet(chunkOf(bodies.get(row.id) ?? "", row.chunk_lengths, row.seq))));
  }

  async fingerprints(producer: Producer): Promise<Map<string, Fingerprint>> {
    // values(): arrays, not objects, for the 100k rows of a big vault.
    const rows = this.read("SELECT path, hash, mtime_ms FROM docs WHERE producer = ?").values(producer) as [string, string, number][];
    const out = new Map<string, Fingerprint>();
    for (const [path, hash, mtimeMs] of rows) out.set(path, { hash, mtimeMs });
    return out;
  }

  async fingerprintsAfter(producer: Producer, after: string, limit: number): Promise<Array<Fingerprint & { path: string }>> {
    // BINARY collation: the order of UTF-8 bytes; the path's unique index serves it.
    const rows = this.read("SELECT path, hash, mtime_ms FROM docs WHERE path > ? AND producer = ? ORDER BY path LIMIT ?").values(after, producer, limit) as [
      string,
      string,
      number,
    ][];
    return rows.map(([path, hash, mtimeMs]) => ({ path, hash, mtimeMs }));
  }

  async notes(paths: string[]): Promise<NoteMeta[]> {
    return this.metaWhere("d.path", paths);
  }

  async notesNamed(names: string[]): Promise<NoteMeta[]> {
    return this.metaWhere("d.name", names);
  }

  async linksFrom(paths: string[]): Promise<StoredLink[]> {
    return this.linksWhere("d.path", paths);
  }

  async linksNamed(names: string[]): Promise<StoredLink[]> {
    const unique = [...new Set(names)];
    if (unique.length === 0) return [];
    // The notes linking to a name carry its token in docs_fts's filters (schema v5).
    return this.read<StoredLink>(
      `SELECT d.path AS source, l.kind, l.target, l.name FROM docs_fts f JOIN doc_links l ON l.doc_id = f.rowid JOIN docs d ON d.id = l.doc_id
          WHERE docs_fts MATCH ? AND l.name IN (SELECT value FROM json_each(?))`,
    ).all(linkExpression(unique), JSON.stringify(unique));
  }

  async recent(q: RecentQuery): Promise<NoteMeta[]> {
    const filter = filterSql({ producers: q.producer ? [q.producer] : [], tags: q.tag ? [q.tag] : [] });
    let where = `1 = 1${filter.sql}`;
    const params: SQLQueryBindings[] = [...filter.params];
    if (q.since) {
      where += " AND d.updated_at >= ?";
      params.push(q.since.getTime());
    }
    if (q.prefix) {
      where += " AND d.path >= ? AND d.path < ?";
      params.push(q.prefix, q.prefix + MAX_CHAR);
    }
    if (q.after) {
      where += " AND (d.updated_at < ? OR (d.updated_at = ? AND d.path < ?))";
      params.push(q.after.updatedAt.getTime(), q.after.updatedAt.getTime(), q.after.path);
    }
    return this.read<MetaRow>(`SELECT ${META_COLUMNS} FROM docs d WHERE ${where} ORDER BY d.updated_at DESC, d.path DESC LIMIT ?`)
      .all(...params, q.limit)
      .map(noteMeta);
  }

  async pathsUnder(prefix: string, limit: number): Promise<string[]> {
    const rows = this.read("SELECT path FROM docs WHERE path >= ? AND path < ? ORDER BY path LIMIT ?").values(prefix, prefix + MAX_CHAR, limit);
    return rows.map((r) => r[0] as string);
  }

  async linkCounts(): Promise<LinkCounts> {
    const { n } = this.read<{ n: number }>("SELECT count(*) AS n FROM doc_links").get()!;
    const dangling = `FROM doc_links l JOIN docs d ON d.id = l.doc_id
      WHERE CASE l.kind WHEN 'path' THEN NOT EXISTS (SELECT 1 FROM docs t WHERE t.path = l.target)
                        ELSE NOT EXISTS (SELECT 1 FROM docs t WHERE t.name = l.name) END`;
    const { m } = this.read<{ m: number }>(`SELECT count(*) AS m ${dangling}`).get()!;
    const examples = this.read<{ source: string; target: string }>(`SELECT d.path AS source, l.target ${dangling} ORDER BY d.path LIMIT 5`).all();
    return { links: n, dangling: m, examples };
  }

  /**
   * One lookup in docs_fts's `filters` column (every row carries its producer's token): the
   * docs table has no producer index since v7, and counting a large vault's rows would be paid
   * by the first signal or milestone a router wrote (BackgroundIndexer). Held writes committed
   * first, so FTS5 reads them from its table.
   */
  async holdsProducer(producer: Producer): Promise<boolean> {
    this.writes.settle();
    return this.read("SELECT 1 FROM docs_fts WHERE docs_fts MATCH ? LIMIT 1").get(producerExpression([producer])) !== null;
  }

  async countByProducer(): Promise<Record<Producer, number>> {
    const counts = Object.fromEntries(PRODUCERS.map((p) => [p, 0])) as Record<Producer, number>;
    const rows = this.read<{ producer: Producer; n: number }>("SELECT producer, count(*) AS n FROM docs GROUP BY producer").all();
    for (const r of rows) if (r.producer in counts) counts[r.producer] = r.n;
    return counts;
  }

  async close(): Promise<void> {
    this.writes.settle();
    this.champions?.close();
    await this.checkpointer?.close();
    this.db.close();
    storesOnFile.get(this.file)?.delete(this);
    if (storesOnFile.get(this.file)?.size === 0) storesOnFile.delete(this.file);
    this.held?.close();
  }

  private requireVectors(): SqliteVectors {
    if (this.vectors) return this.vectors;
    return SqliteVectors.unavailable();
  }

  /** Documents whose `column` is one of `values`. */
  private metaWhere(column: "d.path" | "d.name", values: string[]): NoteMeta[] {
    if (values.length === 0) return [];
    return this.read<MetaRow>(`SELECT ${META_COLUMNS} FROM docs d WHERE ${column} IN (SELECT value FROM json_each(?))`)
      .all(JSON.stringify([...new Set(values)]))
      .map(noteMeta);
  }

  /** Stored links (with their document's path) whose `column` is one of `values`. */
  private linksWhere(column: "d.path", values: string[]): StoredLink[] {
    if (values.length === 0) return [];
    return this.read<StoredLink>(
      `SELECT d.path AS source, l.kind, l.target, l.name FROM doc_links l JOIN docs d ON d.id = l.doc_id
          WHERE ${column} IN (SELECT value FROM json_each(?))`,
    ).all(JSON.stringify([...new Set(values)]));
  }

  private insertLinks(docId: number, links: DocLink[]): void {
    if (links.length === 0) return;
    this.w.links.run(docId, JSON.stringify(links.map((l) => [l.kind, l.target, l.name])));
  }

  /** The document's text, then its row (its tags, links and vectors go with it: ON DELETE CASCADE). */
  private deleteDoc(id: number): void {
    this.writes.defer(() => this.text.drop(id));
    this.w.forgetDoc.run(id);
  }

  /** The stored bodies of these documents. */
  private bodies(ids: number[]): Map<number, string> {
    if (ids.length === 0) return new Map();
    const rows = this.read("SELECT rowid, body FROM docs_fts WHERE rowid IN (SELECT value FROM json_each(?))").values(JSON.stringify(ids));
    return new Map(rows as [number, string][]);
  }

  /** Filter-only queries (e.g. `tag:deploy`): newest documents first. */
  private browse(filters: SearchFilters, limit: number): SearchHit[] {
    if (filters.tags.length === 0 && filters.producers.length === 0) return [];
    const filter = filterSql(filters);
    const rows = this.read<DocRow>(`SELECT d.* FROM docs d WHERE 1 = 1${filter.sql} ORDER BY d.updated_at DESC, d.path LIMIT ?`).all(...filter.params, limit);
    const bodies = this.bodies(rows.map((r) => r.id));
    return rows.map((r) => docHit({ ...r, seq: 0 }, 0, plainSnippet(chunkOf(bodies.get(r.id) ?? "", r.chunk_lengths, 0))));
  }
}

type WriteStatements = ReturnType<typeof prepareWrites>;

interface PreparedDoc {
  links: DocLink[];
  chunks: ReturnType<typeof chunkDocument>;
  filters: string;
  /** The stored body: the chunks' texts joined. */
  body: string;
  /** Each chunk's length in the body, JSON; null for one chunk. */
  lengths: string | null;
}

/** What a document's rows are made of: its links, chunks, filter tokens and stored body. */
function prepareDoc(doc: IndexDoc): PreparedDoc {
  const links = extractLinks(doc.path, doc.body);
  const chunks = chunkDocument(doc);
  const filters = docFilters(doc.producer, tagsOf(doc), links);
  const body = chunks.length === 1 ? chunks[0]!.text : chunks.map((c) => c.text).join("\n\n");
  const lengths = chunks.length === 1 ? null : JSON.stringify(chunks.map((c) => c.text.length));
  return { links, chunks, filters, body, lengths };
}

function prepareWrites(db: Database) {
  return {
    same: db.query<SameRow, [string]>("SELECT id, producer, title, tags, hash, mtime_ms, name FROM docs WHERE path = ?"),
    idOf: db.query<{ id: number }, [string]>("SELECT id FROM docs WHERE path = ?"),
    touch: db.query<unknown, [number, string, number]>("UPDATE docs SET mtime_ms = ?, name = ? WHERE id = ?"),
    doc: db.query<{ id: number }, SQLQueryBindings[]>(
      "INSERT INTO docs (path, producer, title, tags, updated_at, hash, mtime_ms, name, chunk_lengths) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
    ),
    links: db.query<unknown, [number, string]>(
      "INSERT OR IGNORE INTO doc_links (doc_id, kind, target, name) SELECT ?, value ->> 0, value ->> 1, value ->> 2 FROM json_each(?)",
    ),
    forgetDoc: db.query<unknown, [number]>("DELETE FROM docs WHERE id = ?"),
  };
}

/** Chunk `seq` of a stored body (chunk_lengths: see schema v5). */
function chunkOf(body: string, lengthsJson: string | null, seq: number): string {
  if (lengthsJson === null) return body;
  const lengths = JSON.parse(lengthsJson) as number[];
  let start = 0;
  for (let i = 0; i < seq && i < lengths.length; i++) start += lengths[i]! + 2;
  return body.slice(start, start + (lengths[seq] ?? 0));
}

function noteMeta(row: MetaRow): NoteMeta {
  return {
    path: row.path,
    producer: row.producer,
    title: row.title,
    tags: JSON.parse(row.tags) as string[],
    updatedAt: new Date(row.updated_at),
    hash: row.hash,
  };
}
