// One behavioural suite for every KeyValueStore: the Redis and file stores must be
// interchangeable, so they answer the same questions the same way.
import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import { describeWithRedis, type Harness, HOSTILE_KEYS, openFileStore, openRedisStore } from "../../../test/support/kv.ts";
import { until } from "../../../test/support/until.ts";
import type { KeyValueStore } from "./store.ts";

function describeKeyValueStore(name: string, open: () => Promise<Harness>) {
  describe(name, () => {
    let h: Harness;
    let store: KeyValueStore;
    beforeEach(async () => {
      h = await open();
      store = h.store;
    });
    afterEach(() => h.cleanup());

    it("answers ping", async () => {
      expect(await store.ping()).toBe(true);
    });

    it("gets what it set, and null for a missing key", async () => {
      await store.set("a", "1");
      expect(await store.get("a")).toBe("1");
      expect(await store.get("missing")).toBeNull();
    });

    it("overwrites on set", async () => {
      await store.set("a", "1");
      await store.set("a", "2");
      expect(await store.get("a")).toBe("2");
    });

    it("deletes, telling whether the key was there", async () => {
      await store.set("a", "1");
      expect(await store.delete("a")).toBe(true);
      expect(await store.get("a")).toBeNull();
      expect(await store.delete("a")).toBe(false);
    });

    it("expires a key after its TTL", async () => {
      await store.set("short", "v", { ttlSeconds: 1 });
      await store.set("long", "v");
      expect(await store.get("short")).toBe("v");
      await until(async () => (await store.get("short")) === null);
      expect(await store.get("long")).toBe("v");
    });

    it("clears the TTL when a key is set again without one", async () => {
      await store.set("k", "1", { ttlSeconds: 1 });
      await store.set("clock", "", { ttlSeconds: 1 }); // expires no earlier than k's old TTL
      await store.set("k", "2");
      await until(async () => (await store.get("clock")) === null);
      expect(await store.get("k")).toBe("2");
    });

    it("rejects a TTL that is not positive", async () => {
      await expect(store.set("k", "v", { ttlSeconds: 0 })).rejects.toThrow(RangeError);
      await expect(store.set("k", "v", { ttlSeconds: -1 })).rejects.toThrow(RangeError);
    });

    it("setIfAbsent sets once and leaves an existing value alone", async () => {
      expect(await store.setIfAbsent("nx", "first")).toBe(true);
      expect(await store.setIfAbsent("nx", "second")).toBe(false);
      expect(await store.get("nx")).toBe("first");
    });

    it("setIfAbsent treats an expired key as absent", async () => {
      expect(await store.setIfAbsent("nx", "first", { ttlSeconds: 1 })).toBe(true);
      await until(() => store.setIfAbsent("nx", "second"));
      expect(await store.get("nx")).toBe("second");
    });

    it("setIfAbsent lets exactly one of many concurrent callers win", async () => {
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.setIfAbsent("race", String(i))));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store.get("race")).toBe(String(results.indexOf(true)));
    });

    it("lists keys by prefix, without the store's own prefix", async () => {
      await store.set("job:1", "a");
      await store.set("job:2", "b");
      await store.set("jobs", "c");
      await store.set("session:1", "d");
      await store.listPush("job:log", "x");
      expect((await store.keys("job:")).sort()).toEqual(["job:1", "job:2", "job:log"]);
      expect((await store.keys("")).sort()).toEqual(["job:1", "job:2", "job:log", "jobs", "session:1"]);
      expect(await store.keys("nothing")).toEqual([]);
    });

    it("matches a prefix literally, glob characters included", async () => {
      await store.set("a*b", "1");
      await store.set("ab", "2");
      await store.set("a?[x]\\", "3");
      expect(await store.keys("a*")).toEqual(["a*b"]);
      expect(await store.keys("a?[x]\\")).toEqual(["a?[x]\\"]);
    });

    it("leaves expired keys out of keys()", async () => {
      await store.set("t:gone", "v", { ttlSeconds: 1 });
      await store.set("t:kept", "v");
      await until(async () => (await store.keys("t:")).length === 1);
      expect(await store.keys("t:")).toEqual(["t:kept"]);
    });

    it("pushes to a list, newest last, capped at max", async () => {
      for (const v of ["1", "2", "3", "4", "5"]) await store.listPush("list", v, { max: 3 });
      expect(await store.listRange("list")).toEqual(["3", "4", "5"]);
      expect(await store.listRange("missing")).toEqual([]);
    });

    it("expires a list after its TTL", async () => {
      await store.listPush("list", "1", { ttlSeconds: 1 });
      await store.listPush("list", "2");
      expect(await store.listRange("list")).toEqual(["1", "2"]);
      await until(async () => (await store.listRange("list")).length === 0);
    });

    it("rejects a list cap that is not a positive integer", async () => {
      await expect(store.listPush("list", "v", { max: 0 })).rejects.toThrow(RangeError);
    });

    it("stores and lists hostile keys faithfully", async () => {
      for (const key of HOSTILE_KEYS) await store.set(key, `value of ${key}`);
      for (const key of HOSTILE_KEYS) expect(await store.get(key)).toBe(`value of ${key}`);
      expect((await store.keys("")).sort()).toEqual([...HOSTILE_KEYS].sort());
      expect((await store.keys("../")).sort()).toEqual(["../../../../etc/passwd", "../escape"]);
      expect((await store.keys("k".repeat(500))).sort()).toEqual([`${"k".repeat(1_000)}/other`, "k".repeat(1_000)].sort());
    });
  });
}

describeKeyValueStore("file store", openFileStore);
describeWithRedis("redis store", () => describeKeyValueStore("KeyValueStore", () => openRedisStore()));
