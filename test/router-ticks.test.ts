// POST /tick, GET /tick/{id} and the tick itself: request files and records, one tick at a
// time, dry runs that write nothing, byte-for-byte no_ai runs, inline markers harvested once,
// arcs, the signal TTL sweep, feed entries, the index refresh, model titles, failures, and
// the in-process scheduler.
import { afterEach, describe, expect, it, spyOn } from "bun:test";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import * as fsp from "node:fs/promises";
import { join } from "node:path";
import { loadRouterConfig } from "../src/router/config";
import { type Gateway, startGateway } from "./fixtures/openai-gateway";
import { tempDir } from "./support/main-process";
import { putFile, startTestRouter, type TestRouter, useTestRouters } from "./support/router-runtime";
import { until } from "./support/until";

type Json = Record<string, any>;

const originalReadFile = fsp.readFile;
const originalFile = Bun.file;

const router = useTestRouters();
const put = putFile;
const gateways: Gateway[] = [];
afterEach(() => {
  for (const g of gateways.splice(0)) g.stop();
});

/** Every file under dir (relative path → content and mtime), dot-folders included. */
function snapshot(dir: string, skip: (rel: string) => boolean = () => false): Map<string, { content: string; mtimeMs: number }> {
  const out = new Map<string, { content: string; mtimeMs: number }>();
  const visit = (rel: string) => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (skip(path)) continue;
      if (e.isDirectory()) visit(path);
      else out.set(path, { content: readFileSync(join(dir, path), "latin1"), mtimeMs: statSync(join(dir, path)).mtimeMs });
    }
  };
  visit("");
  return out;
}

const tick = async (r: TestRouter, body: Json = {}) => {
  const res = await r.call("/tick", { wait: true, ...body });
  expect(res.status).toBe(200);
  return res.body;
};

const NOTE_WITH_MARKERS = `# Retro, sprint 12

We lost a day to a moving base image.

<!-- @lesson source=retro session_id=sprint-12 -->
Pin base image digests; tags move under you.
<!-- @/lesson -->

<!-- @signal severity=high source=retro title="Staging certificate expires Friday" -->
The staging TLS certificate expires on Friday.
<!-- @/signal -->
`;

describe("POST /tick and GET /tick/{id}", () => {
  it("answers 202 with the queued record and a Location, then the record says succeeded", async () => {
    const r = await router();
    const res = await r.call("/tick", {});
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: "queued", trigger: "api", dry_run: false, no_ai: false, started_at: null, error_tail: null });
    expect(res.headers.get("location")).toBe(`/tick/${res.body.tick_id}`);
    let record: Json = res.body;
    await until(
      async () => {
        record = (await r.call(`/tick/${res.body.tick_id}`)).body;
        return record.status === "succeeded" || record.status === "failed";
      },
      { what: "the tick to end", every: 10 },
    );
    expect(record.status).toBe("succeeded");
    expect(record.counts).toMatchObject({ arcs: 0, markers_harvested: 0 });
    expect(Date.parse(record.finished_at)).toBeGreaterThanOrEqual(Date.parse(record.started_at));
    const stamp = res.body.requested_at.replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
    const file = join(r.vault, "brain-feed/ticks/completed", `${stamp}-${res.body.tick_id}.json`);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(record);
    expect(readdirSync(join(r.vault, "brain-feed/ticks/requested"))).toEqual([]);
  });

  it("takes dry_run and no_ai as query flags too", async () => {
    const r = await router();
    const bare = await r.runtime.app.request("/tick?dry_run&no_ai=1", { method: "POST", headers: { authorization: "Bearer router-api-token" } });
    expect(bare.status).toBe(202);
    expect(await bare.json()).toMatchObject({ dry_run: true, no_ai: true });
    expect((await r.call("/tick?no_ai=perhaps", {})).status).toBe(400);
  });

  it("answers 404 for an unknown tick", async () => {
    const r = await router();
    const res = await r.call("/tick/0123456789ab");
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("tick_not_found");
  });

  it("runs one tick at a time, in the order requested", async () => {
    const r = await router();
    put(r.vault, "raw/a.md", "# A\nSome text to index.\n");
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await r.call("/tick", {})).body.tick_id as string);
    const records = [];
    for (const id of ids) records.push((await r.runtime.deps.ticks.wait(id, 20_000))!);
    expect(records.map((x) => x.status)).toEqual(["succeeded", "succeeded", "succeeded", "succeeded"]);
    for (let i = 1; i < records.length; i++) expect(Date.parse(records[i]!.started_at!)).toBeGreaterThanOrEqual(Date.parse(records[i - 1]!.finished_at!));
  });
});

