// Signal files (amygdala/<YYYYMMDDTHHMMSSZ>-<severity>-<slug>.md, written by vault/records.ts)
// read back: severity ranks, liveness under SIGNAL_TTL_HOURS, and the one-line form that
// signals.md and the feed use.
import { join } from "node:path";
import { splitFrontmatter } from "../index/document";
import { containedFileNamesSync } from "../vault/contained";
import { readTextOrNull, statOrNull } from "../vault/quiet-fs";

/** Known severities, most urgent first; anything else ranks as medium. */
export const SEVERITIES = ["critical", "high", "medium", "low", "info"] as const;

export function severityRank(severity: string): number {
  const i = (SEVERITIES as readonly string[]).indexOf(severity);
  return i < 0 ? 2 : i;
}

export interface SignalFile {
  /** Vault-relative path. */
  path: string;
  severity: string;
  status: string;
  source: string;
  session_id?: string;
  title: string;
  created: Date;
  /** When it was last seen: an absorbed duplicate moves this forward. */
  last_seen: Date;
  count: number;
  body: string;
}

const dateOf = (v: unknown): Date | undefined => {
  if (v instanceof Date && !Number.isNaN(v.getTime())) return v;
  if (typeof v === "string" && !Number.isNaN(Date.parse(v))) return new Date(v);
  return undefined;
};
const stringOf = (v: unknown): string | undefined => (typeof v === "string" && v.trim() ? v.trim() : undefined);

/** A signal file's fields, or null when it is not one (no `type: signal` frontmatter). */
export function parseSignalFile(path: string, text: string): SignalFile | null {
  const { data, body } = splitFrontmatter(text);
  if (data.type !== "signal") return null;
  const created = dateOf(data.created);
  if (!created) return null;
  return {
    path,
    severity: stringOf(data.severity) ?? "medium",
    status: stringOf(data.status) ?? "open",
    source: stringOf(data.source) ?? "unknown",
    session_id: stringOf(data.session_id),
    title: stringOf(data.title) ?? body.trim().split("\n")[0] ?? "",
    created,
    last_seen: dateOf(data.last_seen) ?? created,
    count: typeof data.count === "number" ? data.count : 1,
    body: body.trim(),
  };
}

/**
 * An open signal is live until it has been quiet for the TTL; critical ones stay live until
 * closed by hand (spec: signals.md "has a TTL sweep"; issue 6: "unless critical").
 */
export function isLive(sig: SignalFile, asOf: Date, ttlHours: number): boolean {
  if (sig.status !== "open") return false;
  if (sig.severity === "critical") return true;
  return asOf.getTime() - sig.last_seen.getTime() <= ttlHours * 3_600_000;
}

/** Most urgent first, then the most recently seen, then by path. */
export function compareSignals(a: SignalFile, b: SignalFile): number {
  return (
    severityRank(a.severity) - severityRank(b.severity) || b.last_seen.getTime() - a.last_seen.getTime() || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  );
}

/** `- **[severity]** (source) text`: the line signals.md and the signals feed entry hold. */
export function signalLine(sig: SignalFile): string {
  const text = (sig.title || sig.body).replace(/\s+/g, " ").trim();
  return `- **[${sig.severity}]** (${sig.source}) ${text}`;
}

export interface ReadSignalsOptions {
  /**
   * Skip files that cannot be live at this time: not critical and not modified within the
   * TTL (an absorbed duplicate rewrites its file, so the mtime is at least its last_seen).
   */
  liveAt?: { asOf: Date; ttlHours: number };
}

/**
 * Every signal file under amygdala/, in name order. The folder is read with synchronous calls
 * (a listing, then one stat a file and a read of each changed one): each is a few µs of this
 * thread, where a thread-pool round trip a file cost more and queued behind the pool's other
 * work (an import's file creations), while a batch's answer waited for signals.md.
 */
export async function readSignals(vault: string, opts: ReadSignalsOptions = {}): Promise<SignalFile[]> {
  const dir = join(vault, "amygdala");
  // A symlinked signal file counts only when it is a file inside the vault.
  const names = containedFileNamesSync(vault, dir, (n) => n.endsWith(".md") && !n.startsWith(".")).sort();
  const live = opts.liveAt;
  const read: SignalFile[] = [];
  for (const name of names) {
    const sig = readSignalFile(
      join(dir, name),
      `amygdala/${name}`,
      (mtimeMs) =>
        // Cannot be live: not critical, and not written (nor absorbed into) within the TTL.
        live !== undefined && !/^\d{8}T\d{6}Z-critical-/.test(name) && live.asOf.getTime() - mtimeMs > live.ttlHours * 3_600_000,
    );
    if (sig) read.push(sig);
  }
  return read;
}

/** Parsed signal files by absolute path, re-read only when the mtime or size changed (GET /feed reads them all). */
const cache = new Map<string, { mtimeMs: number; size: number; sig: SignalFile | null }>();

function readSignalFile(abs: string, rel: string, skip: (mtimeMs: number) => boolean = () => false): SignalFile | null {
  const st = statOrNull(abs);
  if (!st || skip(st.mtimeMs)) return null;
  const hit = cache.get(abs);
  if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.sig;
  const text = readTextOrNull(abs);
  const sig = text === null ? null : parseSignalFile(rel, text);
  cache.set(abs, { mtimeMs: st.mtimeMs, size: st.size, sig });
  return sig;
}
