// GET /health/pipeline: every rule of the spec's table, each from a vault built into the
// broken state, plus the fresh vault (all ok) and the capped scan.
import { describe, expect, it } from "bun:test";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { putFile, type TestRouter, useTestRouters } from "./support/router-runtime";

type Json = Record<string, any>;

const router = useTestRouters();
const put = putFile;

async function report(r: TestRouter): Promise<{ status: string; stages: Json[]; stage: (name: string) => Json; body: Json }> {
  const res = await r.call("/health/pipeline");
  expect(res.status).toBe(200);
  return { status: res.body.status, stages: res.body.stages, stage: (name) => res.body.stages.find((s: Json) => s.name === name), body: res.body };
}

const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000);
const lesson = (content = "Pin base image digests; tags move under you.") => ({ type: "lesson", content, attrs: { source: "claude", session_id: "s1" } });

describe("GET /health/pipeline", () => {
  it("reports seven stages in order, all ok, on a fresh vault", async () => {
    const r = await router();
    const rep = await report(r);
    expect(rep.stages.map((s) => s.name)).toEqual(["ingest", "drain", "arcs", "lessons", "signals", "feed", "index"]);
    for (const s of rep.stages) {
      expect(s.verdict).toBe("ok");
      expect(typeof s.message).toBe("string");
      expect(typeof s.evidence).toBe("object");
    }
    expect(rep.status).toBe("ok");
  });

  it("is all ok or warn right after one ingest and one marker of each kind, before any tick", async () => {
    const r = await router();
    expect((await r.call("/ingest", { content: "# Rollbacks\nRoll back with make rollback.", tags: [] })).status).toBeLessThan(300);
    for (const body of [
      lesson(),
      { type: "signal", content: "Pipeline red", attrs: { severity: "high" } },
      { type: "decision", content: "Use Postgres" },
      { type: "milestone", content: "v1 shipped" },
    ]) {
      expect((await r.call("/marker", body)).status).toBe(201);
    }
    const rep = await report(r);
    expect(rep.stages.filter((s) => s.verdict === "fail")).toEqual([]);
    expect(rep.stage("index").verdict).toBe("ok");
    expect(rep.stage("signals").verdict).toBe("ok");
    expect(rep.status).not.toBe("fail");
  });

  it("stays all ok after markers of every kind and a tick", async () => {
    const r = await router();
    put(r.vault, "raw/deploys.md", "# Deploys\nRoll back with make rollback.\n");
    for (const body of [
      lesson(),
      { type: "signal", content: "Pipeline red", attrs: { severity: "high" } },
      { type: "decision", content: "Use Postgres" },
      { type: "milestone", content: "v1 shipped" },
    ]) {
      expect((await r.call("/marker", body)).status).toBe(201);
    }
    expect((await r.call("/tick", { wait: true })).body.status).toBe("succeeded");
    const rep = await report(r);
    expect(rep.stages.filter((s) => s.verdict !== "ok")).toEqual([]);
  });

  describe("ingest", () => {
    it("warns when no marker arrived for PIPELINE_MARKER_QUIET_HOURS", async () => {
      const r = await router({ PIPELINE_MARKER_QUIET_HOURS: "48" });
      const old = hoursAgo(50).toISOString();
      const record = {
        id: "mk_0000000000000001",
        type: "lesson",
        content: "old",
        attrs: {},
        ts: old,
        received_at: old,
        source: "api",
        session_id: null,
        path: "left/reference/x.md",
        written: true,
        origin: "api",
        key_source: "body",
      };
      put(r.vault, `brain-feed/markers/${old.slice(0, 10)}.jsonl`, `${JSON.stringify(record)}\n`);
      const s = (await report(r)).stage("ingest");
      expect(s.verdict).toBe("warn");
      expect(s.message).toContain("PIPELINE_MARKER_QUIET_HOURS");
      expect(s.evidence.last_marker_at).toBe(old);
    });

    it("defaults PIPELINE_MARKER_QUIET_HOURS to 72", async () => {
      const journalAt = (h: number) => {
        const at = hoursAgo(h).toISOString();
        return {
          line: `${JSON.stringify({ id: `mk_${String(h).padStart(16, "0")}`, type: "lesson", content: "x", attrs: {}, ts: at, received_at: at, source: "api", session_id: null, path: "left/reference/x.md", written: true, origin: "api", key_source: "body" })}\n`,
          day: at.slice(0, 10),
        };
      };
      const quietish = await router();
      const recent = journalAt(70);
      put(quietish.vault, `brain-feed/markers/${recent.day}.jsonl`, recent.line);
      expect((await report(quietish)).stage("ingest")).toMatchObject({ verdict: "ok", evidence: { quiet_hours: 72 } });
      const quiet = await router();
      const old = journalAt(74);
      put(quiet.vault, `brain-feed/markers/${old.day}.jsonl`, old.line);
      expect((await report(quiet)).stage("ingest")).toMatchObject({ verdict: "warn", evidence: { quiet_hours: 72 } });
    });

    it("is ok right after a marker", async () => {
      const r = await router();
      await r.call("/marker", lesson());
      expect((await report(r)).stage("ingest")).toMatchObject({ verdict: "ok", evidence: { last_marker_type: "lesson" } });
    });
  });

  describe("drain", () => {
    it("fails when tick requests pile up unconsumed", async () => {
      const r = await router({ PIPELINE_DRAIN_STALE_MINUTES: "30" });
      const stamp = hoursAgo(2)
        .toISOString()
        .replace(/[-:]/g, "")
        .replace(/\.\d+Z$/, "Z");
      put(r.vault, `brain-feed/ticks/requested/${stamp}-abc123abc123.json`, JSON.stringify({ tick_id: "abc123abc123", status: "queued" }));
      const s = (await report(r)).stage("drain");
      expect(s.verdict).toBe("fail");
      expect(s.message).toContain("pile up unconsumed");
      expect(s.evidence).toMatchObject({ requested: 1 });
      expect(s.evidence.oldest_waiting_minutes).toBeGreaterThanOrEqual(119);
    });

    it("counts a running tick as consumed: ok while young, warn once it runs past the limit", async () => {
      const r = await router({ PIPELINE_DRAIN_STALE_MINUTES: "30" });
      const requestedAt = hoursAgo(2);
      const stamp = requestedAt
        .toISOString()
        .replace(/[-:]/g, "")
        .replace(/\.\d+Z$/, "Z");
      const running = (startedAt: Date) =>
        put(
          r.vault,
          `brain-feed/ticks/requested/${stamp}-feed0000beef.json`,
          JSON.stringify({ tick_id: "feed0000beef", status: "running", requested_at: requestedAt.toISOString(), started_at: startedAt.toISOString() }),
        );
      running(new Date(Date.now() - 5 * 60_000));
      const young = (await report(r)).stage("drain");
      expect(young).toMatchObject({ verdict: "ok", evidence: { requested: 0, running: { tick_id: "feed0000beef", running_minutes: 5 } } });
      running(hoursAgo(1));
      const long = (await report(r)).stage("drain");
      expect(long.verdict).toBe("warn");
      expect(long.message).toContain("has been running for 60 min");
    });

    it("fails when the most recent tick failed, quoting its error_tail", async () => {
      const r = await router();
      // The harvest state cannot be written where a folder squats its name: the tick fails.
      mkdirSync(join(r.vault, ".brain", "tick", "harvest-state.json", "squatter"), { recursive: true });
      const tick = await r.call("/tick", { wait: true });
      expect(tick.body.status).toBe("failed");
      expect(tick.body.error_tail).toContain("harvest-state.json");
      const s = (await report(r)).stage("drain");
      expect(s.verdict).toBe("fail");
      expect(s.evidence.error_tail).toBe(tick.body.error_tail);
      expect(s.evidence.last_tick).toMatchObject({ tick_id: tick.body.tick_id, status: "failed" });
      expect(s.message).toContain(tick.body.tick_id);
    });
  });

  it("arcs: fails when arcs exist but hot-arcs.md was never written", async () => {
    const r = await router();
    put(r.vault, "arcs/arc-0badc0de.md", "---\nid: arc-0badc0de\ntype: arc\nstatus: hot\n---\n\n# An arc\n");
    const s = (await report(r)).stage("arcs");
    expect(s.verdict).toBe("fail");
    expect(s.message).toContain("hot-arcs.md was never written");
    expect(s.evidence).toMatchObject({ arc_records: 1, hot_arcs_md: { exists: false } });
  });

  describe("lessons", () => {
    it("fails when a lesson log sits outside left/reference/", async () => {
      const r = await router();
      put(r.vault, "raw/old/lessons-2026-01-05.md", "---\ntype: lesson-log\n---\n\n# Lessons\n");
      const s = (await report(r)).stage("lessons");
      expect(s.verdict).toBe("fail");
      expect(s.evidence.misplaced_logs).toEqual(["raw/old/lessons-2026-01-05.md"]);
    });

    it("warns while a lesson waits for the first tick, naming when the next one is due", async () => {
      const r = await router({ TICK_INTERVAL_SECONDS: "3600" });
      await r.call("/marker", lesson());
      const s = (await report(r)).stage("lessons");
      expect(s.verdict).toBe("warn");
      expect(s.message).toContain("wait for the next tick");
      const due = Date.parse(s.evidence.next_tick_at);
      expect(due).toBeGreaterThan(Date.now() + 3_500_000);
      expect(s.message).toContain(s.evidence.next_tick_at);
    });

    it("fails when lessons exist but the feed is missing after a tick ran", async () => {
      const r = await router();
      await r.call("/marker", lesson());
      expect((await r.call("/tick", { wait: true })).body.status).toBe("succeeded");
      rmSync(join(r.vault, "brain-feed", "tick-lessons.md"));
      const s = (await report(r)).stage("lessons");
      expect(s.verdict).toBe("fail");
      expect(s.message).toContain("the feed is missing");
    });

    it("fails when recent lessons yield an empty feed", async () => {
      const r = await router();
      await r.call("/marker", lesson());
      put(
        r.vault,
        "brain-feed/tick-lessons.md",
        `---\nid: tick-lessons\ntitle: Recent lessons\npriority: 3\nttl: 86400\nseverity: info\ncreated: ${new Date().toISOString()}\nkind: lessons\n---\n\nNothing here.\n`,
      );
      const s = (await report(r)).stage("lessons");
      expect(s.verdict).toBe("fail");
      expect(s.message).toContain("yield an empty feed");
      expect(s.evidence.feed_entry).toMatchObject({ items: 0 });
    });

    it("fails when the lessons entry has expired while lessons are recent", async () => {
      const r = await router();
      await r.call("/marker", lesson());
      put(
        r.vault,
        "brain-feed/tick-lessons.md",
        `---\nid: tick-lessons\ntitle: Recent lessons\npriority: 3\nttl: 3600\nseverity: info\ncreated: ${hoursAgo(5).toISOString()}\nkind: lessons\n---\n\n- 2026 (x) a lesson\n`,
      );
      const s = (await report(r)).stage("lessons");
      expect(s.verdict).toBe("fail");
      expect(s.evidence.feed_entry).toMatchObject({ expired: true });
    });
  });

  describe("signals", () => {
    it("has the signal in signals.md (and the feed) as soon as it is recorded", async () => {
      const r = await router();
      await r.call("/marker", { type: "signal", content: "Disk full on db-1", attrs: { severity: "critical", source: "pager" } });
      expect(readFileSync(join(r.vault, "signals.md"), "utf8")).toContain("Disk full on db-1");
      expect((await r.call("/feed")).body.signals.map((x: Json) => x.title)).toContain("Disk full on db-1");
      expect((await report(r)).stage("signals").verdict).toBe("ok");
    });

    it("fails when signal files exist but signals.md was never written", async () => {
      const r = await router();
      await r.call("/marker", { type: "signal", content: "Disk full on db-1", attrs: { severity: "critical", source: "pager" } });
      rmSync(join(r.vault, "signals.md"));
      const s = (await report(r)).stage("signals");
      expect(s.verdict).toBe("fail");
      expect(s.message).toContain("signals.md was never written");
    });

    it("names a hand-made file in amygdala/ that is not a signal, with a fix a tick cannot make for it", async () => {
      const r = await router();
      put(r.vault, "amygdala/outage-notes.md", "# Outage notes\nThe db fell over.\n");
      const s = (await report(r)).stage("signals");
      expect(s.verdict).toBe("warn");
      expect(s.message).toContain("amygdala/outage-notes.md: its frontmatter lacks `type: signal`");
      expect(s.message).not.toContain("run a tick");
      expect(s.evidence.not_signals).toEqual([{ path: "amygdala/outage-notes.md", why: "its frontmatter lacks `type: signal`" }]);
      // A tick does not clear it (it lists signals only) ...
      expect((await r.call("/tick", { wait: true })).body.status).toBe("succeeded");
      expect((await report(r)).stage("signals").verdict).toBe("warn");
      // ... the advice does: with `type: signal` and `created` it is a signal, and the next tick lists it.
      put(r.vault, "amygdala/outage-notes.md", `---\ntype: signal\nseverity: low\ncreated: ${new Date().toISOString()}\n---\n\nThe db fell over.\n`);
      expect((await r.call("/tick", { wait: true })).body.status).toBe("succeeded");
      const after = (await report(r)).stage("signals");
      expect(after.verdict).toBe("ok");
      expect(after.evidence.not_signals).toEqual([]);
      expect(readFileSync(join(r.vault, "signals.md"), "utf8")).toContain("The db fell over.");
    });

    it("still fails, saying to run a tick, when real signals sit beside a hand-made file and signals.md is missing", async () => {
      const r = await router();
      await r.call("/marker", { type: "signal", content: "Disk full on db-1", attrs: { severity: "critical", source: "pager" } });
      put(r.vault, "amygdala/scratch.md", "just a note\n");
      rmSync(join(r.vault, "signals.md"));
      const s = (await report(r)).stage("signals");
      expect(s.verdict).toBe("fail");
      expect(s.message).toContain("run a tick");
      expect((await r.call("/tick", { wait: true })).body.status).toBe("succeeded");
      expect((await report(r)).stage("signals").verdict).toBe("warn");
    });

    it("warns when signals.md has not been swept for SIGNAL_TTL_HOURS", async () => {
      const r = await router({ SIGNAL_TTL_HOURS: "24" });
      await r.call("/marker", { type: "signal", content: "Flaky test", attrs: { severity: "low" } });
      put(r.vault, "signals.md", `---\nid: signals\ntype: signals\nswept: ${hoursAgo(30).toISOString()}\n---\n\n# Live signals\n`);
      const s = (await report(r)).stage("signals");
      expect(s.verdict).toBe("warn");
      expect(s.message).toContain("stale");
    });

    it("warns when an open signal is past its TTL and the sweep has not run since", async () => {
      const r = await router({ SIGNAL_TTL_HOURS: "24" });
      await r.call("/marker", { type: "signal", content: "Old alarm", attrs: { severity: "high", ts: hoursAgo(40).toISOString() } });
      put(r.vault, "signals.md", `---\nid: signals\ntype: signals\nswept: ${new Date().toISOString()}\n---\n\n# Live signals\n`);
      const s = (await report(r)).stage("signals");
      expect(s.verdict).toBe("warn");
      expect(s.evidence.overdue_for_sweep).toHaveLength(1);
      // A tick sweeps it: ok again.
      expect((await r.call("/tick", { wait: true })).body.counts.signals_swept).toBe(1);
      expect((await report(r)).stage("signals").verdict).toBe("ok");
    });
  });

  describe("feed", () => {
    it("fails when brain-feed/ holds files but none parse as feed entries", async () => {
      const r = await router();
      put(r.vault, "brain-feed/notes.md", "# just a note\n");
      put(r.vault, "brain-feed/half.md", "---\nid: half\ntitle: Half\n---\n\nno priority, ttl or severity\n");
      const s = (await report(r)).stage("feed");
      expect(s.verdict).toBe("fail");
      expect(s.evidence).toMatchObject({ files: 2, parsed: 0 });
      expect(s.evidence.invalid.map((i: Json) => i.path).sort()).toEqual(["brain-feed/half.md", "brain-feed/notes.md"]);
    });

    it("warns when some files there do not parse", async () => {
      const r = await router();
      put(r.vault, "brain-feed/ok.md", "---\nid: ok\ntitle: Fine\npriority: 5\nttl: 24h\nseverity: info\n---\n\nBody.\n");
      put(r.vault, "brain-feed/notes.md", "# just a note\n");
      expect((await report(r)).stage("feed")).toMatchObject({ verdict: "warn", evidence: { files: 2, parsed: 1 } });
    });
  });

  it("index: fails when source files exist for a producer with no rows in the index", async () => {
    const r = await router();
    put(r.vault, "raw/runbook.md", "# Runbook\nRestart the worker.\n");
    const s = (await report(r)).stage("index");
    expect(s.verdict).toBe("fail");
    expect(s.evidence.missing).toEqual(["raw"]);
    await r.call("/tick", { wait: true });
    expect((await report(r)).stage("index").verdict).toBe("ok");
  });

  it("caps its scans at PIPELINE_SCAN_LIMIT and says so", async () => {
    const r = await router({ PIPELINE_SCAN_LIMIT: "100" });
    for (let i = 0; i < 400; i++) put(r.vault, `raw/n${String(i).padStart(4, "0")}.md`, `# Note ${i}\n`);
    const rep = await report(r);
    expect(rep.stages).toHaveLength(7);
    expect(rep.body.scanned).toBeLessThanOrEqual(100);
    expect(rep.stage("lessons").evidence.truncated).toBe(true);
  });
});