describe("a dry run", () => {
  it("writes nothing anywhere in the vault, and says what it would write", async () => {
    const r = await router({ SIGNAL_TTL_HOURS: "24" });
    put(r.vault, "raw/retro.md", NOTE_WITH_MARKERS);
    await r.call("/marker", { type: "lesson", content: "Roll back first, debug second.", attrs: { session_id: "s1" } });
    await r.call("/marker", { type: "signal", content: "Old alarm", attrs: { severity: "low", ts: new Date(Date.now() - 48 * 3_600_000).toISOString() } });
    await r.runtime.indexer.idle();
    const before = snapshot(r.vault);
    const res = await r.call("/tick", { dry_run: true, wait: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "succeeded", dry_run: true });
    expect(res.body.counts).toMatchObject({ markers_harvested: 2, signals_swept: 1 });
    expect(res.body.plan.writes).toEqual(expect.arrayContaining(["hot-arcs.md", "signals.md", "brain-feed/tick-lessons.md"]));
    expect(snapshot(r.vault)).toEqual(before);
    expect((await r.call(`/tick/${res.body.tick_id}`)).body.status).toBe("succeeded");
  });
});

describe("a no_ai tick", () => {
  it("gives the same bytes for the same vault and as_of", async () => {
    // One base vault: markers posted with fixed times, a note with inline markers, an ingested note.
    const baseDir = tempDir("base");
    const base = await startTestRouter({}, { vault: join(baseDir, "vault") });
    const t = (h: number) => new Date(Date.UTC(2026, 2, 10, 12) - h * 3_600_000).toISOString();
    for (const [i, m] of [
      { type: "lesson", content: "Cache the dependency layer separately.", attrs: { session_id: "s-a", ts: t(5) } },
      { type: "lesson", content: "Dependency caching halves build time.", attrs: { session_id: "s-a", ts: t(4) } },
      { type: "decision", content: "Adopt layered Docker builds for the API.", attrs: { session_id: "s-a", ts: t(3) } },
      { type: "milestone", content: "Search ships to staging", attrs: { scope: "brain", ts: t(30) } },
      { type: "signal", content: "Staging database disk at 91%", attrs: { severity: "critical", source: "pager", ts: t(100) } },
      { type: "signal", content: "Flaky login test", attrs: { severity: "low", source: "ci", ts: t(100) } },
    ].entries()) {
      expect((await base.call("/marker", m, { headers: { "x-idempotency-key": `k${i}` } })).status).toBe(201);
    }
    await base.close();
    put(join(baseDir, "vault"), "raw/retro.md", NOTE_WITH_MARKERS, new Date(t(2)));
    put(
      join(baseDir, "vault"),
      "ingest/2026-03-10/docker-layers.md",
      `---\ntitle: Docker layers\nkind: note\ntags: [docker]\ncreated: ${t(1)}\nsession_id: s-a\n---\n\nLayered builds cache dependencies.\n`,
      new Date(t(1)),
    );
    const copy = (name: string) => {
      const dir = join(tempDir(name), "vault");
      cpSync(join(baseDir, "vault"), dir, { recursive: true, preserveTimestamps: true });
      return dir;
    };
    const [one, two] = [await router({}, copy("one")), await router({}, copy("two"))];
    const asOf = "2026-03-10T12:00:00.000Z";
    const [a, b] = [await tick(one, { no_ai: true, as_of: asOf }), await tick(two, { no_ai: true, as_of: asOf })];
    expect(a.status).toBe("succeeded");
    expect(a.counts).toEqual(b.counts);
    expect(a.counts.arcs).toBeGreaterThan(0);
    const outputs = (v: string) => snapshot(v, (p) => p === ".brain" || p === "brain-feed/ticks");
    const contents = (m: Map<string, { content: string }>) => new Map([...m].map(([k, v]) => [k, v.content]));
    expect(contents(outputs(one.vault))).toEqual(contents(outputs(two.vault)));
    // And again on the same vault, same as_of: nothing changes.
    const again = await tick(one, { no_ai: true, as_of: asOf });
    expect(again.counts.files_written).toBe(0);
    expect(again.counts.markers_harvested).toBe(0);
  });

  it("makes no model call even when a model is configured", async () => {
    const gw = startGateway({ reply: () => '{"title":"x","summary":"y"}' });
    gateways.push(gw);
    const r = await router({ LLM_API_BASE: `${gw.url}/v1` });
    await r.call("/marker", { type: "lesson", content: "Something to cluster", attrs: { session_id: "s" } });
    await tick(r, { no_ai: true });
    expect(gw.requests).toEqual([]);
  });
});

