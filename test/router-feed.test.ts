// GET /feed: entries by priority with the expired left out, the character budget, hot arcs,
// lessons and live signals, and the hash / ETag that lets a client skip an unchanged feed.
import { describe, expect, it } from "bun:test";
import { putFile, useTestRouters } from "./support/router-runtime";

type Json = Record<string, any>;

const router = useTestRouters();
const put = putFile;
const entry = (id: string, fm: Record<string, unknown>, body: string) =>
  `---\nid: ${id}\n${Object.entries(fm)
    .map(([k, v]) => `${k}: ${v}`)
    .join("\n")}\n---\n\n${body}\n`;
const now = () => new Date().toISOString();

describe("GET /feed", () => {
  it("answers the empty feed on a fresh vault", async () => {
    const r = await router();
    const res = await r.call("/feed");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ hot_arcs: [], inject_blocks: [], entries: [], lessons: [], signals: [], entry_count: 0, truncated: false });
    expect(res.body.hash).toMatch(/^[0-9a-f]{32}$/);
    expect(Date.parse(res.body.generated_at)).not.toBeNaN();
  });

  it("sorts entries by priority and leaves out expired ones and files that do not parse", async () => {
    const r = await router();
    put(r.vault, "brain-feed/b.md", entry("b", { title: "Second", priority: 2, ttl: "24h", severity: "info", created: now() }, "B body"));
    put(r.vault, "brain-feed/a.md", entry("a", { title: "First", priority: 1, ttl: 0, severity: "info", created: "2020-01-01T00:00:00Z" }, "A body"));
    put(r.vault, "brain-feed/old.md", entry("old", { title: "Expired", priority: 0, ttl: 60, severity: "high", created: "2020-01-01T00:00:00Z" }, "gone"));
    put(r.vault, "brain-feed/junk.md", "no frontmatter at all");
    const res = await r.call("/feed");
    expect(res.body.entries.map((e: Json) => e.id)).toEqual(["a", "b"]);
    expect(res.body.entry_count).toBe(2);
    expect(res.body.inject_blocks).toEqual(["## First\n\nA body", "## Second\n\nB body"]);
    expect(res.body.entries[0]).toMatchObject({ ttl: 0, expires_at: null, path: "brain-feed/a.md" });
    expect(res.body.entries[1].ttl).toBe(86400);
    expect(res.body.invalid).toEqual([{ path: "brain-feed/junk.md", why: "no frontmatter" }]);
  });

  it("fits inject_blocks into max_chars, cutting the last block at a line", async () => {
    const r = await router();
    const long = Array.from({ length: 60 }, (_, i) => `- item ${i} with some words to take room`).join("\n");
    put(r.vault, "brain-feed/one.md", entry("one", { title: "One", priority: 1, ttl: 0, severity: "info" }, long));
    put(r.vault, "brain-feed/two.md", entry("two", { title: "Two", priority: 2, ttl: 0, severity: "info" }, "never shown"));
    const res = await r.call("/feed?max_chars=600");
    expect(res.body).toMatchObject({ max_chars: 600, truncated: true });
    expect(res.body.inject_blocks).toHaveLength(1);
    expect(res.body.inject_blocks[0].length).toBeLessThanOrEqual(600);
    expect(res.body.inject_blocks[0]).toEndWith("\n…");
    expect(res.body.entries).toHaveLength(2);
    expect((await r.call("/feed?max_chars=5")).status).toBe(400);
  });

  it("carries hot arcs, the newest lessons and the live signals after a tick", async () => {
    const r = await router();
    for (const c of ["Retry the flaky upload with backoff", "Upload retries need jitter too"])
      await r.call("/marker", { type: "lesson", content: c, attrs: { session_id: "up" } });
    await r.call("/marker", { type: "signal", content: "Upload bucket quota at 95%", attrs: { severity: "high", source: "s3" } });
    await r.call("/tick", { wait: true, no_ai: true });
    const res = await r.call("/feed");
    expect(res.body.hot_arcs.length).toBeGreaterThan(0);
    expect(res.body.hot_arcs[0]).toMatchObject({ status: "hot" });
    expect(res.body.hot_arcs[0].id).toMatch(/^arc-[0-9a-f]{8}$/);
    expect(res.body.lessons.map((l: Json) => l.text)).toEqual(["Upload retries need jitter too", "Retry the flaky upload with backoff"]);
    expect(res.body.signals).toEqual([expect.objectContaining({ severity: "high", source: "s3", title: "Upload bucket quota at 95%", count: 1 })]);
    expect(res.body.entries.map((e: Json) => e.id)).toEqual(["tick-signals", "tick-arcs", "tick-lessons"]);
    expect(res.body.inject_blocks[0]).toBe("## Live signals\n\n- **[high]** (s3) Upload bucket quota at 95%");
  });

  it("shows a signal at once, before any tick", async () => {
    const r = await router();
    await r.call("/marker", { type: "signal", content: "Certificate expired", attrs: { severity: "critical", source: "tls" } });
    expect((await r.call("/feed")).body.signals[0]).toMatchObject({ severity: "critical", title: "Certificate expired" });
  });

  it("keeps its hash while nothing changes, answers 304 to If-None-Match, and changes the hash on news", async () => {
    const r = await router();
    put(r.vault, "brain-feed/a.md", entry("a", { title: "A", priority: 1, ttl: 0, severity: "info" }, "body"));
    const first = await r.call("/feed");
    const second = await r.call("/feed");
    expect(second.body.hash).toBe(first.body.hash);
    expect(first.headers.get("etag")).toBe(`"${first.body.hash}"`);
    const cached = await r.call("/feed", undefined, { headers: { "if-none-match": `"${first.body.hash}"` } });
    expect(cached.status).toBe(304);
    expect(cached.text).toBe("");
    await r.call("/marker", { type: "lesson", content: "News", attrs: {} });
    const third = await r.call("/feed", undefined, { headers: { "if-none-match": `"${first.body.hash}"` } });
    expect(third.status).toBe(200);
    expect(third.body.hash).not.toBe(first.body.hash);
  });

  it("answers 401 without the bearer", async () => {
    const r = await router();
    expect((await r.runtime.app.request("/feed")).status).toBe(401);
  });
});
