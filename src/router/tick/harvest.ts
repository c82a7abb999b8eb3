// The tick's first step: inline markers written into vault notes go through the same routing
// as POST /marker, exactly once each. A marker's identity (its note, kind, attributes and
// content) is its idempotency key, so a second tick — or a restart that lost the scan state —
// finds it in the ledger and records nothing. The scan state only spares re-reading notes
// whose mtime and size are unchanged.
import { join } from "node:path";
import { DomainError } from "../../common/domain-error";
import { hashContent } from "../index/document";
import { parseInlineMarkers } from "../markers/inline";
import { type MarkerDeps, markerId, markerTime, recordMarker } from "../markers/marker";
import type { MarkerRecord } from "../markers/types";
import type { WalkedFile } from "../vault/walk";
import { HarvestStateWriter, SortedStateReader } from "./harvest-state";
import { isHarvestable } from "./sources";

export interface HarvestResult {
  /** Markers recorded by this tick (in a dry run: those it would record). */
  records: MarkerRecord[];
  notesRead: number;
  /** Markers found but already recorded by an earlier tick. */
  alreadyRecorded: number;
  /** Markers refused (bad attrs.ts, too long), with why. */
  refused: string[];
}

const stateFile = (dataDir: string) => join(dataDir, "tick", "harvest-state.json");

function inlineKey(notePath: string, type: string, attrs: Record<string, string>, content: string): string {
  const sorted = Object.fromEntries(Object.entries(attrs).sort(([a], [b]) => (a < b ? -1 : 1)));
  return `inline:${hashContent(`${notePath}\0${type}\0${JSON.stringify(sorted)}\0${content}`)}`;
}

export const harvestStamp = (f: { mtimeMs: number; size: number }) => `${f.mtimeMs}:${f.size}`;

/**
 * One tick's harvest, fed the vault's files in comparePaths order (walkSorted): the scan
 * state is kept in that order too, so the two are compared as they stream and neither is ever
 * held whole. For each harvestable file the caller asks wants(); a file wanted is read (by the
 * caller, who may need its text too) and given to take().
 */
export class Harvest {
  readonly result: HarvestResult = { records: [], notesRead: 0, alreadyRecorded: 0, refused: [] };
  private readonly previous: SortedStateReader;

  private constructor(
    private readonly deps: MarkerDeps,
    private readonly opts: { dryRun: boolean; asOf: Date },
    private readonly next: HarvestStateWriter | undefined,
  ) {
    this.previous = new SortedStateReader(stateFile(deps.dataDir));
  }

  /** Outside a dry run the next scan state is written as the files pass. */
  static async start(deps: MarkerDeps, opts: { dryRun: boolean; asOf: Date }): Promise<Harvest> {
    return new Harvest(deps, opts, opts.dryRun ? undefined : await HarvestStateWriter.open(stateFile(deps.dataDir)));
  }

  /** Whether this note must be read for its markers: harvestable, and changed since the last scan. */
  async wants(f: WalkedFile): Promise<boolean> {
    if (!isHarvestable(f.path)) return false;
    const stamp = harvestStamp(f);
    this.next?.add(f.path, stamp);
    return (await this.previous.stampOf(f.path)) !== stamp;
  }

  /** A wanted note's text (null: gone since the walk): its markers recorded, exactly once each. */
  async take(f: WalkedFile, text: string | null): Promise<void> {
    if (text === null) return;
    const { deps, opts, result } = this;
    result.notesRead++;
    for (const m of parseInlineMarkers(text)) {
      const key = inlineKey(f.path, m.type, m.attrs, m.content);
      const input = { type: m.type, content: m.content, attrs: m.attrs };
      const fallbackTs = new Date(f.mtimeMs);
      if (opts.dryRun) {
        const id = markerId(key);
        if (await Bun.file(join(deps.dataDir, "markers", id.slice(3, 5), `${id}.json`)).exists()) result.alreadyRecorded++;
        else result.records.push(preview(id, input, f.path, opts.asOf, fallbackTs));
        continue;
      }
      try {
        const { record, replayed } = await recordMarker(
          deps,
          input,
          { key, source: "inline" },
          {
            origin: "inline",
            receivedAt: opts.asOf,
            defaultSource: `vault:${f.path}`,
            fallbackTs,
          },
        );
        if (replayed) result.alreadyRecorded++;
        else result.records.push(record);
      } catch (err) {
        // A marker the API would refuse (invalid or too large) is skipped, not retried forever: its key is
        // not recorded, but the note is marked scanned until it changes.
        if (err instanceof DomainError && (err.kind === "invalid" || err.kind === "too_large"))
          result.refused.push(`${f.path}: @${m.type}: ${(err as Error).message}`);
        else throw err;
      }
    }
  }

  /** Every file seen: the scan state put in place. */
  async finish(): Promise<HarvestResult> {
    await this.next?.commit();
    this.previous.close();
    return this.result;
  }

  /** After a failure (or once finished): the temp state dropped, the old one left as it was. */
  async close(): Promise<void> {
    await this.next?.discard();
    this.previous.close();
  }
}

function preview(
  id: string,
  input: { type: MarkerRecord["type"]; content: string; attrs: Record<string, string> },
  notePath: string,
  asOf: Date,
  fallbackTs: Date,
): MarkerRecord {
  let ts = fallbackTs;
  try {
    ts = markerTime(input.attrs.ts, fallbackTs);
  } catch {}
  return {
    id,
    type: input.type,
    content: input.content,
    attrs: input.attrs,
    ts: ts.toISOString(),
    received_at: asOf.toISOString(),
    source: input.attrs.source ?? `vault:${notePath}`,
    session_id: input.attrs.session_id ?? null,
    path: "",
    written: false,
    origin: "inline",
    key_source: "inline",
  };
}
