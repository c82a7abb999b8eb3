// What the store asks of a first pass (champion-lists.ts is the one there is): told of every
// write to docs_fts, it answers a ranking's exact top k when it can prove it, else undefined
// and the store runs the plain ranking query.
export interface RankedId {
  id: number;
  /** −bm25: higher is better. */
  score: number;
}

export interface FirstPass {
  /** Document `id`'s docs_fts row was written, or is about to be deleted (`dropped`: still readable). */
  written(id: number, dropped: boolean): void;
  /**
   * The exact top `k` of the clauses (FTS5 expressions of one word or phrase) joined by `op`,
   * of the documents `passes` accepts (the filters), or undefined when it cannot prove it.
   */
  topK(clauses: string[], op: "AND" | "OR", k: number, passes?: (ids: number[]) => Set<number>): RankedId[] | undefined;
  /** A rollback: what it was told did not happen. */
  clear(): void;
  close(): void;
}
