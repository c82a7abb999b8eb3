// docs_fts's rows, the one way the store writes them, and the pending-rows rule. With held
// commits the rows of the open transaction are kept here until it commits and then written back
// to back: FTS5 turns its pending terms into a new segment whenever another statement that may
// abort starts in the transaction (the next note's docs row, for one), so rows written one per
// note made a segment per lone ingest, as if each had committed. The rule that keeps this
// invisible: a read of docs_fts first writes the pending rows (readsText()).
import type { Database, SQLQueryBindings, Statement } from "bun:sqlite";

/** The store's way to prepare a read outside a write: it applies the pending-rows rule (readsText) first. */
export type Reader = <R>(sql: string) => Statement<R, SQLQueryBindings[]>;

export interface TextRow {
  title: string;
  body: string;
  /** The filter tokens (filters.ts). */
  filters: string;
}

export class TextRows {
  /** Held commits only: the rows of the open transaction not yet in docs_fts. */
  private readonly pending: Map<number, TextRow> | undefined;
  /** Prepared at first use (after migrate(): they name v5's columns). */
  private statements: Record<"insert" | "remove" | "stored", Statement> | undefined;

  constructor(
    private readonly db: Database,
    held: boolean,
    /** Told of every row written (false) or about to go (true, while it can still be read): the first pass. */
    private readonly written: (id: number, dropped: boolean) => void,
  ) {
    if (held) this.pending = new Map();
  }

  private get s(): Record<"insert" | "remove" | "stored", Statement> {
    this.statements ??= {
      insert: this.db.query("INSERT INTO docs_fts (rowid, title, body, filters) VALUES (?, ?, ?, ?)"),
      remove: this.db.query("DELETE FROM docs_fts WHERE rowid = ?"),
      stored: this.db.query("SELECT title, body, filters FROM docs_fts WHERE rowid = ?"),
    };
    return this.statements;
  }

  /** Document `id`'s row: pending until the commit when commits are held, else written now. */
  put(id: number, row: TextRow): void {
    this.written(id, false);
    if (this.pending) this.pending.set(id, row);
    else this.s.insert.run(id, row.title, row.body, row.filters);
  }

  /** Document `id`'s row goes (outside a write's savepoint: it may write the pending rows). */
  drop(id: number): void {
    // Whoever is told reads the text that goes: a row still pending goes into docs_fts first.
    if (this.pending?.has(id)) this.flush();
    this.written(id, true);
    this.s.remove.run(id);
  }

  /** Document `id`'s row as this transaction holds it (pending or stored). */
  get(id: number): TextRow | undefined {
    return this.pending?.get(id) ?? (this.s.stored.get(id) as TextRow | null) ?? undefined;
  }

  /**
   * The pending-rows rule, in one place: before `sql` runs outside a write, the pending rows
   * go into the open transaction when it reads docs_fts (a read of the other tables leaves
   * them to the commit).
   */
  readsText(sql: string): void {
    if (this.pending && this.pending.size > 0 && sql.includes("docs_fts")) this.flush();
  }

  /** The pending rows into the open transaction, back to back: before it commits, and before a read of docs_fts. */
  flush(): void {
    if (!this.pending || this.pending.size === 0) return;
    // Each row leaves the map once it is in: a failing insert leaves the rest pending (the commit tries them again).
    const insert = this.s.insert;
    for (const [id, t] of this.pending) {
      insert.run(id, t.title, t.body, t.filters);
      this.pending.delete(id);
    }
  }

  /** The open transaction was rolled back: its pending rows go with it. */
  rolledBack(): void {
    this.pending?.clear();
  }
}
