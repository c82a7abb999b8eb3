// The small key-value store jobs, sessions and visibility maps sit on: Redis when REDIS_URL is
// set, files under a directory otherwise (DESIGN: "Embedded defaults, real engines when configured").
// Both implementations follow Redis semantics, so code tested against one runs on the other.

export interface KeyValueStore {
  readonly kind: "redis" | "file";
  get(key: string): Promise<string | null>;
  /** Replaces the value; without ttlSeconds the key never expires (like Redis SET). */
  set(key: string, value: string, opts?: { ttlSeconds?: number }): Promise<void>;
  /** Sets only when absent; true when it set it (Redis SET NX). */
  setIfAbsent(key: string, value: string, opts?: { ttlSeconds?: number }): Promise<boolean>;
  delete(key: string): Promise<boolean>;
  /** Keys (without the store's own prefix) starting with `prefix`, any order. */
  keys(prefix: string): Promise<string[]>;
  /**
   * Append to a capped list (newest last), keep at most `max` entries; optional TTL on the list.
   * Without ttlSeconds an existing TTL is kept (like Redis RPUSH).
   */
  listPush(key: string, value: string, opts?: { max?: number; ttlSeconds?: number }): Promise<void>;
  listRange(key: string): Promise<string[]>;
  /** Is the backing store answering right now? */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** Milliseconds for a TTL option; both stores reject what Redis would reject. */
export function ttlMs(ttlSeconds: number | undefined): number | undefined {
  if (ttlSeconds === undefined) return undefined;
  if (!Number.isFinite(ttlSeconds) || ttlSeconds <= 0) {
    throw new RangeError(`ttlSeconds must be a positive number, got ${ttlSeconds}`);
  }
  return Math.max(1, Math.round(ttlSeconds * 1000));
}

/** The list cap option, checked: LTRIM with 0 or a fraction would silently mean something else. */
export function listMax(max: number | undefined): number | undefined {
  if (max === undefined) return undefined;
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`max must be a positive integer, got ${max}`);
  return max;
}
