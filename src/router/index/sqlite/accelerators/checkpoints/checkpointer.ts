// WAL checkpoints of the SQLite index off the event loop. SQLite's own checkpoint runs inside
// the committing call once the WAL holds wal_autocheckpoint pages (1000 by default): it copies
// them into the database file and fsyncs both files, a disk wait that falls on whichever
// single-note commit crosses the threshold and, on average, costs POST /ingest more than the
// commit itself. Here a worker thread with its own connection runs the same PASSIVE checkpoint
// (the same pages copied, the same fsyncs: the same durability), asked after every
// WRITES_PER_CHECKPOINT written documents, never while one is running.
//
// The writer keeps SQLite's own checkpoint as a backstop at LIMIT_PAGES. Under a load with no
// pause the WAL never starts over from the worker's checkpoints alone (it restarts only when a
// write begins with every page already copied, and commits land while the worker copies), so
// it grows to LIMIT_PAGES; the writer's checkpoint then has only the pages the worker has not
// copied yet, and the next write restarts the WAL.
import type { Database } from "bun:sqlite";
import { log } from "../../../../../common/logger";

const logger = log("index");

/** Written documents (index writes) between two checkpoint requests. */
const WRITES_PER_CHECKPOINT = 32;
/** The writer's own checkpoint, past this many WAL pages (~40 MB). */
const LIMIT_PAGES = 10_000;
/** close() waits this long for a checkpoint in progress. */
const CLOSE_WAIT_MS = 10_000;

export type CheckpointRequest = { open: string } | "checkpoint" | "close";
export type CheckpointReply = "done" | "closed" | { failed: string };

export class BackgroundCheckpointer {
  /** Started with the first checkpoint: a router that only serves searches never needs the thread. */
  private worker: Worker | undefined;
  private writes = 0;
  private inFlight = false;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly file: string,
  ) {
    db.run(`PRAGMA wal_autocheckpoint = ${LIMIT_PAGES}`);
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL("./worker.ts", import.meta.url));
    this.worker = worker;
    // Never what keeps the process alive.
    worker.unref();
    worker.addEventListener("message", (event: MessageEvent<CheckpointReply>) => {
      const reply = event.data;
      if (reply === "done") {
        this.inFlight = false;
        if (this.writes >= WRITES_PER_CHECKPOINT) this.request();
      } else if (typeof reply === "object") {
        this.fallBack(`the background checkpoint failed (${reply.failed})`);
      }
    });
    worker.addEventListener("error", (event) => this.fallBack(`the checkpoint thread failed (${event.message})`));
    worker.postMessage({ open: this.file } satisfies CheckpointRequest);
    return worker;
  }

  /** After each commit: `writes` documents were written. */
  committed(writes: number): void {
    this.writes += writes;
    if (this.writes >= WRITES_PER_CHECKPOINT && !this.inFlight) this.request();
  }

  private request(): void {
    if (this.stopped) return;
    this.writes = 0;
    this.inFlight = true;
    this.thread().postMessage("checkpoint" satisfies CheckpointRequest);
  }

  /** The thread cannot checkpoint: SQLite's own checkpoint takes over at its default limit. */
  private fallBack(why: string): void {
    if (this.stopped) return;
    this.stopped = true;
    logger.warn(`${why}; the index checkpoints its WAL in the writing call again`);
    try {
      this.db.run("PRAGMA wal_autocheckpoint = 1000");
    } catch {}
    this.worker?.terminate();
  }

  /** Stops the thread once a checkpoint in progress is done; the writer's close checkpoints the rest. */
  async close(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const worker = this.worker;
    if (!worker) return;
    const closed = new Promise<void>((resolve) => {
      worker.addEventListener("message", (event: MessageEvent<CheckpointReply>) => {
        if (event.data === "closed") resolve();
      });
      worker.addEventListener("close", () => resolve());
    });
    worker.postMessage("close" satisfies CheckpointRequest);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)))]);
    clearTimeout(timer);
    worker.terminate();
  }
}
