// The shared SSE helper over a loopback Bun server: framing, keep-alive, Last-Event-ID, cancel.
import { afterAll, describe, expect, it } from "bun:test";
import { until } from "../../../test/support/until";
import { httpErrorOf } from "../http-error";
import { eventIdOf, formatEvent, lastEventIdOf, sseResponse, sseStream } from "./sse";

let cancelled = 0;
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    const path = new URL(req.url).pathname;
    if (path === "/quiet") {
      return sseResponse(sseStream({ keepAliveMs: 50, onCancel: () => void cancelled++, run: () => new Promise(() => {}) }));
    }
    return sseResponse(
      sseStream({
        run: async (sink) => {
          sink.event({ id: 7, event: "signal\nid: 99", data: "line one\nline two" });
          sink.event({ data: { last: lastEventIdOf(req) ?? null } });
        },
      }),
    );
  },
});
afterAll(() => server.stop(true));
const base = `http://127.0.0.1:${server.port}`;

describe("sseStream", () => {
  it("frames events: one data line per line, no line break in a field, and ends when run resolves", async () => {
    const res = await fetch(`${base}/`, { headers: { "last-event-id": " 41 " } });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect(res.headers.get("cache-control")).toContain("no-cache");
    expect(await res.text()).toBe('event: signal id: 99\nid: 7\ndata: line one\ndata: line two\n\ndata: {"last":"41"}\n\n');
  });

  it("reads Last-Event-ID from ?last_event_id= when the header is absent", async () => {
    expect(await (await fetch(`${base}/?last_event_id=12`)).text()).toContain('{"last":"12"}');
  });

  it("sends a keep-alive comment while quiet, and reports the client going away", async () => {
    const ac = new AbortController();
    const res = await fetch(`${base}/quiet`, { signal: ac.signal });
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toBe(": keep-alive\n\n");
    ac.abort();
    await until(() => cancelled > 0, { ms: 5_000, what: "the stream to be cancelled" });
    expect(cancelled).toBe(1);
  });
});

describe("formatEvent", () => {
  it("sends a blank data line for empty data", () => {
    expect(formatEvent({ data: "" })).toBe("data: \n\n");
  });
});

describe("eventIdOf", () => {
  it("reads a whole-number id, spaces aside, and none when the client sent none", () => {
    expect(eventIdOf("42")).toBe(42);
    expect(eventIdOf(" 7 ")).toBe(7);
    expect(eventIdOf(undefined)).toBeUndefined();
    expect(eventIdOf("  ")).toBeUndefined();
  });

  it("refuses what is not an id of the stream, as the caller's mistake", () => {
    for (const bad of ["-1", "1.5", "abc", "1e3", "1234567890123456"]) {
      let refused: unknown;
      try {
        eventIdOf(bad);
      } catch (err) {
        refused = err;
      }
      expect(httpErrorOf(refused)).toMatchObject({ status: 400, code: "invalid_request" });
      expect((refused as Error).message).toContain("Last-Event-ID must be an event id");
    }
  });
});
