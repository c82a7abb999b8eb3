// The tick's first step: inline markers written into vault notes go through the same routing
// as POST /marker, exactly once each. A marker's identity (its note, kind, attributes and
// content) is its idempotency key, so a second tick — or a restart that lost the scan state —
// finds it in the ledger and records nothing. The scan state only spares re-reading notes
// whose mtime and size are unchanged.
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { DomainError } from "../../common/domain-error";
import { hashContent } from "../index/document";
import { parseInlineMarkers } from "../markers/inline";
import { markerId, markerTime, recordMarker, type MarkerDeps } from "../markers/marker";
import type { MarkerRecord } from "../markers/types";
import type { WalkedFile } from "../vault/walk";
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

export async function harvestInlineMarkers(
  deps: MarkerDeps,
  files: WalkedFile[],
  opts: { dryRun: boolean; asOf: Date },
): Promise<HarvestResult> {
  const statePath = stateFile(deps.dataDir);
  const state: Record<string, string> = await readFile(statePath, "utf8").then((t) => JSON.parse(t), () => ({}));
  const next: Record<string, string> = {};
  const result: HarvestResult = { records: [], notesRead: 0, alreadyRecorded: 0, refused: [] };
  for (const f of files) {
    if (!isHarvestable(f.path)) continue;
    const stamp = `${f.mtimeMs}:${f.size}`;
    next[f.path] = stamp;
    if (state[f.path] === stamp) continue;
    const text = await readFile(join(deps.vault, f.path), "utf8").catch(() => null);
    if (text === null) continue;
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
        const { record, replayed } = await recordMarker(deps, input, { key, source: "inline" }, {
          origin: "inline",
          receivedAt: opts.asOf,
          defaultSource: `vault:${f.path}`,
          fallbackTs,
        });
        if (replayed) result.alreadyRecorded++;
        else result.records.push(record);
      } catch (err) {
        // A marker the API would refuse (invalid or too large) is skipped, not retried forever: its key is
        // not recorded, but the note is marked scanned until it changes.
        if (err instanceof DomainError && (err.kind === "invalid" || err.kind === "too_large")) result.refused.push(`${f.path}: @${m.type}: ${(err as Error).message}`);
        else throw err;
      }
    }
  }
  if (!opts.dryRun) {
    await mkdir(join(deps.dataDir, "tick"), { recursive: true });
    await writeFileAtomic(statePath, JSON.stringify(next));
  }
  return result;
}

function preview(id: string, input: { type: MarkerRecord["type"]; content: string; attrs: Record<string, string> }, notePath: string, asOf: Date, fallbackTs: Date): MarkerRecord {
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
