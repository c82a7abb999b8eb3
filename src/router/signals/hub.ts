// The signal event stream behind GET /signal: every recorded signal becomes an event with a
// monotonic id, kept in a ring (and a journal under the data directory, so ids and the
// backlog survive a restart). A subscriber that comes back with Last-Event-ID gets what it
// missed from the ring, then live events — registered in the same synchronous step, so
// nothing falls between the replay and the live feed and nothing arrives twice.
import { appendFile, mkdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { log } from "../../common/logger";

const logger = log("signals");

export interface SignalEvent {
  id: number;
  /** SSE event name: "signal". */
  event: string;
  data: Record<string, unknown>;
}

export interface Subscription {
  /** Events after the subscriber's Last-Event-ID, oldest first. */
  backlog: SignalEvent[];
  /** True when Last-Event-ID was older than the ring: some events are no longer kept. */
  gap: boolean;
  unsubscribe(): void;
}

export interface SignalHubOptions {
  /** The journal file (JSON lines); undefined keeps events in memory only. */
  journal?: string;
  /** Events kept for resume (default 5,000). */
  ringSize?: number;
}

type Listener = { onEvent: (e: SignalEvent) => void; onClose: () => void };

export class SignalHub {
  private ring: SignalEvent[] = [];
  private nextId = 1;
  private readonly listeners = new Set<Listener>();
  private readonly ringSize: number;
  private writes: Promise<void> = Promise.resolve();
  private journalLines = 0;
  private closed = false;

  constructor(private readonly opts: SignalHubOptions = {}) {
    this.ringSize = opts.ringSize ?? 5_000;
  }

  /** Loads the journal's tail (ids continue where the last process stopped). */
  async open(): Promise<void> {
    if (!this.opts.journal) return;
    await mkdir(dirname(this.opts.journal), { recursive: true });
    const text = await readFile(this.opts.journal, "utf8").catch(() => "");
    const events: SignalEvent[] = [];
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      try {
        const e = JSON.parse(line) as SignalEvent;
        if (typeof e.id === "number" && typeof e.event === "string") events.push(e);
      } catch {
        // A torn last line (the process died mid-append) is skipped.
      }
    }
    this.journalLines = events.length;
    this.ring = events.slice(-this.ringSize);
    this.nextId = (events.at(-1)?.id ?? 0) + 1;
  }

  get lastId(): number {
    return this.nextId - 1;
  }

  get subscribers(): number {
    return this.listeners.size;
  }

  /** Records an event and hands it to every subscriber now; the journal append follows. */
  publish(event: string, data: Record<string, unknown>): SignalEvent {
    const e: SignalEvent = { id: this.nextId++, event, data };
    this.ring.push(e);
    if (this.ring.length > this.ringSize) this.ring.splice(0, this.ring.length - this.ringSize);
    for (const l of this.listeners) l.onEvent(e);
    if (this.opts.journal) this.writes = this.writes.then(() => this.append(e)).catch((err) => logger.error(`signal journal: ${(err as Error).message}`));
    return e;
  }

  subscribe(lastEventId: number | undefined, onEvent: (e: SignalEvent) => void, onClose: () => void = () => {}): Subscription {
    const listener: Listener = { onEvent, onClose };
    let backlog: SignalEvent[] = [];
    let gap = false;
    if (lastEventId !== undefined) {
      backlog = this.ring.filter((e) => e.id > lastEventId);
      const oldest = this.ring[0]?.id;
      gap = oldest !== undefined && lastEventId < oldest - 1;
    }
    if (this.closed) onClose();
    else this.listeners.add(listener);
    return { backlog, gap, unsubscribe: () => void this.listeners.delete(listener) };
  }

  /** Ends every subscription (shutdown) and waits for the journal. */
  async close(): Promise<void> {
    this.closed = true;
    for (const l of [...this.listeners]) l.onClose();
    this.listeners.clear();
    await this.writes;
  }

  private async append(e: SignalEvent): Promise<void> {
    const journal = this.opts.journal!;
    await appendFile(journal, `${JSON.stringify(e)}\n`);
    this.journalLines++;
    // Keep the journal about twice the ring: rewrite it with the ring alone when it grows past that.
    if (this.journalLines > this.ringSize * 2) {
      // Only events up to this one: later ones are still queued for their own append.
      const kept = this.ring.filter((x) => x.id <= e.id);
      await writeFileAtomic(journal, kept.map((x) => JSON.stringify(x)).join("\n") + "\n");
      this.journalLines = kept.length;
    }
  }
}
