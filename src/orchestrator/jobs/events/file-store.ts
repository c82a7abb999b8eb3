// Job events as JSONL beside the job file: SERVICE_JOBS_DIR/{id}.events.jsonl, one event a line,
// appended (O_APPEND: pods sharing the directory never interleave a line). A reader that follows
// a job keeps where it stopped (line → byte offset), so a live watcher reads only what is new.
//
// The hot path is synchronous, as writeFileAtomicSync's is: a running job's log stays open
// (closed after IDLE_CLOSE_MS without an append), one append per recorder tick is one write(2)
// of that tick's lines, and a same-process watcher's check that nobody else appended is one
// stat(2). Each was a thread-pool round trip (open, write, close; stat) per tick before, on the
// path from the agent's line to the watcher.
import { closeSync, fstatSync, ftruncateSync, openSync, statSync, writeSync } from "node:fs";
import { open, readdir, stat, unlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { isJobId } from "../schema";
import { jsonOf, parseStored, type StoredJobEvent } from "./schema";
import { AppendSignals, DEFAULT_READ_LIMIT, type JobEventStore } from "./store";

const SUFFIX = ".events.jsonl";
/** Line → byte offset checkpoints kept per job (one per reader position). */
const MAX_CHECKPOINTS = 64;
/** What this process appended last, per job, served to its own live readers without touching the disk. */
const TAIL_EVENTS = 4096;
/** A job's log file stays open this long after its last append. */
const IDLE_CLOSE_MS = 2_000;

interface Tail {
  /** Id of the last line in the file, as this process knows it. */
  last: number;
  /** Size of the file after this process's last append: another writer changes it, and the tail is dropped. */
  size: number;
  events: StoredJobEvent[];
}

export function createFileJobEventStore(opts: { dir: string; ttlSeconds: number; now?: () => number }): JobEventStore {
  const dir = resolve(opts.dir);
  const now = opts.now ?? Date.now;
  const pathOf = (id: string) => join(dir, id + SUFFIX);
  const signals = new AppendSignals();
  const chains = new Map<string, Promise<void>>();
  const checkpoints = new Map<string, Map<number, number>>();
  const tails = new Map<string, Tail>();
  /** Open logs (O_APPEND) of the jobs appended to lately, each closed when idle. */
  const open_ = new Map<string, { fd: number; timer: ReturnType<typeof setTimeout> }>();

  const closeLog = (id: string) => {
    const o = open_.get(id);
    if (!o) return;
    open_.delete(id);
    clearTimeout(o.timer);
    try {
      closeSync(o.fd);
    } catch {}
  };

  /** Appends text to the job's log with write(2) on its open O_APPEND descriptor. */
  function appendText(id: string, text: string, bytes: number): void {
    let o = open_.get(id);
    if (o) o.timer.refresh();
    else {
      const fd = openSync(pathOf(id), "a", 0o600);
      const timer = setTimeout(() => closeLog(id), IDLE_CLOSE_MS);
      timer.unref?.();
      o = { fd, timer };
      open_.set(id, o);
    }
    let wrote = 0;
    try {
      // One write(2) of the text; a short write (a full disk) goes on from where it stopped.
      wrote = writeSync(o.fd, text);
      if (wrote < bytes) {
        const buf = Buffer.from(text);
        while (wrote < buf.length) wrote += writeSync(o.fd, buf, wrote, buf.length - wrote);
      }
    } catch (err) {
      // No half line is left behind: it would swallow the next append's first event.
      if (wrote > 0) {
        try {
          ftruncateSync(o.fd, fstatSync(o.fd).size - wrote);
        } catch {}
      }
      closeLog(id);
      throw err;
    }
  }

  /** Counts the lines already in the file (once per job and process, at its first append here). */
  async function tailOf(id: string): Promise<Tail> {
    let t = tails.get(id);
    if (t) return t;
    let text = "";
    try {
      text = await Bun.file(pathOf(id)).text();
    } catch {}
    let lines = 0;
    for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) lines++;
    t = { last: lines, size: Buffer.byteLength(text), events: [] };
    tails.set(id, t);
    return t;
  }

  /** The events after `after` from this process's tail, when it is current and reaches back that far. */
  function fromTail(id: string, after: number, limit: number): StoredJobEvent[] | undefined {
    const t = tails.get(id);
    if (!t) return undefined;
    let size = -1;
    try {
      size = statSync(pathOf(id)).size;
    } catch {}
    if (size !== t.size) {
      // Another process appended (the file is the truth from now on), or our own first append is
      // between counting the file's lines and its write (then the file answers this once).
      if (!chains.has(id)) tails.delete(id);
      return undefined;
    }
    const first = t.events[0]?.id ?? t.last + 1;
    if (after + 1 < first || after > t.last) return undefined;
    const start = after + 1 - first;
    return t.events.slice(start, start + limit);
  }

  const remember = (id: string, line: number, offset: number) => {
    let m = checkpoints.get(id);
    if (!m) {
      m = new Map();
      checkpoints.set(id, m);
    }
    m.set(line, offset);
    if (m.size > MAX_CHECKPOINTS) m.delete(m.keys().next().value!);
  };

  async function read(id: string, after: number, limit = DEFAULT_READ_LIMIT): Promise<StoredJobEvent[]> {
    if (!isJobId(id)) return [];
    const cached = fromTail(id, after, limit);
    if (cached) return cached;
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
            out.push(parseStored(line, buf.subarray(start, nl).toString("utf8")));
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
    append(id, events, json) {
      if (!isJobId(id)) return Promise.reject(new Error(`not a job id: ${JSON.stringify(id)}`));
      if (events.length === 0) return Promise.resolve();
      const texts = json ?? events.map(jsonOf);
      const text = `${texts.join("\n")}\n`;
      const prev = chains.get(id) ?? Promise.resolve();
      const next = prev.then(async () => {
        const t = await tailOf(id);
        const bytes = Buffer.byteLength(text);
        appendText(id, text, bytes);
        for (let i = 0; i < events.length; i++) t.events.push({ id: ++t.last, event: events[i]!, json: texts[i]! });
        if (t.events.length > TAIL_EVENTS) t.events.splice(0, t.events.length - TAIL_EVENTS);
        t.size += bytes;
      });
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
        closeLog(id);
        await unlink(join(dir, name)).catch(() => {});
        checkpoints.delete(id);
        tails.delete(id);
        removed++;
      }
      return removed;
    },
    async close() {
      await Promise.all([...chains.values()]);
      for (const id of [...open_.keys()]) closeLog(id);
    },
  };
}
