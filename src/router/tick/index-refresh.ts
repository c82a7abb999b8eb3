// Keeps the index in step with the vault for every producer (sources.ts): the tick's full,
// incremental refresh (mtime, then content hash; files gone leave the index) — raw/ through
// the index's own refreshFolder(), the system-written files here — and a small background
// indexer that catches a marker's written file up right after the response, one path at a
// time, coalescing repeats.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { log } from "../../common/logger";
import { documentFromFile } from "../index/document";
import { IndexedRows, type RefreshCounts as RawCounts, type RefreshOptions, refreshFolder } from "../index/refresh";
import { heldCommits, type IndexStore, PRODUCERS, type Producer } from "../index/types";
import { comparePaths, type WalkedFile, walkSorted } from "../vault/walk";
import { PRODUCER_SOURCES, type ProducerSources, producerOf } from "./sources";

const logger = log("index-refresh");

export interface RefreshDeps {
  vault: string;
  index: IndexStore;
  embed?: (texts: string[]) => Promise<number[][]>;
}

export interface RefreshCounts {
  upserted: number;
  removed: number;
  unchanged: number;
  byProducer: Record<Producer, number>;
}

/**
 * A producer's files, streamed in path order: its roots walked one after another (sorted as
 * folders, so their files come out in order too), each file kept when it is the producer's.
 */
async function* producerFiles(vault: string, source: ProducerSources): AsyncGenerator<WalkedFile> {
  const roots = [...source.roots].sort((x, y) => comparePaths(`${x}/`, `${y}/`));
  for (const root of roots) yield* walkSorted(vault, root, { filter: (path) => producerOf(path) === source.producer });
}

async function indexFile(deps: RefreshDeps, producer: Producer, f: { path: string; mtimeMs: number }): Promise<boolean> {
  const content = await readFile(join(deps.vault, f.path), "utf8");
  return deps.index.upsert(documentFromFile({ path: f.path, producer, content, mtimeMs: f.mtimeMs }), deps.embed ? { embed: deps.embed } : undefined);
}

/** raw/'s refresh (refreshFolder), over `files` when the caller walks raw/ (the tick), else its own walk. */
export function refreshRaw(deps: RefreshDeps, files?: RefreshOptions["files"]): Promise<RawCounts> {
  return refreshFolder(deps.index, { vault: deps.vault, folder: "raw", producer: "raw", embed: deps.embed, files });
}

/**
 * Brings every producer's rows in line with the walked files: raw/ walked by refreshFolder,
 * unless `raw` gives the counts of a raw/ refresh this tick already ran (refreshRaw).
 */
export async function refreshIndex(deps: RefreshDeps, done: { raw?: RawCounts } = {}): Promise<RefreshCounts> {
  const counts: RefreshCounts = {
    upserted: 0,
    removed: 0,
    unchanged: 0,
    byProducer: Object.fromEntries(PRODUCERS.map((p) => [p, 0])) as Record<Producer, number>,
  };
  const raw = done.raw ?? (await refreshRaw(deps));
  counts.upserted += raw.added + raw.updated;
  counts.removed += raw.removed;
  counts.unchanged += raw.unchanged;
  counts.byProducer.raw = raw.added + raw.updated + raw.unchanged;
  for (const source of PRODUCER_SOURCES) {
    const { producer } = source;
    if (producer === "raw") continue;
    // The producer's rows read beside its files, both in path order (IndexedRows).
    const known = await IndexedRows.open(deps.index, producer);
    const drop = async (gone: string[]) => {
      for (const path of gone) if (await deps.index.remove(path)) counts.removed++;
    };
    for await (const f of producerFiles(deps.vault, source)) {
      counts.byProducer[producer]++;
      const { fp, gone } = await known.seek(f.path);
      await drop(gone);
      if (fp && fp.mtimeMs === f.mtimeMs) {
        counts.unchanged++;
        continue;
      }
      const changed = await indexFile(deps, producer, f).catch((err: NodeJS.ErrnoException) => {
        if (err.code === "ENOENT") return false; // deleted since the walk; the next refresh drops it
        throw err;
      });
      if (changed) counts.upserted++;
      else counts.unchanged++;
    }
    for await (const gone of known.rest()) await drop(gone);
  }
  return counts;
}

