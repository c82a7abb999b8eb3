// EXTRACT_ON_BOOT=1 (spec: "Transcript extraction at boot"): at start, the markers in the
// Claude Code transcripts already on disk (<CLAUDE_TRANSCRIPTS_DIR>/<project>/<session>.jsonl)
// are recorded once. Each keeps its reply's time and the key the Stop hook uses, so a marker
// both paths see (or a second boot) is recorded once.
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { log } from "../../common/logger";
import { type MarkerDeps, recordMarker } from "./marker";
import { harvestTranscript } from "./transcript";
import { markerType } from "./types";

const logger = log("extract");

export interface ExtractCounts {
  transcripts: number;
  recorded: number;
  known: number;
  refused: number;
}

export async function extractTranscripts(deps: MarkerDeps, dir: string): Promise<ExtractCounts> {
  const counts: ExtractCounts = { transcripts: 0, recorded: 0, known: 0, refused: 0 };
  const projects = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const p of projects) {
    if (!p.isDirectory()) continue;
    const files = (await readdir(join(dir, p.name)).catch(() => [] as string[])).filter((n) => n.endsWith(".jsonl"));
    for (const f of files) {
      counts.transcripts++;
      const { markers } = await harvestTranscript(join(dir, p.name, f), 0, f.slice(0, -".jsonl".length)).catch(() => ({ markers: [] }));
      for (const m of markers) {
        const type = markerType(m.type);
        if (!type) continue;
        try {
          const r = await recordMarker(
            deps,
            { type, content: m.content, attrs: m.attrs },
            { key: `header:${m.idempotency_key}`, source: "inline" },
            { origin: "inline", defaultSource: "claude-code" },
          );
          if (r.replayed) counts.known++;
          else counts.recorded++;
        } catch (err) {
          counts.refused++;
          logger.warn(`${join(p.name, f)}: a ${m.type} marker was refused: ${(err as Error).message}`);
        }
      }
    }
  }
  return counts;
}
