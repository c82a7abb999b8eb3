// The MCP session pool: caps per credential and in all (429 with Retry-After), idle sweep.
import { describe, expect, it } from "bun:test";
import type { HttpError } from "../errors";
import { McpSessions } from "./sessions";

const held = () => {
  const h = {
    closed: false,
    close: async () => {
      h.closed = true;
    },
  };
  return h;
};
const refusal = (fn: () => void): HttpError => {
  try {
    fn();
  } catch (err) {
    return err as HttpError;
  }
  throw new Error("expected a refusal");
};

describe("McpSessions", () => {
  it("refuses a credential past perClient with 429 and a Retry-After, others still admitted", () => {
    const pool = new McpSessions({ perClient: 2, total: 10, idleMs: 60_000 });
    pool.admit("a");
    pool.add("1", "sse", "a", held());
    pool.add("2", "streamable", "a", held());
    const err = refusal(() => pool.admit("a"));
    expect(err.status).toBe(429);
    expect(err.code).toBe("too_many_sessions");
    expect(Number(err.headers!["Retry-After"])).toBeGreaterThan(50);
    expect(() => pool.admit("b")).not.toThrow();
  });

  it("refuses anyone past total", () => {
    const pool = new McpSessions({ perClient: 5, total: 2, idleMs: 60_000 });
    pool.add("1", "sse", "a", held());
    pool.add("2", "sse", "b", held());
    expect(refusal(() => pool.admit("c")).status).toBe(429);
  });

  it("closes sessions idle past idleMs; use() finds a session of its kind only", () => {
    const pool = new McpSessions({ perClient: 5, total: 5, idleMs: 1_000 });
    const idle = held();
    const busy = held();
    pool.add("idle", "sse", "a", idle);
    pool.add("busy", "streamable", "a", busy);
    pool.sweep(Date.now() + 500);
    expect(pool.size).toBe(2);
    expect(pool.use("busy", "streamable")).toBe(busy);
    expect(pool.use("busy", "sse")).toBeUndefined();
    // "busy" was used just now: 1.2 s after "idle" was last used, but not after "busy".
    (pool as any).map.get("idle").lastSeen -= 1_200;
    pool.sweep();
    expect(idle.closed).toBe(true);
    expect(busy.closed).toBe(false);
    expect(pool.size).toBe(1);
    void pool.close();
    expect(busy.closed).toBe(true);
  });
});
