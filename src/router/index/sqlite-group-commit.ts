// Group commit for the SQLite index: writes issued in one turn of the event loop share one
// transaction, each in its own savepoint (a failing write rejects alone). FTS5 pays per
// commit — a new segment, then merges — so a refresh or a burst of ingests that overlaps
// its upserts runs several times faster than one transaction per document. A write's
// promise settles once its transaction has committed.
import type { Database } from "bun:sqlite";

interface Pending {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit {
  private readonly queue: Pending[] = [];

  constructor(private readonly db: Database) {}

  run<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      if (this.queue.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Commits whatever is queued now (close() calls it before closing the database). */
  flush(): void {
    const batch = this.queue.splice(0);
    if (batch.length === 0) return;
    const results: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      this.db
        .transaction(() => {
          for (const w of batch) {
            try {
              results.push({ ok: true, value: this.db.transaction(w.fn)() });
            } catch (error) {
              results.push({ ok: false, error });
            }
          }
        })
        .immediate();
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
}
