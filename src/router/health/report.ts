// The shapes both health reports share.
export type Verdict = "ok" | "warn" | "fail";

/** The pipeline's stages, in the order data travels. */
export const STAGE_NAMES = ["ingest", "drain", "arcs", "lessons", "signals", "feed", "index"] as const;
export type StageName = (typeof STAGE_NAMES)[number];

export interface StageReport {
  name: StageName;
  verdict: Verdict;
  /** What the verdict rests on: counts, paths, times (capped lists). */
  evidence: Record<string, unknown>;
  message: string;
}

/** The worst verdict wins. */
export function overall(verdicts: Verdict[]): Verdict {
  return verdicts.includes("fail") ? "fail" : verdicts.includes("warn") ? "warn" : "ok";
}

/** A budget of directory entries shared by one report's scans. */
export class ScanBudget {
  constructor(public left: number) {}
  take(n: number): void {
    this.left = Math.max(0, this.left - n);
  }
}

export const hoursBetween = (a: Date, b: Date) => Math.round(((b.getTime() - a.getTime()) / 3_600_000) * 10) / 10;
