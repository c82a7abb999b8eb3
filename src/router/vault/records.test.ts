// Lesson logs keep each lesson whole: a lesson's own line that looks like an entry heading
// does not split it, and it reads back exactly as it was given.
import { describe, expect, it } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseLessonLog } from "../feed/lessons";
import { appendLesson } from "./records";

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
