// Held commits, the transaction: the plain group commit (group-commit.ts) with its transaction
// held open for the writes that follow. A write is answered once it is in the open transaction
// (this connection's reads see it) and committed `holdMs` later, at `maxHeldWrites`, or on
// settle(). A crash loses at most the index rows of the last `holdMs`, never a file: the caller
// re-indexes from the files after an unclean stop (held-commits.ts). A failing write rolls the
// transaction back; the writes it had answered run again in a new one.
import type { Database } from "bun:sqlite";
import { GroupCommit, type GroupCommitOptions } from "../../group-commit.ts";

export interface HeldGroupCommitOptions extends GroupCommitOptions {
  /** Hold a transaction open this long for later writes (> 0). */
  holdMs: number;
  /** Commit a held transaction once it holds this many writes (default 256). */
  maxHeldWrites?: number;
  /** Called inside a held transaction just before it commits (the store's pending docs_fts rows); a throw fails the commit. */
  beforeCommit?: () => void;
}

export class HeldGroupCommit extends GroupCommit {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly holdMs: number;
  private readonly maxHeld: number;
  private readonly beforeCommitHook: (() => void) | undefined;

  constructor(db: Database, opts: HeldGroupCommitOptions) {
    super(db, opts);
    this.holdMs = opts.holdMs;
    this.maxHeld = opts.maxHeldWrites ?? 256;
    this.beforeCommitHook = opts.beforeCommit;
  }

  /** Runs whatever is queued now, then commits the held transaction. */
  override settle(): void {
    this.flush();
    this.commit();
  }

  protected override commit(): void {
    this.stopTimer();
    super.commit();
  }

  protected override abandon(): void {
    this.stopTimer();
    super.abandon();
  }

  /** A new transaction commits `holdMs` after it begins, unless something commits it first. */
  protected override open(): void {
    if (this.db.inTransaction) return;
    super.open();
    this.timer = setTimeout(() => this.commit(), this.holdMs);
  }

  protected override beforeCommit(): void {
    this.beforeCommitHook?.();
  }

  protected override holds(): boolean {
    return this.answered.length < this.maxHeld;
  }

  /** The writes answered in the rolled-back transaction go in again (a held transaction). */
  protected override rolledBackWith(earlier: Array<() => unknown>): void {
    if (earlier.length > 0) this.replay(earlier);
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
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
      this.ranDeferred = later.length > 0;
      for (const op of later) op();
      this.answered = writes;
    } catch (error) {
      this.deferred = undefined;
      this.ranDeferred = true;
      this.abandon();
      this.opts.lost?.(error, writes.length);
    }
  }
}