describe("the tick", () => {
  it("harvests inline markers through the marker routing, exactly once each", async () => {
    const r = await router();
    put(r.vault, "raw/retro.md", NOTE_WITH_MARKERS);
    const first = await tick(r);
    expect(first.counts).toMatchObject({ markers_harvested: 2, markers_already_harvested: 0 });
    const lessons = readdirSync(join(r.vault, "left/reference")).filter((n) => n.startsWith("lessons-"));
    expect(lessons).toHaveLength(1);
    const log = readFileSync(join(r.vault, "left/reference", lessons[0]!), "utf8");
    expect(log).toMatch(/## \S+ — retro — sprint-12\n\nPin base image digests; tags move under you\./);
    const signals = readdirSync(join(r.vault, "amygdala"));
    expect(signals).toHaveLength(1);
    expect(signals[0]).toMatch(/^\d{8}T\d{6}Z-high-staging-certificate-expires-friday\.md$/);
    expect((await tick(r)).counts).toMatchObject({ markers_harvested: 0 });
    // Touched (new mtime), same markers: read again, recorded already.
    const later = new Date(Date.now() + 5000);
    utimesSync(join(r.vault, "raw/retro.md"), later, later);
    expect((await tick(r)).counts).toMatchObject({ markers_harvested: 0, markers_already_harvested: 2 });
    // A new marker in the note is harvested; the old ones are not.
    writeFileSync(
      join(r.vault, "raw/retro.md"),
      `${NOTE_WITH_MARKERS}\n<!-- @decision title="Pin digests in CI" -->\nCI pins every base image by digest.\n<!-- @/decision -->\n`,
    );
    expect((await tick(r)).counts).toMatchObject({ markers_harvested: 1, markers_already_harvested: 2 });
    expect(readdirSync(join(r.vault, "left/decisions"))).toEqual([expect.stringMatching(/^ADR-0001-pin-digests-in-ci\.md$/)]);
  });

  it("reads each note of raw/ once on a first tick: the index and the harvest share the read", async () => {
    const r = await router();
    put(r.vault, "raw/retro.md", NOTE_WITH_MARKERS);
    for (let i = 0; i < 5; i++) put(r.vault, `raw/notes/n${i}.md`, `# Note ${i}\nplain text about kites ${i}\n`);
    const reads = new Map<string, number>();
    const count = (p: unknown) => {
      const rel = String(p instanceof URL ? p.pathname : p).split(`${r.vault}/`)[1];
      if (rel?.startsWith("raw/")) reads.set(rel, (reads.get(rel) ?? 0) + 1);
    };
    const readFileSpy = spyOn(fsp, "readFile").mockImplementation(((p: Parameters<typeof fsp.readFile>[0], ...rest: never[]) => {
      count(p);
      return originalReadFile(p, ...rest);
    }) as typeof fsp.readFile);
    const fileSpy = spyOn(Bun, "file").mockImplementation(((p: string, ...rest: never[]) => {
      count(p);
      return originalFile(p, ...rest);
    }) as typeof Bun.file);
    try {
      const first = await tick(r);
      expect(first.counts.markers_harvested).toBe(2);
      expect(first.counts.index_upserted).toBeGreaterThanOrEqual(6);
      expect([...reads.keys()].sort()).toEqual(["raw/notes/n0.md", "raw/notes/n1.md", "raw/notes/n2.md", "raw/notes/n3.md", "raw/notes/n4.md", "raw/retro.md"]);
      expect([...reads.values()].every((n) => n === 1)).toBe(true);
      // A note changed since: read once more, indexed and harvested from that one read.
      reads.clear();
      writeFileSync(join(r.vault, "raw/notes/n2.md"), `# Note 2\nkites and gliders\n<!-- @lesson source=kites -->\nCheck the wind first.\n<!-- @/lesson -->\n`);
      const later = new Date(Date.now() + 5000);
      utimesSync(join(r.vault, "raw/notes/n2.md"), later, later);
      expect((await tick(r)).counts).toMatchObject({ markers_harvested: 1 });
      expect(Object.fromEntries(reads)).toEqual({ "raw/notes/n2.md": 1 });
      expect((await r.call("/search", { query: "gliders" })).body.hits.map((h: Json) => h.path)).toEqual(["raw/notes/n2.md"]);
    } finally {
      readFileSpy.mockRestore();
      fileSpy.mockRestore();
    }
  });

  it("clusters markers into arcs and writes hot-arcs.md with its table", async () => {
    const r = await router();
    for (const content of [
      "Flaky deploy job times out on cache restore",
      "Deploy cache restore needs a longer timeout",
      "Deploy job fixed by raising the cache timeout",
    ]) {
      await r.call("/marker", { type: "lesson", content, attrs: { session_id: "sess-deploy" } });
    }
    await r.call("/marker", { type: "milestone", content: "Billing export ready", attrs: { session_id: "sess-billing" } });
    const res = await tick(r, { no_ai: true });
    expect(res.counts).toMatchObject({ arcs: 2 });
    const hot = readFileSync(join(r.vault, "hot-arcs.md"), "utf8");
    expect(hot).toContain("| Arc ID | Heat | Region | Status | What it is |\n|---|---|---|---|---|\n");
    const rows = hot.split("\n").filter((l) => /^\| arc-[0-9a-f]{8} \|/.test(l));
    expect(rows).toHaveLength(2);
    // The three deploy lessons are one hot arc, hottest first.
    expect(rows[0]).toMatch(/^\| arc-[0-9a-f]{8} \| \d+\.\d \| left\/reference \| hot \| \*\*.*deploy.*\*\* — 3 lessons/);
    const id = /arc-[0-9a-f]{8}/.exec(rows[0]!)![0];
    const record = readFileSync(join(r.vault, "arcs", `${id}.md`), "utf8");
    expect(record).toContain("type: arc");
    expect(record).toContain("key: session:sess-deploy");
    expect(record).toContain("items: 3");
  });

  it("writes model titles and summaries when a model is configured", async () => {
    const gw = startGateway({
      reply: () => 'Sure: {"title": "Deploy cache timeouts", "summary": "The deploy job timed out restoring its cache until the timeout was raised."}',
    });
    gateways.push(gw);
    const r = await router({ LLM_API_BASE: `${gw.url}/v1` });
    for (const content of ["Deploy cache restore times out", "Raised the deploy cache timeout"])
      await r.call("/marker", { type: "lesson", content, attrs: { session_id: "d" } });
    const res = await tick(r);
    expect(res.warnings).toEqual([]);
    expect(readFileSync(join(r.vault, "hot-arcs.md"), "utf8")).toContain(
      "**Deploy cache timeouts** — The deploy job timed out restoring its cache until the timeout was raised.",
    );
    expect(gw.requests.filter((q) => q.path === "/v1/chat/completions")).toHaveLength(1);
  });

  it("keeps rule-written titles, with a warning, when the model fails", async () => {
    const gw = startGateway();
    gateways.push(gw);
    gw.failWith(500);
    const r = await router({ LLM_API_BASE: `${gw.url}/v1` });
    await r.call("/marker", { type: "lesson", content: "Something worth an arc", attrs: { session_id: "d" } });
    const res = await tick(r);
    expect(res.status).toBe("succeeded");
    expect(res.warnings[0]).toContain("keeps its rule-written title");
    expect(existsSync(join(r.vault, "hot-arcs.md"))).toBe(true);
  });

  it("sweeps signals older than SIGNAL_TTL_HOURS out of signals.md, unless critical", async () => {
    const r = await router({ SIGNAL_TTL_HOURS: "24" });
    const old = new Date(Date.now() - 30 * 3_600_000).toISOString();
    const stale = await r.call("/marker", { type: "signal", content: "Nightly backup slow", attrs: { severity: "medium", source: "cron", ts: old } });
    await r.call("/marker", { type: "signal", content: "Primary database unreachable", attrs: { severity: "critical", source: "pager", ts: old } });
    await r.call("/marker", { type: "signal", content: "Error rate above 2%", attrs: { severity: "high", source: "grafana" } });
    const res = await tick(r);
    expect(res.counts).toMatchObject({ signals_swept: 1, signals_live: 2 });
    const md = readFileSync(join(r.vault, "signals.md"), "utf8");
    expect(md).toContain("- **[critical]** (pager) Primary database unreachable\n- **[high]** (grafana) Error rate above 2%\n");
    expect(md).not.toContain("Nightly backup");
    expect(readFileSync(join(r.vault, stale.body.path), "utf8")).toContain("status: expired");
  });

  it("sweeps after 72 hours when SIGNAL_TTL_HOURS is not set", async () => {
    const r = await router();
    const at = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();
    await r.call("/marker", { type: "signal", content: "Quiet for 70 hours", attrs: { severity: "low", source: "cron", ts: at(70) } });
    await r.call("/marker", { type: "signal", content: "Quiet for 74 hours", attrs: { severity: "low", source: "cron", ts: at(74) } });
    const res = await tick(r);
    expect(res.counts).toMatchObject({ signals_swept: 1, signals_live: 1 });
    const md = readFileSync(join(r.vault, "signals.md"), "utf8");
    expect(md).toContain("ttl_hours: 72");
    expect(md).toContain("Quiet for 70 hours");
    expect(md).not.toContain("Quiet for 74 hours");
  });

  it("writes feed entries with frontmatter id, title, priority, ttl, severity and a body", async () => {
    const r = await router({ TICK_INTERVAL_SECONDS: "7200" });
    await r.call("/marker", { type: "lesson", content: "Prefer small PRs", attrs: { session_id: "s" } });
    await r.call("/marker", { type: "signal", content: "Queue backlog growing", attrs: { severity: "high", source: "queue" } });
    await r.call("/marker", { type: "decision", content: "Adopt trunk-based development" });
    const res = await tick(r, { no_ai: true });
    expect(
      readdirSync(join(r.vault, "brain-feed"))
        .filter((n) => n.endsWith(".md"))
        .sort(),
    ).toEqual(["tick-arcs.md", "tick-decisions.md", "tick-lessons.md", "tick-signals.md"]);
    const signals = readFileSync(join(r.vault, "brain-feed/tick-signals.md"), "utf8");
    expect(signals).toStartWith(
      `---\nid: tick-signals\ntitle: Live signals\npriority: 1\nttl: 259200\nseverity: high\ncreated: ${res.as_of}\nkind: signals\ngenerator: tick\n---\n\n- **[high]** (queue) Queue backlog growing\n`,
    );
    expect(readFileSync(join(r.vault, "brain-feed/tick-lessons.md"), "utf8")).toContain("ttl: 86400\n");
    expect(readFileSync(join(r.vault, "brain-feed/tick-decisions.md"), "utf8")).toContain("Adopt trunk-based development (proposed");
  });

  it("refreshes the index over raw/ and indexes what it wrote under their producers", async () => {
    const r = await router();
    put(r.vault, "raw/zeppelin.md", "# Zeppelins\nHydrogen was a mistake.\n");
    await r.call("/marker", { type: "lesson", content: "Helium over hydrogen, always.", attrs: { session_id: "z" } });
    expect((await r.call("/search", { query: "zeppelins" })).body.hits).toEqual([]);
    const res = await tick(r);
    expect(res.counts.index_upserted).toBeGreaterThan(0);
    expect((await r.call("/search", { query: "zeppelins" })).body.hits[0]).toMatchObject({ path: "raw/zeppelin.md", producer: "raw" });
    for (const producer of ["lessons", "arcs", "feed"]) {
      expect((await r.call("/search", { query: `helium producer:${producer}` })).body.hits.length).toBeGreaterThan(0);
    }
    rmSync(join(r.vault, "raw/zeppelin.md"));
    expect((await tick(r)).counts.index_removed).toBe(1);
    expect((await r.call("/search", { query: "zeppelins" })).body.hits).toEqual([]);
  });

  it("fails with error_tail in failed/ and leaves nothing half-written in the vault", async () => {
    const r = await router();
    await r.call("/marker", { type: "lesson", content: "A lesson a tick would feed", attrs: { session_id: "s" } });
    mkdirSync(join(r.vault, ".brain", "tick", "harvest-state.json", "squatter"), { recursive: true });
    const res = await tick(r);
    expect(res.status).toBe("failed");
    expect(res.error_tail).toContain("EISDIR");
    expect(res.error_tail.split("\n").length).toBeLessThanOrEqual(20);
    const failed = readdirSync(join(r.vault, "brain-feed/ticks/failed"));
    expect(failed).toEqual([expect.stringContaining(res.tick_id)]);
    for (const p of ["hot-arcs.md", "signals.md", "arcs", "brain-feed/tick-lessons.md"]) expect(existsSync(join(r.vault, p))).toBe(p === "arcs");
    expect(readdirSync(join(r.vault, "arcs"))).toEqual([]);
    const temps = [...snapshot(r.vault).keys()].filter((p) => p.endsWith(".tmp"));
    expect(temps).toEqual([]);
  });
});

describe("the scheduler", () => {
  it("defaults TICK_INTERVAL_SECONDS to 7200 and the /signal heartbeat to 15 s", () => {
    const c = loadRouterConfig({}, tempDir("tick-defaults"));
    expect(c.tickIntervalSeconds).toBe(7200);
    expect(c.signalHeartbeatSeconds).toBe(15);
  });

  it("enqueues a tick every TICK_INTERVAL_SECONDS", async () => {
    const r = await router({ TICK_INTERVAL_SECONDS: "1" });
    const completed = join(r.vault, "brain-feed/ticks/completed");
    const names = await until(() => (existsSync(completed) && readdirSync(completed).length >= 2 ? readdirSync(completed) : undefined), {
      what: "two completed ticks",
      every: 50,
    });
    expect(names.length).toBeGreaterThanOrEqual(2);
    const record = JSON.parse(readFileSync(join(completed, names[0]!), "utf8"));
    expect(record).toMatchObject({ trigger: "scheduler", status: "succeeded" });
  });

  // Off at 0, the due time after a restart, and skipping while busy: src/router/tick/scheduler.test.ts.
});

describe("files the router writes, indexed in the background", () => {
  it("a batch of milestones appending to one daily log: searchable at once, re-indexed once a round, not once a milestone", async () => {
    const r = await router();
    const index = r.runtime.deps.index;
    const upsert = spyOn(index, "upsert");
    const items = Array.from({ length: 40 }, (_, i) => ({ content: `Shipped the quokka${i} release.`, tags: ["milestone"] }));
    const res = await r.call("/ingest/batch", { items });
    expect(res.body.created).toBe(40);
    const daily = res.body.results[0].paths[1] as string;
    expect(daily).toStartWith("daily/");
    const inDaily = async (word: string) => (await r.call("/search", { query: word, limit: 50 })).body.hits.some((h: Json) => h.path === daily);
    // A version of the log was indexed before the answer (the first file of its kind: it holds
    // the milestones written by then, whichever items got there first)…
    expect(await inDaily("release")).toBe(true);
    // …and once the background round has run, its last one: every milestone is in it.
    await r.runtime.indexer.idle();
    for (const i of [0, 17, 39]) expect(await inDaily(`quokka${i}`)).toBe(true);
    const passes = upsert.mock.calls.filter(([doc]) => doc.path === daily).length;
    expect(passes).toBeGreaterThanOrEqual(1);
    expect(passes).toBeLessThanOrEqual(3);
    upsert.mockRestore();
  });
});
