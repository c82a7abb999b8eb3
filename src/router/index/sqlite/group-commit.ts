// Group commit for the SQLite index: writes issued in one turn of the event loop share one
// transaction, because FTS5 pays per commit (a new segment, then merges). Rules that keep it fast
// and correct:
// - FTS5 writes go last (defer()), outside any savepoint: FTS5 flushes a segment at every
//   savepoint after a write to it, so per-write savepoints would make a segment per document.
// - Savepoints only after a failure: a batch runs bare; if a write throws, the transaction is
//   rolled back and the batch run again with a savepoint each, so the failing write rejects
//   alone. A write is SQL only, so it may safely run twice.
// - Held commits (`holdMs` > 0): a write is answered once it is in the open transaction (this
//   connection's reads see it) and committed `holdMs` later, at `maxHeldWrites`, or on settle().
//   A crash loses at most the index rows of the last `holdMs`, never a file: the caller
//   re-indexes from the files after an unclean stop. The SQLite store keeps a held transaction's
//   full-text rows itself and writes them in `beforeCommit`, since FTS5 also flushes whenever a
//   later statement begins in the transaction.
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
  /** Hold a transaction open this long for later writes (0, the default: commit each batch). */
  holdMs?: number;
  /** Commit a held transaction once it holds this many writes (default 256). */
  maxHeldWrites?: number;
  /** Told when a held transaction's commit failed after its writes were answered (they are lost from the index). */
  lost?: (error: unknown, writes: number) => void;
  /** Called before a transaction begins (the store settles other connections of this process on the same file, which would hold the write lock). */
  beforeBegin?: () => void;
  /** Called inside a held transaction just before it commits (the store's pending docs_fts rows); a throw fails the commit. */
  beforeCommit?: () => void;
}

export class GroupCommit {
  private readonly queue: Pending[] = [];
  /** The deferred writes of the write running now (undefined outside flush()). */
  private deferred: Array<() => void> | undefined;
  /** The open (held) transaction's answered writes, to run again after a rollback. */
  private held: Array<() => unknown> = [];
  /** The open transaction has run deferred writes. */
  private heldDeferred = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly holdMs: number;
  private readonly maxHeld: number;
  private readonly begin;
  private readonly savepoint;
  private readonly release;
  private readonly rollbackTo;
  private readonly commitStmt;
  private readonly rollback;

  constructor(
    private readonly db: Database,
    private readonly opts: GroupCommitOptions = {},
  ) {
    this.holdMs = opts.holdMs ?? 0;
    this.maxHeld = opts.maxHeldWrites ?? 256;
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

  /** Runs whatever is queued now, then commits a held transaction (close() and the searches call it). */
  settle(): void {
    this.flush();
    this.commitHeld();
  }

  /** Runs whatever is queued now: committed at once, or held (holdMs). */
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

  /** Commits the held transaction, if one is open. */
  private commitHeld(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.db.inTransaction) return;
    const writes = this.held.length;
    try {
      this.opts.beforeCommit?.();
      this.commitStmt.run();
    } catch (error) {
      this.abandon();
      this.opts.lost?.(error, writes);
      return;
    }
    this.held = [];
    this.heldDeferred = false;
    if (writes > 0) this.opts.committed?.(writes);
  }

  /** Rolls the open transaction back, with what it held. */
  private abandon(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.db.inTransaction) this.rollback.run();
    const told = this.heldDeferred;
    this.held = [];
    this.heldDeferred = false;
    if (told) this.opts.rolledBack?.();
  }

  /** Opens a transaction, or carries on the held one. */
  private open(): void {
    if (this.db.inTransaction) return;
    this.opts.beforeBegin?.();
    this.begin.run();
    if (this.holdMs > 0) this.timer = setTimeout(() => this.commitHeld(), this.holdMs);
  }

  /**
   * Every write, then every deferred one, in the transaction. Bare (no savepoints): the
   * results, or undefined when one threw and the batch has more writes than that one (rolled
   * back, with the held writes run again) — a batch of one in a transaction of its own is
   * answered here (its failure is its own), a larger one is run again isolated: each write in
   * its own savepoint, so a failing one rejects alone; then it commits.
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
      if (later.length > 0) this.heldDeferred = true;
      for (const op of later) op();
      results.forEach((r, i) => {
        if (r.ok) this.held.push(batch[i]!.fn);
      });
      if (isolated || this.holdMs === 0 || this.held.length >= this.maxHeld) this.commitHeld();
      return results;
    } catch (error) {
      const earlier = this.held;
      this.abandon();
      // The writes answered in the rolled-back transaction go in again (a held transaction).
      if (earlier.length > 0) this.replay(earlier);
      if (isolated) throw error;
      if (alone && batch.length === 1 && results.length === 0) return [{ ok: false, error }];
      if (alone && batch.length === 1) throw error; // its deferred write failed: the batch fails, as below
      return undefined;
    }
  }

  /** Runs answered writes again in a new transaction (after a rollback of the one they were in). */
  private replay(writes: Array<() => unknown>): void {
    try {
      this.open();
      this.deferred = [];
      const later: Array<() => void> = [];
      for (const fn of writes) {
        fn();
        later.push(...this.deferred);
        this.deferred = [];
      }
      this.deferred = undefined;
      this.heldDeferred = later.length > 0;
      for (const op of later) op();
      this.held = writes;
    } catch (error) {
      this.deferred = undefined;
      this.heldDeferred = true;
      this.abandon();
      this.opts.lost?.(error, writes.length);
    }
  }
}
