import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { HOSTILE_KEYS, openFileStore } from "../../../test/support/kv.ts";
import { until } from "../../../test/support/until.ts";

describe("file store on disk", () => {
  let h: Awaited<ReturnType<typeof openFileStore>>;
  beforeEach(async () => {
    h = await openFileStore();
  });
  afterEach(() => h.cleanup());

  it("keeps every hostile key inside its directory", async () => {
    for (const key of HOSTILE_KEYS) await h.store.set(key, "v");
    expect(await readdir(h.root)).toEqual(["store"]);
    const entries = await readdir(h.dir, { withFileTypes: true });
    expect(entries).toHaveLength(HOSTILE_KEYS.length);
    for (const e of entries) {
      expect(e.isFile()).toBe(true);
      expect(e.name).toMatch(/^[a-z0-9_~-]+\.json$/);
    }
  });

  it("leaves no temp files or lock directories behind", async () => {
    await Promise.all(Array.from({ length: 30 }, (_, i) => h.store.set(`k${i % 3}`, String(i))));
    await Promise.all(Array.from({ length: 30 }, (_, i) => h.store.listPush("list", String(i))));
    await h.store.delete("k0");
    expect((await readdir(h.dir)).sort()).toEqual(["k1.json", "k2.json", "list.json"]);
  });

  it("removes an expired key's file when it is read", async () => {
    await h.store.set("short", "v", { ttlSeconds: 1 });
    await until(async () => (await h.store.get("short")) === null);
    expect(await readdir(h.dir)).toEqual([]);
  });

  // Real processes, because the point of the lock is that other processes respect it.
  describe("shared by several processes", () => {
    const worker = async (script: string) => {
      const file = join(h.root, "worker.ts");
      await Bun.write(file, script);
      return async (...args: string[]) => {
        const proc = Bun.spawn([process.execPath, file, ...args], { stdout: "pipe", stderr: "inherit" });
        const out = await new Response(proc.stdout).text();
        expect(await proc.exited).toBe(0);
        return out.trim();
      };
    };
    const storeModule = JSON.stringify(join(import.meta.dir, "file-store.ts"));

    it("setIfAbsent lets exactly one process win", async () => {
      const run = await worker(`
        import { createFileStore } from ${storeModule};
        const [dir, id, startAt] = process.argv.slice(2);
        const store = await createFileStore({ dir });
        await Bun.sleep(Number(startAt) - Date.now()); // start together, so the calls really collide
        console.log(await store.setIfAbsent("winner", id));
      `);
      const ids = ["p0", "p1", "p2", "p3"];
      const startAt = String(Date.now() + 1_000);
      const outs = await Promise.all(ids.map((id) => run(h.dir, id, startAt)));
      expect(outs.filter((o) => o === "true")).toHaveLength(1);
      expect(await h.store.get("winner")).toBe(ids[outs.indexOf("true")] ?? "no winner");
    });

    it("listPush loses no entry when processes push at once", async () => {
      const run = await worker(`
        import { createFileStore } from ${storeModule};
        const [dir, id, startAt] = process.argv.slice(2);
        const store = await createFileStore({ dir });
        await Bun.sleep(Number(startAt) - Date.now()); // start together, so pushes really collide
        for (let i = 0; i < 15; i++) await store.listPush("log", id + ":" + i, { max: 1000 });
      `);
      const startAt = String(Date.now() + 1_000);
      await Promise.all(["a", "b", "c"].map((id) => run(h.dir, id, startAt)));
      const list = await h.store.listRange("log");
      expect(list).toHaveLength(45);
      for (const id of ["a", "b", "c"]) {
        expect(list.filter((v) => v.startsWith(`${id}:`))).toEqual(Array.from({ length: 15 }, (_, i) => `${id}:${i}`));
      }
    });
  });
});
