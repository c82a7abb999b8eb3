// The signal event stream behind GET /signal: every recorded signal becomes an event with an
// id from the shared signal log (log.ts: Redis Stream, else the journal file under its lock),
// so ids are unique across the router processes of one vault and every process's subscribers
// get every event, in id order. A ring of recent events serves resume: a subscriber that comes
// back with Last-Event-ID gets what it missed from the ring, then live events — registered in
// the same synchronous step, so nothing falls between the replay and the live feed and nothing
// arrives twice.
import { log } from "../../common/logger";
import { journalLog } from "./journal-log";
import { memoryLog, type SignalEvent, type SignalLog } from "./log";

export type { SignalEvent } from "./log";

const logger = log("signals");

export interface Subscription {
  /** Events after the subscriber's Last-Event-ID, oldest first. */
  backlog: SignalEvent[];
  /** True when Last-Event-ID was older than the ring: some events are no longer kept. */
  gap: boolean;
  unsubscribe(): void;
}

export interface SignalHubOptions {
  /** The journal file (JSON lines); undefined keeps events in memory only. Ignored when `log` is given. */
  journal?: string;
  /** The log shared with other processes (default: the journal, else memory). */
  log?: SignalLog;
  /** Events kept for resume (default 5,000). */
  ringSize?: number;
}

type Listener = { onEvent: (e: SignalEvent) => void; onClose: () => void };

export class SignalHub {
  private ring: SignalEvent[] = [];
  private delivered = 0;
  private readonly listeners = new Set<Listener>();
  private readonly ringSize: number;
  private readonly log: SignalLog;
  private appends = new Set<Promise<unknown>>();
  private closed = false;

  constructor(opts: SignalHubOptions = {}) {
    this.ringSize = opts.ringSize ?? 5_000;
    this.log = opts.log ?? (opts.journal ? journalLog(opts.journal, { keep: this.ringSize }) : memoryLog());
  }

  get kind(): string {
    return this.log.kind;
  }

  /** Loads the newest events (ids continue where the log stopped) and starts following the log. */
  async open(): Promise<void> {
    this.ring = await this.log.open(this.ringSize);
    this.delivered = this.ring.at(-1)?.id ?? 0;
    this.log.follow(this.delivered, (events) => this.deliver(events));
  }

  get lastId(): number {
    return this.delivered;
  }

  get subscribers(): number {
    return this.listeners.size;
  }

  /** Records an event in the shared log; every process's subscribers get it from there. */
  publish(event: string, data: Record<string, unknown>): Promise<SignalEvent | undefined> {
    const p = this.log.append(event, data).then(
      (e) => {
        this.log.kick();
        return e;
      },
      (err: Error) => {
        logger.error(`signal event not recorded in the ${this.log.kind} log: ${err.message}`);
        return undefined;
      },
    );
    this.appends.add(p);
    void p.finally(() => this.appends.delete(p));
    return p;
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

  /** Ends every subscription (shutdown) and waits for pending appends. */
  async close(): Promise<void> {
    this.closed = true;
    for (const l of [...this.listeners]) l.onClose();
    this.listeners.clear();
    await Promise.all([...this.appends]);
    await this.log.close();
  }

  private deliver(events: SignalEvent[]): void {
    for (const e of events) {
      if (e.id <= this.delivered) continue;
      this.delivered = e.id;
      this.ring.push(e);
      for (const l of this.listeners) l.onEvent(e);
    }
    if (this.ring.length > this.ringSize) this.ring.splice(0, this.ring.length - this.ringSize);
  }
}
