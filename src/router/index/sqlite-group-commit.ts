// Group commit for the SQLite index: writes issued in one turn of the event loop share one
// transaction, each in its own savepoint (a failing write rejects alone). FTS5 pays per
// commit — a new segment, then merges — so a refresh or a burst of ingests that overlaps
// its upserts runs several times faster than one transaction per document. A write's
// promise settles once its transaction has committed.
//
// FTS5 writes go last (defer()): FTS5 flushes its pending terms into a new segment at every
// savepoint opened after a write to it, so a full-text row written inside each document's
// savepoint made one tiny segment per document and the merges that follow — most of an index
// build's time. Deferred to the end of the batch, outside any savepoint, a batch's rows make
// one segment, as a bare FTS5 loader's would. A deferred write that fails fails the batch.
//
// Savepoints only when a write fails: a batch first runs every write bare in its one
// transaction; only if one throws is the transaction rolled back and the batch run again with
// a savepoint each (so the failing write rejects alone, as before). A write is SQL only (it
// must be: it may run twice), so the second run does what the first would have. A savepoint
// per write cost two statements and, worse, a sub-journal: every page a write touched first
// in its savepoint was copied to a temp file — in an index build, more file writes than the
// WAL's own (17 page writes a note against the bare loader's 3).
import type { Database } from "bun:sqlite";

type Result = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Pending {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit {
  private readonly queue: Pending[] = [];
  /** The deferred writes of the write running now (undefined outside flush()). */
  private deferred: Array<() => void> | undefined;
  private readonly begin;
  private readonly savepoint;
  private readonly release;
  private readonly rollbackTo;
  private readonly commit;
  private readonly rollback;

  constructor(
    private readonly db: Database,
    /** Told after each commit, with the number of writes that went in (the background checkpointer). */
    private readonly committed?: (writes: number) => void,
    /** Told after a transaction that had run deferred writes was rolled back (what they told others did not happen). */
    private readonly rolledBack?: () => void,
  ) {
    // Prepared once: db.transaction() per write re-created its wrapper and statements.
    this.begin = db.prepare("BEGIN IMMEDIATE");
    this.savepoint = db.prepare("SAVEPOINT write");
    this.release = db.prepare("RELEASE write");
    this.rollbackTo = db.prepare("ROLLBACK TO write");
    this.commit = db.prepare("COMMIT");
    this.rollback = db.prepare("ROLLBACK");
  }

  /** Queues a write. `fn` must only touch the database: it runs a second time when another write of its batch fails. */
  run<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      if (this.queue.length === 1) setImmediate(() => this.flush());
    });
  }

  /**
   * Inside a write: runs `op` after every write of the batch, outside their savepoints, in the
   * order deferred; dropped when the write fails. Outside a write: runs it now.
   */
  defer(op: () => void): void {
    if (this.deferred) this.deferred.push(op);
    else op();
  }

  /** Commits whatever is queued now (close() calls it before closing the database). */
  flush(): void {
    const batch = this.queue.splice(0);
    if (batch.length === 0) return;
    let results: Result[];
    try {
      results = this.attempt(batch, false) ?? this.attempt(batch, true)!;
    } catch (error) {
      for (const w of batch) w.reject(error);
      return;
    }
    // The writes that went in (a lone write that failed was rolled back, nothing committed).
    let written = 0;
    for (const r of results) if (r.ok) written++;
    if (written > 0) this.committed?.(written);
    batch.forEach((w, i) => {
      const r = results[i]!;
      if (r.ok) w.resolve(r.value);
      else w.reject(r.error);
    });
  }

  /**
   * Every write, then every deferred one, in one transaction. Bare (no savepoints): the
   * results, or undefined (rolled back) when one threw and the batch has more writes than that
   * one — a batch of one is answered here (its failure is its own), a larger one is run again
   * isolated: each write in its own savepoint, so a failing one rejects alone.
   */
  private attempt(batch: Pending[], isolated: boolean): Result[] | undefined {
    const results: Result[] = [];
    let deferredRan = false;
    this.begin.run();
    try {
      const later: Array<() => void> = [];
      for (const w of batch) {
        this.deferred = [];
        if (isolated) this.savepoint.run();
        try {
          results.push({ ok: true, value: w.fn() });
          if (isolated) this.release.run();
          later.push(...this.deferred);
        } catch (error) {
          if (!isolated) throw error;
          this.rollbackTo.run();
          this.release.run();
          results.push({ ok: false, error });
        } finally {
          this.deferred = undefined;
        }
      }
      deferredRan = later.length > 0;
      for (const op of later) op();
      this.commit.run();
      return results;
    } catch (error) {
      if (this.db.inTransaction) this.rollback.run();
      if (deferredRan) this.rolledBack?.();
      if (isolated) throw error;
      if (batch.length === 1 && results.length === 0) return [{ ok: false, error }];
      if (batch.length === 1) throw error; // its deferred write failed: the batch fails, as below
      return undefined;
    }
  }
}
