// Lesson logs keep each lesson whole: a lesson's own line that looks like an entry heading
// does not split it, and it reads back exactly as it was given. A signal's duplicate is found
// among many signal files as a one-by-one scan in name order would find it.
import { describe, expect, it } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseLessonLog } from "../feed/lessons";
import { withFrontmatter } from "./frontmatter";
import { appendLesson, writeSignal, writeSignals } from "./records";

const lesson = (content: string, ts = "2026-11-25T10:00:00.000Z") => ({ content, source: "claude", session_id: "s1", ts: new Date(ts) });

describe("lesson logs", () => {
  it("keep a lesson whose lines look like entry headings as one entry, read back exactly", async () => {
    const vault = mkdtempSync(join(tmpdir(), "lessons-"));
    const tricky = "Quote the log format:\n## 2026-01-01T00:00:00.000Z — ci — -\nand an escaped one:\n\\## 2026-01-02T00:00:00.000Z — x — y";
    expect((await appendLesson(vault, lesson(tricky))).written).toBe(true);
    expect((await appendLesson(vault, lesson("A second lesson.", "2026-11-25T11:00:00.000Z"))).written).toBe(true);
    const path = "left/reference/lessons-2026-11-25.md";
    const entries = parseLessonLog(path, readFileSync(join(vault, path), "utf8"));
    expect(entries.map((e) => e.text)).toEqual([tricky, "A second lesson."]);
    expect(entries[0]!.ts).toBe("2026-11-25T10:00:00.000Z");
    // The same lesson again is recognised as already there.
    expect((await appendLesson(vault, lesson(tricky, "2026-11-25T12:00:00.000Z"))).written).toBe(false);
  });
});

describe("signal duplicates", () => {
  const signal = (content: string, ts: string, source = "ci") => ({ content, source, severity: "high", ts: new Date(ts) });
  const file = (vault: string, name: string, data: Record<string, unknown>, body: string) =>
    writeFileSync(
      join(vault, "amygdala", name),
      withFrontmatter({ type: "signal", severity: "high", status: "open", source: "ci", created: "2026-11-01T00:00:00.000Z", count: 1, ...data }, body),
    );

  it("absorb into the first open file in name order with the same source, severity and body, among many", async () => {
    const vault = mkdtempSync(join(tmpdir(), "signals-"));
    mkdirSync(join(vault, "amygdala"));
    for (let i = 0; i < 300; i++) file(vault, `20261101T0000${String(i).padStart(2, "0")}Z-high-other-${i}.md`, {}, `Unrelated signal ${i}`);
    const body = "Deploy pipeline is red";
    file(vault, "20261102T000000Z-high-closed.md", { status: "closed" }, body); // closed: not a duplicate
    file(vault, "20261103T000000Z-high-from-elsewhere.md", { source: "pager" }, body); // another source
    file(vault, "20261105T000000Z-high-later.md", {}, `\n${body}\n`); // open, same body once trimmed
    file(vault, "20261104T000000Z-high-first.md", {}, body); // the first open one in name order
    const before = readdirSync(join(vault, "amygdala")).length;

    const w = await writeSignal(vault, signal(` ${body} `, "2026-11-25T10:00:00.000Z"));
    expect(w).toEqual({ path: "amygdala/20261104T000000Z-high-first.md", written: false, count: 2 });
    expect(readFileSync(join(vault, w.path), "utf8")).toContain("last_seen: 2026-11-25T10:00:00.000Z");
    expect(readFileSync(join(vault, "amygdala/20261105T000000Z-high-later.md"), "utf8")).toContain("count: 1");
    expect(readdirSync(join(vault, "amygdala"))).toHaveLength(before);

    // A batch: a new signal, then its own duplicate, then the pager's duplicate.
    const batch = await writeSignals(vault, [
      signal("Disk almost full", "2026-11-25T11:00:00.000Z"),
      signal("Disk almost full", "2026-11-25T11:01:00.000Z"),
      signal(body, "2026-11-25T11:02:00.000Z", "pager"),
    ]);
    expect(batch).toEqual([
      { path: "amygdala/20261125T110000Z-high-disk-almost-full.md", written: true, count: 1 },
      { path: "amygdala/20261125T110000Z-high-disk-almost-full.md", written: false, count: 2 },
      { path: "amygdala/20261103T000000Z-high-from-elsewhere.md", written: false, count: 2 },
    ]);
  });

  it("see a signal closed by hand since they last read it, and absorb no more into it", async () => {
    const vault = mkdtempSync(join(tmpdir(), "signals-"));
    mkdirSync(join(vault, "amygdala"));
    for (let i = 0; i < 50; i++) file(vault, `20261101T0000${String(i).padStart(2, "0")}Z-high-other-${i}.md`, {}, `Unrelated signal ${i}`);
    const body = "Queue depth over limit";
    const first = await writeSignal(vault, signal(body, "2026-11-25T10:00:00.000Z"));
    expect(first.written).toBe(true);
    expect(await writeSignal(vault, signal(body, "2026-11-25T10:01:00.000Z"))).toEqual({ path: first.path, written: false, count: 2 });
    // Closed in an editor (its size changes with the status).
    const abs = join(vault, first.path);
    writeFileSync(abs, readFileSync(abs, "utf8").replace("status: open", "status: resolved"));
    const third = await writeSignal(vault, signal(body, "2026-11-25T10:02:00.000Z"));
    expect(third.written).toBe(true);
    expect(third.path).not.toBe(first.path);
  });
});
