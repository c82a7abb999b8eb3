// Job events as JSONL beside the job file: SERVICE_JOBS_DIR/{id}.events.jsonl, one event a line,
// appended (O_APPEND: pods sharing the directory never interleave a line). A reader that follows
// a job keeps where it stopped (line → byte offset), so a live watcher reads only what is new.
import { appendFile, open, readdir, stat, unlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { isJobId } from "../schema";
import { AppendSignals, DEFAULT_READ_LIMIT, type JobEventStore } from "./store";
import type { JobEvent, StoredJobEvent } from "./schema";

const SUFFIX = ".events.jsonl";
/** Line → byte offset checkpoints kept per job (one per reader position). */
const MAX_CHECKPOINTS = 64;

export function createFileJobEventStore(opts: { dir: string; ttlSeconds: number; now?: () => number }): JobEventStore {
  const dir = resolve(opts.dir);
  const now = opts.now ?? Date.now;
  const pathOf = (id: string) => join(dir, id + SUFFIX);
  const signals = new AppendSignals();
  const chains = new Map<string, Promise<void>>();
  const checkpoints = new Map<string, Map<number, number>>();

  const remember = (id: string, line: number, offset: number) => {
    let m = checkpoints.get(id);
    if (!m) checkpoints.set(id, (m = new Map()));
    m.set(line, offset);
    if (m.size > MAX_CHECKPOINTS) m.delete(m.keys().next().value!);
  };

  async function read(id: string, after: number, limit = DEFAULT_READ_LIMIT): Promise<StoredJobEvent[]> {
    if (!isJobId(id)) return [];
    let handle;
    try {
      handle = await open(pathOf(id), "r");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
    try {
      // Start from the nearest checkpoint at or before `after`.
      let line = 0;
      let offset = 0;
      for (const [l, o] of checkpoints.get(id) ?? []) if (l <= after && l > line) [line, offset] = [l, o];
      const size = (await handle.stat()).size;
      if (offset >= size) return [];
      const buf = Buffer.alloc(size - offset);
      await handle.read(buf, 0, buf.length, offset);
      const out: StoredJobEvent[] = [];
      let start = 0;
      while (out.length < limit) {
        const nl = buf.indexOf(10, start);
        if (nl < 0) break; // a line still being written
        line++;
        if (line > after) {
          try {
            out.push({ id: line, event: JSON.parse(buf.subarray(start, nl).toString("utf8")) as JobEvent });
          } catch {
            // a damaged line keeps its number, so ids stay positions
          }
        }
        start = nl + 1;
      }
      remember(id, line, offset + start);
      return out;
    } finally {
      await handle.close();
    }
  }

  return {
    kind: "file",
    append(id, events) {
      if (!isJobId(id)) return Promise.reject(new Error(`not a job id: ${JSON.stringify(id)}`));
      if (events.length === 0) return Promise.resolve();
      const text = events.map((e) => `${JSON.stringify(e)}\n`).join("");
      const prev = chains.get(id) ?? Promise.resolve();
      const next = prev.then(() => appendFile(pathOf(id), text, { mode: 0o600 }));
      const tail = next.catch(() => {});
      chains.set(id, tail);
      void tail.then(() => {
        if (chains.get(id) === tail) chains.delete(id);
      });
      return next.then(() => signals.emit(id));
    },
    read,
    last: async (id, count) => (count <= 0 ? [] : (await read(id, 0, Number.MAX_SAFE_INTEGER)).slice(-count)),
    onAppend: (id, l) => signals.on(id, l),
    async sweep(isLive) {
      let removed = 0;
      const names = await readdir(dir).catch(() => [] as string[]);
      for (const name of names) {
        if (!name.endsWith(SUFFIX)) continue;
        const id = name.slice(0, -SUFFIX.length);
        if (!isJobId(id) || (await isLive(id))) continue;
        // A log written in the last TTL may belong to a job whose record is still on its way.
        const info = await stat(join(dir, name)).catch(() => null);
        if (info && info.mtimeMs + opts.ttlSeconds * 1000 > now()) continue;
        await unlink(join(dir, name)).catch(() => {});
        checkpoints.delete(id);
        removed++;
      }
      return removed;
    },
    async close() {
      await Promise.all([...chains.values()]);
    },
  };
}
