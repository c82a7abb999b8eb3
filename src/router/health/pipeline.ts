// GET /health/pipeline (spec: "/health/pipeline"): seven stages in the order data travels —
// ingest, drain, arcs, lessons, signals, feed, index — each with a verdict, the evidence
// behind it and a message. A stage with no input is ok, so a fresh vault is all ok. Every
// directory scan draws on one budget (PIPELINE_SCAN_LIMIT entries), so a huge vault cannot
// make the report slow; a stage whose scan ran out says so in its evidence.
import type { IndexStore } from "../index/types";
import { overall, ScanBudget, STAGE_NAMES, type StageReport, type Verdict } from "./report";
import { arcsStage, drainStage, feedStage, indexStage, ingestStage, lessonsStage, signalsStage } from "./stages";

export interface PipelineDeps {
  vault: string;
  index: IndexStore;
  markerQuietHours: number;
  drainStaleMinutes: number;
  signalTtlHours: number;
  scanLimit: number;
  /** When the scheduler's next tick is due (undefined: none is scheduled). */
  nextTickAt?: () => Date | undefined;
  now?: () => Date;
}

export interface PipelineReport {
  status: Verdict;
  stages: StageReport[];
  checked_at: string;
  took_ms: number;
  /** Directory entries read, of PIPELINE_SCAN_LIMIT. */
  scanned: number;
}

export async function pipelineReport(deps: PipelineDeps): Promise<PipelineReport> {
  const started = performance.now();
  const now = (deps.now ?? (() => new Date()))();
  const budget = new ScanBudget(deps.scanLimit);
  const ctx = { ...deps, now, budget };
  const stages: StageReport[] = [];
  // In order, one after another: the budget is spent where data enters first.
  for (const stage of [ingestStage, drainStage, arcsStage, lessonsStage, signalsStage, feedStage, indexStage]) {
    stages.push(
      await stage(ctx).catch(
        (err: Error): StageReport => ({
          name: STAGE_NAMES[stages.length]!,
          verdict: "fail",
          evidence: { error: err.message },
          message: `the check itself failed: ${err.message}`,
        }),
      ),
    );
  }
  return {
    status: overall(stages.map((s) => s.verdict)),
    stages,
    checked_at: now.toISOString(),
    took_ms: Math.round(performance.now() - started),
    scanned: deps.scanLimit - budget.left,
  };
}
