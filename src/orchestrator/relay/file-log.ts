// The relay without Redis: one JSONL file per correlation id under <state>/relay/, a line per
// entry ({seq, event, data}), and beside it `<name>.expires` holding the expiry (ms since the
// epoch). Readers see the newest 2,000 entries; the writer (the one process running the turn)
// cuts the file back to them once it is 10 % over, so the cap holds without a rewrite per event.
// Expired streams are removed when read and swept when a turn ends. Followers poll the file's
// size (the fallback is for one host; with several pods, use Redis).
import { appendFile, mkdir, readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { encodeKeyName } from "../../common/kv/key-filename";
import { type Cursor, RELAY_MAX_ENTRIES, type RelayEntry, type RelayLog } from "./relay";

const POLL_MS = 100;
const SLACK = Math.ceil(RELAY_MAX_ENTRIES / 10);

export async function fileRelayLog(dir: string): Promise<RelayLog> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const base = (id: string) => join(dir, encodeKeyName(id));
  const counts = new Map<string, number>(); // lines this process wrote per stream, for the cut

  const expiresAt = async (id: string): Promise<number | undefined> => {
    const text = await readFile(`${base(id)}.expires`, "utf8").catch(() => undefined);
    return text === undefined ? undefined : Number(text);
  };
  const remove = (b: string) => Promise.all([rm(`${b}.jsonl`, { force: true }), rm(`${b}.expires`, { force: true })]);

  async function entries(id: string): Promise<RelayEntry[] | undefined> {
    const exp = await expiresAt(id);
    if (exp !== undefined && exp <= Date.now()) {
      await remove(base(id));
      return undefined;
    }
    const text = await readFile(`${base(id)}.jsonl`, "utf8").catch(() => undefined);
    if (text === undefined) return undefined;
    // A line still being written has no newline yet: leave it for the next read.
    const lines = text
      .slice(0, text.lastIndexOf("\n") + 1)
      .split("\n")
      .filter(Boolean)
      .slice(-RELAY_MAX_ENTRIES);
    return lines.flatMap((l) => {
      try {
        const e = JSON.parse(l) as Omit<RelayEntry, "id">;
        return [{ ...e, id: String(e.seq) }];
      } catch {
        return [];
      }
    });
  }

  const after = (all: RelayEntry[], c: Cursor | undefined) => {
    if (c === undefined) return all;
    // An entry id (from a Redis-backed pod) has no meaning here: its ms part is no sequence number.
    const seq = c.kind === "seq" ? c.seq : Number.MAX_SAFE_INTEGER;
    return all.filter((e) => e.seq > seq);
  };

  async function sweep(): Promise<void> {
    const now = Date.now();
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (!name.endsWith(".expires")) continue;
      const b = join(dir, name.slice(0, -".expires".length));
      const exp = Number(await readFile(`${b}.expires`, "utf8").catch(() => "NaN"));
      if (exp <= now) await remove(b);
    }
  }
  await sweep();

  return {
    kind: "file",
    async append(id, entry, ttlSeconds) {
      const b = base(id);
      await appendFile(`${b}.jsonl`, `${JSON.stringify({ seq: entry.seq, event: entry.event, data: entry.data ?? null })}\n`, { mode: 0o600 });
      const n = (counts.get(id) ?? 0) + 1;
      counts.set(id, n);
      if (n === 1 || entry.event === "done") await writeFileAtomic(`${b}.expires`, String(Date.now() + ttlSeconds * 1000));
      if (n > RELAY_MAX_ENTRIES + SLACK) {
        const kept = (await readFile(`${b}.jsonl`, "utf8")).split("\n").filter(Boolean).slice(-RELAY_MAX_ENTRIES);
        await writeFileAtomic(`${b}.jsonl`, `${kept.join("\n")}\n`);
        counts.set(id, kept.length);
      }
      if (entry.event === "done") {
        counts.delete(id);
        await sweep();
      }
    },
    async read(id, c) {
      const all = await entries(id);
      return { known: all !== undefined, entries: after(all ?? [], c), oldest: all?.[0] };
    },
    async follow(id) {
      let size = -1;
      return {
        async next(c, waitMs) {
          const deadline = Date.now() + waitMs;
          for (;;) {
            const now = await stat(`${base(id)}.jsonl`).then(
              (s) => s.size,
              () => -1,
            );
            if (now !== size) {
              size = now;
              const found = after((await entries(id)) ?? [], c);
              if (found.length > 0) return found;
            }
            if (Date.now() >= deadline) return [];
            await Bun.sleep(Math.min(POLL_MS, Math.max(1, deadline - Date.now())));
          }
        },
        close: async () => {},
      };
    },
    async ttlMs(id) {
      const exp = await expiresAt(id);
      if ((await entries(id)) === undefined) return -2;
      return exp === undefined ? -1 : Math.max(0, exp - Date.now());
    },
    close: async () => {},
  };
}
