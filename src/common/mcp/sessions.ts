// The open MCP sessions of one process (Streamable HTTP sessions and HTTP+SSE streams), with the
// limits that keep one client from holding them all: at most `perClient` per credential (the
// bearer token, or the client address when the service runs without one), at most `total` in
// all, and a session idle for `idleMs` (no request on it) is closed. Over a limit the answer is
// 429 with Retry-After: when the client's oldest session will have timed out.
import { HttpError } from "../errors";

export interface McpLimits {
  /** Sessions one credential may hold open. */
  perClient: number;
  /** Sessions of the whole process. */
  total: number;
  /** A session with no request for this long is closed. */
  idleMs: number;
}

const DEFAULT_MCP_LIMITS: McpLimits = { perClient: 64, total: 1000, idleMs: 30 * 60_000 };

export type SessionKind = "streamable" | "sse";

export interface SessionEntry<T> {
  kind: SessionKind;
  owner: string;
  value: T;
  lastSeen: number;
}

export interface Closable {
  close(): Promise<void>;
}

export class McpSessions<T extends Closable = Closable> {
  private readonly map = new Map<string, SessionEntry<T>>();
  private sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(readonly limits: McpLimits = DEFAULT_MCP_LIMITS) {}

  get size(): number {
    return this.map.size;
  }

  count(kind: SessionKind): number {
    let n = 0;
    for (const s of this.map.values()) if (s.kind === kind) n++;
    return n;
  }

  /** Throws 429 (Retry-After) when `owner` may not open another session now. */
  admit(owner: string): void {
    this.sweep();
    const mine = [...this.map.values()].filter((s) => s.owner === owner);
    if (mine.length >= this.limits.perClient) {
      throw tooMany(
        `this credential holds ${mine.length} MCP sessions, the most one may (MCP_MAX_SESSIONS_PER_CLIENT); close one (DELETE /mcp or end its stream) or wait`,
        this.retryAfter(mine),
      );
    }
    if (this.map.size >= this.limits.total) {
      throw tooMany(`the server holds ${this.map.size} MCP sessions, its limit (MCP_MAX_SESSIONS); try again later`, this.retryAfter([...this.map.values()]));
    }
  }

  add(id: string, kind: SessionKind, owner: string, value: T): void {
    this.map.set(id, { kind, owner, value, lastSeen: Date.now() });
    this.startSweeper();
  }

  /** The session, marked as used now; undefined when unknown (or closed). */
  use(id: string | undefined, kind: SessionKind): T | undefined {
    const s = id ? this.map.get(id) : undefined;
    if (!s || s.kind !== kind) return undefined;
    s.lastSeen = Date.now();
    return s.value;
  }

  delete(id: string): void {
    this.map.delete(id);
    if (this.map.size === 0) this.stopSweeper();
  }

  /** Closes sessions idle past the limit. */
  sweep(now = Date.now()): void {
    const cutoff = now - this.limits.idleMs;
    for (const [id, s] of this.map) {
      if (s.lastSeen < cutoff) {
        this.map.delete(id);
        void s.value.close().catch(() => {});
      }
    }
    if (this.map.size === 0) this.stopSweeper();
  }

  /** Ends every session (shutdown). */
  async close(): Promise<void> {
    const all = [...this.map.values()];
    this.map.clear();
    this.stopSweeper();
    await Promise.allSettled(all.map((s) => s.value.close()));
  }

  private retryAfter(sessions: SessionEntry<T>[]): number {
    const oldest = Math.min(...sessions.map((s) => s.lastSeen));
    return Math.max(1, Math.ceil((oldest + this.limits.idleMs - Date.now()) / 1000));
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    const every = Math.min(30_000, Math.max(250, Math.floor(this.limits.idleMs / 4)));
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref?.();
  }

  private stopSweeper(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }
}

const tooMany = (message: string, retryAfter: number) => new HttpError(429, "too_many_sessions", message, undefined, { "Retry-After": String(retryAfter) });
