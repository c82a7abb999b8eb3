// The signal log without Redis: the journal file (JSON lines) under DATA_DIR. An append takes
// the journal's claim (common/claim.ts), reads the last id from the file's end and writes id + 1
// (appends that arrive meanwhile are written together under the next claim), so two
// router processes on one vault never hand out the same id. Every process follows the file
// (a stat every pollMs, and at once after its own append) and reads what was added. When the
// journal passes twice the kept events it is rewritten with the newest ones (under the lock);
// followers notice the new file and carry on from their last id.
import { appendFile, mkdir, open, readFile, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { withClaim } from "../../common/claim";
import { log } from "../../common/logger";
import type { SignalEvent, SignalLog } from "./log";

const logger = log("signals");
const TAIL_BYTES = 64 * 1024;

function parseLines(text: string): SignalEvent[] {
  const out: SignalEvent[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const e = JSON.parse(line) as SignalEvent;
      if (typeof e.id === "number" && typeof e.event === "string") out.push(e);
    } catch {
      // A torn line (a process died mid-append) is skipped.
    }
  }
  return out;
}

export function journalLog(path: string, opts: { keep: number; pollMs?: number }): SignalLog {
  const pollMs = opts.pollMs ?? 100;
  let offset = 0;
  let inode = -1;
  let delivered = 0;
  let onEvents: ((events: SignalEvent[]) => void) | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  let reading: Promise<void> | undefined;
  let again = false;
  let appendsSinceCompaction = 0;

  /** The last id in the file: its tail first, the whole file when the tail holds no whole event. */
  async function lastId(): Promise<number> {
    const st = await stat(path).catch(() => null);
    if (!st || st.size === 0) return 0;
    const fh = await open(path, "r");
    try {
      const start = Math.max(0, st.size - TAIL_BYTES);
      const buf = Buffer.alloc(st.size - start);
      await fh.read(buf, 0, buf.length, start);
      const tail = parseLines(buf.toString("utf8"));
      if (tail.length > 0) return Math.max(...tail.map((e) => e.id));
    } finally {
      await fh.close();
    }
    const all = parseLines(await readFile(path, "utf8"));
    return all.length > 0 ? Math.max(...all.map((e) => e.id)) : 0;
  }

  /** Reads what was appended since the last look and hands on the events not seen yet. */
  async function readNew(): Promise<void> {
    const st = await stat(path).catch(() => null);
    if (!st) return;
    if (st.ino !== inode || st.size < offset) {
      inode = st.ino; // rewritten (compacted): read it again, keep only ids after the last one seen
      offset = 0;
    }
    if (st.size === offset) return;
    const fh = await open(path, "r");
    let text: string;
    try {
      const buf = Buffer.alloc(st.size - offset);
      await fh.read(buf, 0, buf.length, offset);
      text = buf.toString("utf8");
    } finally {
      await fh.close();
    }
    const end = text.lastIndexOf("\n");
    if (end < 0) return; // a line still being written
    offset += Buffer.byteLength(text.slice(0, end + 1));
    const fresh = parseLines(text.slice(0, end + 1))
      .filter((e) => e.id > delivered)
      .sort((a, b) => a.id - b.id);
    if (fresh.length === 0) return;
    delivered = fresh.at(-1)!.id;
    onEvents?.(fresh);
  }

  function look(): void {
    if (reading) {
      again = true;
      return;
    }
    reading = readNew()
      .catch((err: Error) => logger.warn(`following the signal journal: ${err.message}`))
      .finally(() => {
        reading = undefined;
        if (again) {
          again = false;
          look();
        }
      });
  }

  async function compact(): Promise<void> {
    const events = parseLines(await readFile(path, "utf8"));
    if (events.length <= opts.keep * 2) return;
    await writeFileAtomic(
      path,
      `${events
        .slice(-opts.keep)
        .map((e) => JSON.stringify(e))
        .join("\n")}\n`,
    );
  }

  /**
   * Appends waiting their turn. One append at a time holds the journal's claim; those that arrive
   * meanwhile go in together under the next one — one claim, one read of the last id and one
   * write for all of them (an import that routes hundreds of signals took a claim file, made and
   * unlinked, and five file reads per signal; freed inodes also slow ext4's next file creations).
   */
  let pending: Array<{ event: string; data: Record<string, unknown>; resolve: (e: SignalEvent) => void; reject: (err: unknown) => void }> = [];
  let writing: Promise<void> | undefined;

  async function drain(): Promise<void> {
    while (pending.length > 0) {
      const group = pending;
      pending = [];
      try {
        const events = await withClaim(`${path}.claim`, () => appendGroup(group));
        for (const [i, g] of group.entries()) g.resolve(events[i]!);
      } catch (err) {
        for (const g of group) g.reject(err);
      }
    }
    writing = undefined;
  }

  /** Under the claim: ids after the file's last, the lines written in one append. */
  async function appendGroup(group: Array<{ event: string; data: Record<string, unknown> }>): Promise<SignalEvent[]> {
    const first = (await lastId()) + 1;
    const events = group.map((g, i): SignalEvent => ({ id: first + i, event: g.event, data: g.data }));
    // A torn last line (a process died mid-append) must not swallow these.
    const st = await stat(path).catch(() => null);
    let lead = "";
    if (st && st.size > 0) {
      const fh = await open(path, "r");
      const b = Buffer.alloc(1);
      await fh.read(b, 0, 1, st.size - 1).finally(() => fh.close());
      if (b.toString() !== "\n") lead = "\n";
    }
    await appendFile(path, `${lead}${events.map((e) => JSON.stringify(e)).join("\n")}\n`);
    appendsSinceCompaction += events.length;
    if (appendsSinceCompaction >= Math.max(1, Math.floor(opts.keep / 2))) {
      appendsSinceCompaction = 0;
      await compact();
    }
    return events;
  }

  return {
    kind: "journal",
    async open(count) {
      await mkdir(dirname(path), { recursive: true });
      const text = await readFile(path, "utf8").catch(() => "");
      const st = await stat(path).catch(() => null);
      inode = st?.ino ?? -1;
      offset = Buffer.byteLength(text);
      const events = parseLines(text);
      return events.slice(-count);
    },
    append(event, data) {
      return new Promise<SignalEvent>((resolve, reject) => {
        pending.push({ event, data, resolve, reject });
        if (!writing) writing = drain();
      });
    },
    follow(afterId, fn) {
      delivered = afterId;
      onEvents = fn;
      timer = setInterval(look, pollMs);
      timer.unref?.();
    },
    kick: look,
    async close() {
      clearInterval(timer);
      onEvents = undefined;
      await reading;
    },
  };
}
