// How the prompt hook shows the signals RouterClient.signalsSince() brought: those at or above
// the session's severity threshold, newest last.
import type { SignalRecorded } from "../../../src/router/client";

const RANK = ["critical", "high", "medium", "low", "info"];
/** Index in the severity order (critical first); anything unknown ranks as medium. */
export const severityRank = (s: string) => (RANK.includes(s) ? RANK.indexOf(s) : 2);

export function renderSignals(events: SignalRecorded[], minSeverity: string): string {
  const shown = events.map((e) => e.data).filter((e) => severityRank(e.severity) <= severityRank(minSeverity));
  if (shown.length === 0) return "";
  const lines = shown.map(
    (e) => `- [${e.severity}] ${e.title}${e.count > 1 ? ` (seen ${e.count}×)` : ""} — ${e.source}, ${e.ts}\n  ${e.content.replace(/\n/g, "\n  ")}`,
  );
  return `# Team brain: new signal${shown.length > 1 ? "s" : ""} since your last prompt\n\n${lines.join("\n")}`;
}
