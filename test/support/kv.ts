// Shared by the key-value store tests (src/common/kv/*.test.ts and the suites on Redis): fresh
// stores per test, and the rule for a missing Redis (fail under CI, skip
// loudly elsewhere).
import { describe, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFileStore } from "../../src/common/kv/file-store.ts";
import { createRedisStore } from "../../src/common/kv/redis-store.ts";
import type { KeyValueStore } from "../../src/common/kv/store.ts";

export interface Harness {
  store: KeyValueStore;
  cleanup(): Promise<void>;
}

/** Keys that would escape a naive file store or collide under a naive encoding. */
export const HOSTILE_KEYS = [
  "../escape",
  "../../../../etc/passwd",
  "/absolute/path",
  "nested/dir/key",
  "nul\0byte",
  ".",
  "..",
  "",
  ".hidden",
  "Upper",
  "upper",
  "back\\slash",
  "percent%2e%2e%2f",
  "under_score_2f",
  "tilde~x",
  "ünïcödé ✓ 🚀",
  "spaces and\ttabs\nnewline",
  "k".repeat(1_000),
  `${"k".repeat(1_000)}/other`,
];

export async function openFileStore(): Promise<Harness & { root: string; dir: string }> {
  const root = await mkdtemp(join(tmpdir(), "kv-file-"));
  const dir = join(root, "store");
  const store = await createFileStore({ dir });
  return { store, root, dir, cleanup: () => rm(root, { recursive: true, force: true }) };
}

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** A store under a prefix of its own; cleanup deletes everything under it. */
export async function openRedisStore(url = REDIS_URL): Promise<Harness> {
  const store = await createRedisStore({ url, keyPrefix: `brain-stack-test:${randomUUID()}` });
  return {
    store,
    async cleanup() {
      for (const key of await store.keys("")) await store.delete(key);
      await store.close();
    },
  };
}

const redisMissing = await openRedisStore().then(
  async (h) => {
    await h.cleanup();
    return null;
  },
  (err: Error) => err,
);
if (redisMissing && process.env.CI !== "true") {
  console.warn(`\n⚠ Skipping the Redis store tests: ${redisMissing.message}\n`);
}

/** describe() when Redis answers; otherwise a failing test under CI=true, a visible skip elsewhere. */
export function describeWithRedis(name: string, body: () => void): void {
  if (redisMissing === null) {
    describe(name, body);
    return;
  }
  // CI promises a real Redis; its absence is a broken pipeline, not a reason to skip.
  if (process.env.CI === "true") {
    test(`${name}: Redis answers at REDIS_URL (required when CI=true)`, () => {
      throw redisMissing;
    });
    return;
  }
  describe.skip(name, body);
}
