// Group commit for the SQLite index: writes issued in one turn of the event loop share one
// transaction, committed before they are answered, because FTS5 pays per commit (a new
// segment, then merges). Rules that keep it fast and correct:
// - FTS5 writes go last (defer()), outside any savepoint: FTS5 flushes a segment at every
//   savepoint after a write to it, so per-write savepoints would make a segment per document.
// - Savepoints only after a failure: a batch runs bare; if a write throws, the transaction is
//   rolled back and the batch run again with a savepoint each, so the failing write rejects
//   alone. A write is SQL only, so it may safely run twice.
// Holding the transaction open past its batch is an accelerator (accelerators/held-commits),
// which plugs into the protected hooks below.
import type { Database } from "bun:sqlite";

type Result = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Pending {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitOptions {
  /** Told after each commit, with the number of writes that went in (the background checkpointer). */
  committed?: (writes: number) => void;
  /** Told after a transaction that had run deferred writes was rolled back (what they told others did not happen). */
  rolledBack?: () => void;
  /** Told when a commit failed after its writes ran (they are not in the index). */
  lost?: (error: unknown, writes: number) => void;
  /** Called before a transaction begins (the store settles other connections of this process on the same file, which would hold the write lock). */
  beforeBegin?: () => void;
}

export class GroupCommit {
  private readonly queue: Pending[] = [];
  /** The deferred writes of the write running now (undefined outside a write). */
  protected deferred: Array<() => void> | undefined;
  /** The open transaction's answered writes. */
  protected answered: Array<() => unknown> = [];
  /** The open transaction has run deferred writes. */
  protected ranDeferred = false;
  private readonly begin;
  private readonly savepoint;
  private readonly release;
  private readonly rollbackTo;
  private readonly commitStmt;
  private readonly rollback;

  constructor(
    protected readonly db: Database,
    protected readonly opts: GroupCommitOptions = {},
  ) {
    // Prepared once: db.transaction() per write re-created its wrapper and statements.
    this.begin = db.prepare("BEGIN IMMEDIATE");
    this.savepoint = db.prepare("SAVEPOINT write");
    this.release = db.prepare("RELEASE write");
    this.rollbackTo = db.prepare("ROLLBACK TO write");
    this.commitStmt = db.prepare("COMMIT");
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

  /** Runs whatever is queued now; then every answered write is committed (close() and the searches call it). */
  settle(): void {
    this.flush();
  }

  /** Runs whatever is queued now, committed before it is answered. */
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
    batch.forEach((w, i) => {
      const r = results[i]!;
      if (r.ok) w.resolve(r.value);
      else w.reject(r.error);
    });
  }

  /** Why the last commit failed (it rolled the transaction back), until the next attempt. */
  private commitError: { error: unknown } | undefined;

  /** Commits the open transaction, if one is open; a failed commit rolls it back and is told to lost(). */
  protected commit(): void {
    if (!this.db.inTransaction) return;
    const writes = this.answered.length;
    try {
      this.beforeCommit();
      this.commitStmt.run();
    } catch (error) {
      this.abandon();
      this.commitError = { error };
      this.opts.lost?.(error, writes);
      return;
    }
    this.answered = [];
    this.ranDeferred = false;
    if (writes > 0) this.opts.committed?.(writes);
  }

  /** Rolls the open transaction back, with its answered writes. */
  protected abandon(): void {
    if (this.db.inTransaction) this.rollback.run();
    const told = this.ranDeferred;
    this.answered = [];
    this.ranDeferred = false;
    if (told) this.opts.rolledBack?.();
  }

  /** Opens a transaction, or carries on the open one. */
  protected open(): void {
    if (this.db.inTransaction) return;
    this.opts.beforeBegin?.();
    this.begin.run();
  }

  /** Inside the open transaction, just before it commits; a throw fails the commit. */
  protected beforeCommit(): void {}

  /** After a batch: true keeps the transaction open for the writes that follow (held commits); here each batch commits. */
  protected holds(): boolean {
    return false;
  }

  /** A failing write rolled back the open transaction, with `earlier`, the writes it had answered before this batch (none here: each batch commits). */
  protected rolledBackWith(_earlier: Array<() => unknown>): void {}

  /**
   * Every write, then every deferred one, in the transaction. Bare (no savepoints): the
   * results, or undefined when one threw and the batch has more writes than that one (rolled
   * back) — a batch of one in a transaction of its own is answered here (its failure is its
   * own), a larger one is run again isolated: each write in its own savepoint, so a failing
   * one rejects alone; then it commits.
   */
  private attempt(batch: Pending[], isolated: boolean): Result[] | undefined {
    const results: Result[] = [];
    const alone = !this.db.inTransaction;
    this.open();
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
      if (later.length > 0) this.ranDeferred = true;
      for (const op of later) op();
      results.forEach((r, i) => {
        if (r.ok) this.answered.push(batch[i]!.fn);
      });
      if (isolated || !this.holds()) {
        this.commitError = undefined;
        this.commit();
        // Committed before answered: a commit that failed (a full disk) fails its writes,
        // which are not in the index. Held commits answer first and report lost writes instead.
        const failed = this.commitError as { error: unknown } | undefined;
        if (failed && !this.holds()) return results.map((r) => (r.ok ? { ok: false, error: failed.error } : r));
      }
      return results;
    } catch (error) {
      const earlier = this.answered;
      this.abandon();
      this.rolledBackWith(earlier);
      if (isolated) throw error;
      if (alone && batch.length === 1 && results.length === 0) return [{ ok: false, error }];
      if (alone && batch.length === 1) throw error; // its deferred write failed: the batch fails, as below
      return undefined;
    }
  }
}
