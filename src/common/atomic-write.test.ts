import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeFileAtomic, writeFileAtomicSync } from "./atomic-write.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "atomic-write-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("writeFileAtomic", () => {
  it("leaves one whole write and no temp files when writers race", async () => {
    const path = join(dir, "file.json");
    const payloads = Array.from({ length: 40 }, (_, i) => JSON.stringify({ i, pad: "x".repeat(50_000) }));
    await Promise.all(payloads.map((p) => writeFileAtomic(path, p)));
    expect(payloads).toContain(await readFile(path, "utf8"));
    expect(await readdir(dir)).toEqual(["file.json"]);
  });

  it("makes a missing folder only when asked to", async () => {
    const path = join(dir, "a", "b", "note.md");
    await expect(writeFileAtomic(path, "x")).rejects.toThrow();
    await writeFileAtomic(path, "ü ✓", { mkdir: true });
    expect(await readFile(path, "utf8")).toBe("ü ✓");
  });

  it("removes its temp file when the rename fails", async () => {
    const path = join(dir, "occupied");
    await mkdir(join(path, "child"), { recursive: true }); // a non-empty directory cannot be replaced by a file
    await expect(writeFileAtomic(path, "data")).rejects.toThrow();
    expect(await readdir(dir)).toEqual(["occupied"]);
  });
});

describe("writeFileAtomicSync", () => {
  it("replaces the file whole and leaves no temp file", async () => {
    const path = join(dir, "note.md");
    writeFileAtomicSync(path, "first");
    writeFileAtomicSync(path, "second");
    expect(await readFile(path, "utf8")).toBe("second");
    expect(await readdir(dir)).toEqual(["note.md"]);
  });

  it("makes a missing folder only when asked to", async () => {
    const path = join(dir, "a", "b", "note.md");
    expect(() => writeFileAtomicSync(path, "x")).toThrow();
    writeFileAtomicSync(path, "x", { mkdir: true });
    expect(await readFile(path, "utf8")).toBe("x");
  });

  it("removes its temp file when the rename fails", async () => {
    const path = join(dir, "occupied");
    await mkdir(join(path, "child"), { recursive: true });
    expect(() => writeFileAtomicSync(path, "data")).toThrow();
    expect(await readdir(dir)).toEqual(["occupied"]);
  });
});
