// Held commits: a write is answered once this process's searches see it and committed with the
// writes of the next holdMs (held-group-commit.ts holds the transaction; text-rows.ts keeps its
// full-text rows pending). What that answer-before-commit costs is kept here: an open marker
// beside the index file while a store holds commits, so the next start can tell an unclean stop
// (its last writes may never have committed); and the paths a failed commit lost, told to the
// router, which indexes them again from their files.
import { closeSync, openSync, readdirSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { processAlive } from "../../../../../common/file-lock";
import { log } from "../../../../../common/logger";
import type { HeldCommits } from "../../../types.ts";

const logger = log("index");

const OPEN_MARKER = ".open.";
/** The markers this process made (in a container the router is pid 1 at every start: one named for this pid that this process did not make is a dead one's). */
const ownMarkers = new Set<string>();

/** Removes the open markers of processes that are gone beside `file`: true when there was one. */
function takeDeadMarkers(file: string): boolean {
  const dir = dirname(file);
  const prefix = `${basename(file)}${OPEN_MARKER}`;
  let found = false;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length));
    if (ownMarkers.has(join(dir, name)) || (pid !== process.pid && processAlive(pid))) continue;
    rmSync(join(dir, name), { force: true });
    found = true;
  }
  return found;
}

export class HeldWrites implements Omit<HeldCommits, "settle"> {
  readonly stoppedUnclean: boolean;
  /** `<file>.open.<pid>` while this store holds commits: gone at close(). */
  private readonly marker: string;
  /** The paths written in the open transaction (what a failed commit loses). */
  private readonly open = new Set<string>();
  /** Paths whose answered writes a failed commit lost and no commit has carried since: close() then leaves the marker. */
  private readonly lost = new Set<string>();
  private readonly listeners: Array<(paths: string[]) => void> = [];

  constructor(file: string) {
    // One left by a process that is gone means its last writes may never have committed.
    this.stoppedUnclean = takeDeadMarkers(file);
    this.marker = `${file}${OPEN_MARKER}${process.pid}`;
    closeSync(openSync(this.marker, "w"));
    ownMarkers.add(this.marker);
  }

  /** A write of `path` went into the open transaction. */
  wrote(path: string): void {
    this.open.add(path);
  }

  /** The open transaction committed: its paths are safe. */
  committed(): void {
    for (const path of this.open) this.lost.delete(path);
    this.open.clear();
  }

  /** The open transaction's commit failed after its writes were answered: its paths are told to the listeners. */
  failed(err: unknown, writes: number): void {
    const paths = [...this.open];
    this.open.clear();
    for (const path of paths) this.lost.add(path);
    logger.error(
      `index: a commit of ${writes} answered writes failed (${err instanceof Error ? err.message : String(err)}); ${paths.length} note(s) are indexed again from their files`,
    );
    for (const listener of this.listeners) listener(paths);
  }

  onLostWrites(listener: (paths: string[]) => void): void {
    this.listeners.push(listener);
  }

  /** After the store's last commit: the marker goes, unless lost writes are not carried yet. */
  close(): void {
    // Lost writes not yet carried by a commit: the marker stays (no longer this store's), so the next open catches up from the files.
    if (this.lost.size > 0) {
      logger.warn(`index: ${this.lost.size} note(s) lost by a failed commit are not indexed again yet; the next start catches up from the files`);
    } else rmSync(this.marker, { force: true });
    ownMarkers.delete(this.marker);
  }
}
