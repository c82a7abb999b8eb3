// The GET /signal pump on an in-memory hub: replay after Last-Event-ID, the gap event, the
// min_severity filter, and the end when the client goes.
import { describe, expect, it } from "bun:test";
import { until } from "../../../test/support/until";
import type { SseEvent, SseSink } from "../../common/http/sse";
import { SignalHub } from "./hub";
import { signalPump } from "./stream";

function sink() {
  const events: SseEvent[] = [];
  const s: SseSink & { events: SseEvent[] } = { closed: false, events, write: () => {}, event: (e) => void events.push(e), comment: () => {} };
  return s;
}

async function hub(ringSize?: number) {
  const h = new SignalHub({ ringSize });
  await h.open();
  return h;
}

const signal = (severity: string, title: string) => ({ severity, title });
const titles = (s: { events: SseEvent[] }) => s.events.filter((e) => e.event === "signal").map((e) => (e.data as { title: string }).title);

describe("signalPump", () => {
  it("replays what came after Last-Event-ID, then passes on live signals", async () => {
    const h = await hub();
    const first = await h.publish("signal", signal("high", "one"));
    await h.publish("signal", signal("high", "two"));
    const out = sink();
    const pump = signalPump(h, { lastId: Number(first!.id) });
    const running = pump.run(out);
    await until(() => titles(out).length === 1);
    await h.publish("signal", signal("low", "three"));
    await until(() => titles(out).length === 2);
    pump.stop();
    await running;
    expect(titles(out)).toEqual(["two", "three"]);
  });

  it("leaves out signals below min_severity", async () => {
    const h = await hub();
    for (const [sev, t] of [
      ["info", "a"],
      ["critical", "b"],
      ["medium", "c"],
      ["high", "d"],
    ])
      await h.publish("signal", signal(sev!, t!));
    const out = sink();
    const pump = signalPump(h, { lastId: 0, minSeverity: "high" });
    const running = pump.run(out);
    await until(() => titles(out).length === 2);
    pump.stop();
    await running;
    expect(titles(out)).toEqual(["b", "d"]);
  });

  it("says so with a gap event when Last-Event-ID is older than the kept ring", async () => {
    const h = await hub(2);
    for (const t of ["a", "b", "c", "d"]) await h.publish("signal", signal("high", t));
    const out = sink();
    const pump = signalPump(h, { lastId: 1 });
    const running = pump.run(out);
    await until(() => titles(out).length === 2);
    pump.stop();
    await running;
    expect(out.events[0]).toMatchObject({ event: "gap", data: { last_event_id: 1 } });
    expect(titles(out)).toEqual(["c", "d"]);
  });
});
