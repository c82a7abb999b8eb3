// Signals raised since a session last looked, through GET /signal's resume: connect with
// Last-Event-ID = the session's cursor, read the X-Last-Event-Id header (the newest event id
// when the stream opened), take the replayed events up to it, and hang up. Without a cursor
// the session starts looking now: nothing is replayed, the cursor is set.
import { createParser } from "eventsource-parser";

export interface SignalSeen {
  id: number;
  severity: string;
  title: string;
  content: string;
  source: string;
  ts: string;
  count: number;
  repeat: boolean;
}

type Fetch = (path: string, init?: { headers?: Record<string, string> }) => Promise<Response>;

export async function signalsSince(get: Fetch, cursor: number | undefined): Promise<{ events: SignalSeen[]; cursor: number }> {
  const res = await get("/signal", { headers: { accept: "text/event-stream", ...(cursor !== undefined ? { "last-event-id": String(cursor) } : {}) } });
  try {
    if (!res.ok || !res.body) throw new Error(`GET /signal answered ${res.status}`);
    const newest = Number(res.headers.get("x-last-event-id"));
    if (!Number.isInteger(newest)) throw new Error("GET /signal sent no X-Last-Event-Id header");
    if (cursor === undefined || cursor >= newest) return { events: [], cursor: cursor === undefined ? newest : Math.max(cursor, newest) };
    const events: SignalSeen[] = [];
    let seen = cursor;
    const parser = createParser({
      onEvent: (e) => {
        const id = Number(e.id);
        if (Number.isInteger(id)) seen = Math.max(seen, id);
        if (e.event !== "signal") return;
        try {
          events.push({ id, ...(JSON.parse(e.data) as Omit<SignalSeen, "id">) });
        } catch {
          // a malformed event is skipped
        }
      },
    });
    const decoder = new TextDecoder();
    const reader = res.body.getReader();
    while (seen < newest) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
    await reader.cancel().catch(() => {});
    return { events, cursor: seen };
  } finally {
    // Hang up: the stream would stay open for live events.
    if (res.body && !res.body.locked) await res.body.cancel().catch(() => {});
  }
}

const RANK = ["critical", "high", "medium", "low", "info"];
/** Index in the severity order (critical first); anything unknown ranks as medium. */
export const severityRank = (s: string) => (RANK.includes(s) ? RANK.indexOf(s) : 2);

export function renderSignals(events: SignalSeen[], minSeverity: string): string {
  const shown = events.filter((e) => severityRank(e.severity) <= severityRank(minSeverity));
  if (shown.length === 0) return "";
  const lines = shown.map((e) => `- [${e.severity}] ${e.title}${e.count > 1 ? ` (seen ${e.count}×)` : ""} — ${e.source}, ${e.ts}\n  ${e.content.replace(/\n/g, "\n  ")}`);
  return `# Team brain: new signal${shown.length > 1 ? "s" : ""} since your last prompt\n\n${lines.join("\n")}`;
}