/**
 * After an unclean stop (HeldCommits.stoppedUnclean: the last process's held writes may never
 * have committed): every producer's rows brought in line with the vault's files, logged.
 */
export async function catchUpIndex(deps: RefreshDeps): Promise<RefreshCounts> {
  const started = performance.now();
  const counts = await refreshIndex(deps);
  logger.warn(
    `index: the last router on this data directory stopped without closing its index; caught up from the vault's files in ${Math.round(performance.now() - started)} ms (${counts.upserted} indexed, ${counts.removed} removed)`,
  );
  return counts;
}

/**
 * Indexes single files soon after they are written: a path scheduled again while it waits is
 * indexed once, and a round starts DELAY_MS after the first schedule, so a burst of markers
 * appending to one lesson log re-indexes that log about once per round, not once per marker.
 */
export class BackgroundIndexer {
  static readonly DELAY_MS = 1000;
  private readonly pending = new Set<string>();
  /** Producers the index holds rows for (once seen, they stay: rows only go with their files). */
  private readonly indexed = new Set<Producer>();
  /**
   * A producer's first file being indexed now: the files written meanwhile (the rest of a
   * batch's milestones, all appending to one daily log) wait for it, then go to the background
   * round — else each would index the same growing file again at once, and an import would
   * re-index its daily log many times over.
   */
  private readonly first = new Map<Producer, Promise<void>>();
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly deps: RefreshDeps) {}

  schedule(path: string): void {
    if (this.closed || !producerOf(path)) return;
    this.pending.add(path);
    this.running ??= Bun.sleep(BackgroundIndexer.DELAY_MS)
      .then(() => this.drain())
      .finally(() => {
        this.running = undefined;
        // Scheduled while the round ran: another round, after another delay.
        if (this.pending.size > 0 && !this.closed) this.schedule(this.pending.values().next().value as string);
      });
  }

  /**
   * A file the router just wrote (issue 16 part 5: the pipeline tells the truth right after
   * use). The first file of a producer the index holds no rows for is indexed before this
   * resolves, so the index never lags behind files a report can see; later writes go to the
   * background round (within DELAY_MS), which coalesces a burst of markers into one re-index.
   */
  async written(path: string): Promise<void> {
    const producer = producerOf(path);
    if (this.closed || !producer) return;
    if (this.indexed.has(producer)) return this.schedule(path);
    const inFlight = this.first.get(producer);
    if (inFlight) {
      // Its first file is being indexed: this one (often the same file, written again) goes
      // to the background round once that is done.
      await inFlight;
      return this.schedule(path);
    }
    const first = this.indexFirst(producer, path).finally(() => this.first.delete(producer));
    this.first.set(producer, first);
    await first;
  }

  /** A file of a producer not seen yet: indexed now, unless the index already holds the producer's rows. */
  private async indexFirst(producer: Producer, path: string): Promise<void> {
    if (await this.deps.index.holdsProducer(producer).catch(() => false)) this.indexed.add(producer);
    if (this.indexed.has(producer)) return this.schedule(path);
    try {
      const st = await Bun.file(join(this.deps.vault, path)).stat();
      await indexFile(this.deps, producer, { path, mtimeMs: st.mtimeMs });
      this.indexed.add(producer);
    } catch (err) {
      logger.warn(`could not index ${path} now (the next tick will): ${(err as Error).message}`);
      this.schedule(path);
    }
  }

  /** Resolves once everything scheduled so far is indexed and committed. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
    heldCommits(this.deps.index)?.settle();
  }

  async close(): Promise<void> {
    await this.idle();
    this.closed = true;
  }

  /** One round: the paths pending now; later ones wait for the next round. */
  private async drain(): Promise<void> {
    const round = [...this.pending];
    this.pending.clear();
    for (const path of round) {
      const producer = producerOf(path)!;
      try {
        const st = await Bun.file(join(this.deps.vault, path)).stat();
        await indexFile(this.deps, producer, { path, mtimeMs: st.mtimeMs });
      } catch (err) {
        // The tick's full refresh will catch it up; a failure here must not fail the marker.
        logger.warn(`could not index ${path} now (the next tick will): ${(err as Error).message}`);
      }
    }
  }
}
