import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeFileAtomic } from "./atomic-write.ts";

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

  it("removes its temp file when the rename fails", async () => {
    const path = join(dir, "occupied");
    await mkdir(join(path, "child"), { recursive: true }); // a non-empty directory cannot be replaced by a file
    await expect(writeFileAtomic(path, "data")).rejects.toThrow();
    expect(await readdir(dir)).toEqual(["occupied"]);
  });
});
