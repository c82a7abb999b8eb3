// The marker outbox on the client side: one JSON file per marker waiting for the router
// ({type, content, attrs, session_id?, idempotency_key?}), written when a POST /marker could
// not be made, and replayed later (router-cli sync, the Stop hook, the orchestrator after a
// job). A replay posts each file with its original time (attrs.ts) and idempotency key, so a
// marker replayed twice is recorded once; accepted files move to <sent>, refused ones to
// <rejected> with the reason beside them.
import { access, mkdir, readdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { ApiError, ConnectionError, type MarkerInput, type RouterClient } from "../client";

export interface BufferedMarker {
  type?: unknown;
  content?: unknown;
  attrs?: Record<string, unknown>;
  session_id?: unknown;
  idempotency_key?: unknown;
}

/** Writes one marker into the outbox (atomically: a temp name, then the final one). */
export async function bufferMarker(dir: string, marker: BufferedMarker): Promise<string> {
  await mkdir(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[-:.]/g, "");
  const name = `${stamp}-${crypto.randomUUID().slice(0, 8)}.json`; // the Web Crypto global: node:crypto would cost a Stop hook milliseconds to load
  const temp = join(dir, `.${name}.tmp`);
  await writeFile(temp, `${JSON.stringify(marker)}\n`, { mode: 0o600 });
  await rename(temp, join(dir, name));
  return join(dir, name);
}

export interface ReplayCounts {
  posted: number;
  duplicates: number;
  refused: number;
}

export interface ReplayOptions {
  dirs: string[];
  sent: string;
  rejected: string;
  /** Told about each file as it is handled. */
  narrate?: (line: string) => void;
}

/** Thrown when the router stops answering mid-replay: the rest stays buffered. */
export class ReplayInterrupted extends Error {
  constructor(
    readonly counts: ReplayCounts,
    override readonly cause: ConnectionError | ApiError,
  ) {
    super(cause.message);
    this.name = "ReplayInterrupted";
  }
}

export async function replayOutbox(client: RouterClient, opts: ReplayOptions): Promise<ReplayCounts> {
  const counts: ReplayCounts = { posted: 0, duplicates: 0, refused: 0 };
  for (const dir of opts.dirs) {
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith(".json") && !n.startsWith(".")).sort();
    opts.narrate?.(`${dir}: ${names.length} marker file(s)`);
    for (const name of names) {
      const path = join(dir, name);
      let marker: BufferedMarker;
      try {
        marker = JSON.parse(await readFile(path, "utf8"));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") continue; // another replay took it
        await moveAside(path, opts.rejected, `not JSON: ${(err as Error).message}`);
        counts.refused++;
        continue;
      }
      // The original time travels with the marker: attrs.ts, else when the file was written.
      const mtime = await stat(path).then(
        (s) => s.mtimeMs,
        () => Date.now(),
      );
      const ts = marker.attrs?.ts ?? new Date(mtime).toISOString();
      const attrs = { ...marker.attrs, ts, ...(marker.session_id && !marker.attrs?.session_id ? { session_id: marker.session_id } : {}) };
      const key = typeof marker.idempotency_key === "string" && marker.idempotency_key ? marker.idempotency_key : undefined;
      let created: boolean;
      try {
        // The file is sent as it was read: the router judges it, and refuses (400) what is not a marker.
        ({ created } = await client.marker({ type: marker.type, content: marker.content, attrs } as MarkerInput, { idempotencyKey: key }));
      } catch (err) {
        // The router down, or refusing everyone (token, 5xx): stop, the rest stays buffered.
        if (err instanceof ConnectionError || (err instanceof ApiError && (err.status === 401 || err.status >= 500))) throw new ReplayInterrupted(counts, err);
        if (!(err instanceof ApiError)) throw err;
        // A refusal of this marker (bad kind, too long) will not change on a retry.
        await moveAside(path, opts.rejected, `${err.status} ${err.code}: ${err.message}`.slice(0, 300));
        counts.refused++;
        opts.narrate?.(`  ${name}: refused (${err.status})`);
        continue;
      }
      if (created) counts.posted++;
      else counts.duplicates++;
      await moveAside(path, opts.sent);
      opts.narrate?.(`  ${name}: ${created ? "recorded" : "already recorded"}`);
    }
  }
  return counts;
}

/** Moves a marker file into `dir`, never over an earlier one of the same name (outbox and backlog may share names). */
async function moveAside(path: string, dir: string, reason?: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const name = basename(path);
  let target = join(dir, name);
  for (
    let n = 1;
    await access(target).then(
      () => true,
      () => false,
    );
    n++
  )
    target = join(dir, name.replace(/(\.json)?$/, `.${n}$1`));
  try {
    await rename(path, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return; // a concurrent replay moved it first
    throw err;
  }
  if (reason) await writeFile(`${target}.reason`, `${reason}\n`);
}
