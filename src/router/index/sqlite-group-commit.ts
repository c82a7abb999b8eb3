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
// A batch of one write (POST /ingest at one connection: every request its own commit) runs
// without a savepoint: the transaction holds that write alone, so rolling it back is rolling
// back the write. A savepoint costs two statements and a statement journal holding the
// original of every page the write touches (~20 for a note: past SQLite's 64 KiB in memory,
// so a temp file created and deleted per commit unless temp_store is MEMORY).
import type { Database } from "bun:sqlite";

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
    /** Told after each commit, with the number of writes it held (the background checkpointer). */
    private readonly committed?: (writes: number) => void,
  ) {
    // Prepared once: db.transaction() per write re-created its wrapper and statements.
    this.begin = db.prepare("BEGIN IMMEDIATE");
    this.savepoint = db.prepare("SAVEPOINT write");
    this.release = db.prepare("RELEASE write");
    this.rollbackTo = db.prepare("ROLLBACK TO write");
    this.commit = db.prepare("COMMIT");
    this.rollback = db.prepare("ROLLBACK");
  }

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
    const results: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      this.begin.run();
      try {
        const later: Array<() => void> = [];
        const alone = batch.length === 1;
        for (const w of batch) {
          this.deferred = [];
          if (!alone) this.savepoint.run();
          try {
            results.push({ ok: true, value: w.fn() });
            if (!alone) this.release.run();
            later.push(...this.deferred);
          } catch (error) {
            if (alone) throw error; // the transaction below is rolled back: the write with it
            this.rollbackTo.run();
            this.release.run();
            results.push({ ok: false, error });
          } finally {
            this.deferred = undefined;
          }
        }
        for (const op of later) op();
        this.commit.run();
      } catch (error) {
        if (this.db.inTransaction) this.rollback.run();
        throw error;
      }
    } catch (error) {
      for (const w of batch) w.reject(error);
      return;
    }
    this.committed?.(batch.length);
    batch.forEach((w, i) => {
      const r = results[i]!;
      if (r.ok) w.resolve(r.value);
      else w.reject(r.error);
    });
  }
}
