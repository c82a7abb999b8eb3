// Nothing answered as indexed stays unsearchable (issue 37): when a held commit fails after its
// writes were answered (SQLite's INDEX_COMMIT_HOLD_MS, a full disk), the index lost rows whose
// files are in the vault. Each lost path is indexed again from its file at once (a file gone
// since leaves the index), then committed; what fails (the disk still full) is tried again,
// backing off, until it goes in — no tick, no restart needed.
import { join } from "node:path";
import { log } from "../../common/logger";
import { documentFromFile } from "../index/document";
import { heldCommits, type IndexStore } from "../index/types";
import { producerOf } from "./sources";

const logger = log("index");
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5_000;

export interface LostWritesDeps {
  vault: string;
  index: IndexStore;
  embed?: (texts: string[]) => Promise<number[][]>;
}

export class LostWritesRecovery {
  private readonly pending = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<void> | undefined;
  private delayMs = FIRST_RETRY_MS;
  private closed = false;

  constructor(private readonly deps: LostWritesDeps) {
    heldCommits(deps.index)?.onLostWrites((paths) => this.add(paths));
  }

  /** Paths whose index rows a failed commit lost: indexed again from their files now. */
  add(paths: string[]): void {
    if (this.closed) return;
    for (const p of paths) this.pending.add(p);
    // Called from inside a failed commit: the round starts on the next turn, outside it.
    if (!this.running && !this.timer) this.timer = setTimeout(() => this.round(), 0);
  }

  /** Paths still waiting to go back in. */
  get waiting(): number {
    return this.pending.size;
  }

  private round(): void {
    this.timer = undefined;
    this.running = this.reindex().finally(() => {
      this.running = undefined;
      if (this.pending.size === 0) this.delayMs = FIRST_RETRY_MS;
      else if (!this.closed) {
        this.timer = setTimeout(() => this.round(), this.delayMs);
        this.delayMs = Math.min(this.delayMs * 2, MAX_RETRY_MS);
      }
    });
  }

  private async reindex(): Promise<void> {
    const round = [...this.pending];
    this.pending.clear();
    let failed = 0;
    let last = "";
    for (const path of round) {
      try {
        await this.reindexOne(path);
      } catch (err) {
        this.pending.add(path);
        failed++;
        last = (err as Error).message;
      }
    }
    // Committed now: a commit that fails again reports its paths back through onLostWrites.
    try {
      heldCommits(this.deps.index)?.settle();
    } catch (err) {
      last = (err as Error).message;
    }
    if (failed > 0) logger.warn(`index: ${failed} note(s) lost by a failed commit could not be indexed again yet (${last}); retrying`);
    else if (round.length > 0 && this.pending.size === 0) logger.info(`index: ${round.length} note(s) lost by a failed commit indexed again from their files`);
  }

  private async reindexOne(path: string): Promise<void> {
    const file = Bun.file(join(this.deps.vault, path));
    // Gone since (a write taken back): its row goes too.
    if (!(await file.exists())) {
      await this.deps.index.remove(path);
      return;
    }
    const producer = producerOf(path);
    if (!producer) return; // not a file the index keeps (the tick's refresh owns such rows)
    const [content, st] = await Promise.all([file.text(), file.stat()]);
    await this.deps.index.upsert(documentFromFile({ path, producer, content, mtimeMs: st.mtimeMs }), this.deps.embed ? { embed: this.deps.embed } : undefined);
  }

  /** Stops retrying (what is still pending is caught up at the next start: the index keeps its open marker). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
