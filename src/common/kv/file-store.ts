// KeyValueStore on plain files, the embedded default when REDIS_URL is unset: one JSON file per
// key under `dir`. Every write holds that key's file lock, so several processes sharing the
// directory get the same answers Redis would give them (SET NX, capped lists included).
import { access, constants, mkdir, readdir, readFile, unlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { writeFileAtomic } from "../atomic-write.ts";
import { withFileLock } from "../file-lock.ts";
import { decodeKeyName, encodeKeyName } from "./key-filename.ts";
import { type KeyValueStore, listMax, ttlMs } from "./store.ts";

export interface FileStoreOptions {
  dir: string;
  /** How long a write waits for another process's lock on the same key (default 15 s). */
  lockTimeoutMs?: number;
}

/** The key is kept in the file too: long keys have hashed names that cannot be decoded. */
type Entry = { key: string; value: string; expiresAt: number | null } | { key: string; list: string[]; expiresAt: number | null };

const SUFFIX = ".json";

class WrongTypeError extends Error {
  constructor(key: string, wanted: "string" | "list") {
    super(`WRONGTYPE key ${JSON.stringify(key)} does not hold a ${wanted}`);
    this.name = "WrongTypeError";
  }
}

/** Creates `dir` if needed and resolves to the store. */
export async function createFileStore(opts: FileStoreOptions): Promise<KeyValueStore> {
  const dir = resolve(opts.dir);
  await mkdir(dir, { recursive: true });
  // Waiters outlast staleMs, so a writer that crashed mid-write delays the key, never fails it.
  const lockOpts = { timeoutMs: opts.lockTimeoutMs ?? 15_000, staleMs: 10_000 };

  const pathOf = (key: string) => join(dir, encodeKeyName(key) + SUFFIX);
  const locked = <T>(path: string, fn: () => Promise<T>) => withFileLock(path, fn, lockOpts);
  const live = (e: Entry | null, now = Date.now()): e is Entry => e !== null && (e.expiresAt === null || e.expiresAt > now);
  const write = (path: string, e: Entry) => writeFileAtomic(path, JSON.stringify(e));
  const expiry = (ttlSeconds: number | undefined) => {
    const ms = ttlMs(ttlSeconds);
    return ms === undefined ? null : Date.now() + ms;
  };

  // Re-checked under the lock: another process may have written a fresh value since we read.
  const dropIfExpired = (path: string) =>
    locked(path, async () => {
      const e = await readEntry(path);
      if (e && !live(e)) await removeFile(path);
    });

  /** The live entry at `path`, removing it when it has expired (Redis expires lazily too). */
  const readLive = async (path: string): Promise<Entry | null> => {
    const e = await readEntry(path);
    if (e === null || live(e)) return e;
    await dropIfExpired(path);
    return null;
  };

  return {
    kind: "file",
    async get(key) {
      const e = await readLive(pathOf(key));
      if (e === null) return null;
      if (!("value" in e)) throw new WrongTypeError(key, "string");
      return e.value;
    },
    async set(key, value, o) {
      const path = pathOf(key);
      const expiresAt = expiry(o?.ttlSeconds);
      await locked(path, () => write(path, { key, value, expiresAt }));
    },
    async setIfAbsent(key, value, o) {
      const path = pathOf(key);
      const expiresAt = expiry(o?.ttlSeconds);
      return locked(path, async () => {
        if (live(await readEntry(path))) return false;
        await write(path, { key, value, expiresAt });
        return true;
      });
    },
    async delete(key) {
      const path = pathOf(key);
      return locked(path, async () => {
        const e = await readEntry(path);
        if (e === null) return false;
        await removeFile(path);
        return live(e);
      });
    },
    async keys(prefix) {
      const found: string[] = [];
      for (const name of await readdir(dir)) {
        if (!name.endsWith(SUFFIX)) continue; // lock directories, temp files
        const decoded = decodeKeyName(name.slice(0, -SUFFIX.length));
        if (decoded !== null && !decoded.startsWith(prefix)) continue;
        const e = await readLive(join(dir, name));
        if (e?.key.startsWith(prefix)) found.push(e.key);
      }
      return found;
    },
    async listPush(key, value, o) {
      const max = listMax(o?.max);
      const ttl = ttlMs(o?.ttlSeconds);
      const path = pathOf(key);
      await locked(path, async () => {
        const now = Date.now();
        const prev = await readEntry(path);
        const cur = live(prev, now) ? prev : null;
        if (cur !== null && !("list" in cur)) throw new WrongTypeError(key, "list");
        const list = [...(cur?.list ?? []), value];
        const expiresAt = ttl !== undefined ? now + ttl : (cur?.expiresAt ?? null);
        await write(path, { key, list: max === undefined ? list : list.slice(-max), expiresAt });
      });
    },
    async listRange(key) {
      const e = await readLive(pathOf(key));
      if (e === null) return [];
      if (!("list" in e)) throw new WrongTypeError(key, "list");
      return e.list;
    },
    async ping() {
      return access(dir, constants.R_OK | constants.W_OK).then(
        () => true,
        () => false,
      );
    },
    async close() {},
  };
}

async function readEntry(path: string): Promise<Entry | null> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  try {
    return JSON.parse(text) as Entry;
  } catch {
    // Writes are atomic, so this file was damaged from outside: say where rather than guess.
    throw new Error(`file store entry ${path} is not valid JSON; remove it to reset that key`);
  }
}

async function removeFile(path: string): Promise<void> {
  await unlink(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== "ENOENT") throw err;
  });
}
