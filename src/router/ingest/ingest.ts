// POST /ingest's domain: classify, fan out into the vault, index at once, and recognise the
// same content a second time. Order matters for "nothing half-written": the document is
// indexed (embeddings included) before any file is written, files are written atomically,
// and the ledger entry that marks the content as ingested comes last.
import { mkdir, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { writeSignalsMdNow } from "../signals/signals-md";
import { SIGNALS_FILE } from "../tick/feed-entries";
import { writeFileAtomic } from "../../common/atomic-write";
import { DomainError } from "../../common/domain-error";
import { withFileLock } from "../../common/file-lock";
import { log } from "../../common/logger";
import { documentFromFile, hashContent, splitFrontmatter, deriveTitle, frontmatterTags } from "../index/document";
import type { IndexStore } from "../index/types";
import { withFrontmatter } from "../vault/frontmatter";
import type { SignalHub } from "../signals/hub";
import { appendLesson, appendMilestone, writeDecision, writeSignal, type RecordInput, type RecordWrite } from "../vault/records";
import { safeVaultPath } from "../vault/safe-path";
import { isoDate, slugify } from "../vault/slug";
import { classify, type Kind } from "./classify";

const logger = log("ingest");

export interface IngestRequest {
  content: string;
  tags: string[];
  title?: string;
  source?: string;
}

export interface IngestResult {
  id: string;
  kind: Kind;
  /** Vault-relative paths written: the note first, then the kind's own file. */
  paths: string[];
  indexed: boolean;
  /** True when this content had been ingested before; nothing new was written. */
  duplicate: boolean;
}

export interface IngestDeps {
  vault: string;
  dataDir: string;
  index: IndexStore;
  maxBytes: number;
  /** Embeds chunk texts when embeddings are configured. */
  embed?: (texts: string[]) => Promise<number[][]>;
  /** Asks a model to refine a rule-less "note"; undefined keeps the rules' answer. */
  refine?: (content: string, tags: string[]) => Promise<Kind | undefined>;
  now?: () => Date;
  /** Live signals (GET /signal): a signal fanned out by ingest is published like a marker's. */
  signals?: SignalHub;
  /** Told about every vault file the fan-out wrote, so the background indexer picks it up. */
  written?: (path: string) => void | Promise<void>;
  /** Set: signals.md is rewritten when ingest routes a signal (SIGNAL_TTL_HOURS). */
  signalTtlHours?: number;
}

function ingestId(content: string): string {
  return hashContent(content.trim()).slice(0, 16);
}

export async function ingest(deps: IngestDeps, req: IngestRequest): Promise<IngestResult> {
  const bytes = Buffer.byteLength(req.content, "utf8");
  if (bytes > deps.maxBytes) {
    throw new DomainError("too_large", "content_too_large", `content is ${bytes} bytes; INGEST_MAX_BYTES is ${deps.maxBytes}`);
  }
  if (req.content.trim().length === 0) throw new DomainError("invalid", "invalid_request", "content is empty");

  const id = ingestId(req.content);
  const ledger = join(deps.dataDir, "ingested", `${id}.json`);
  await mkdir(join(deps.dataDir, "ingested"), { recursive: true });
  return withFileLock(ledger, async () => {
    const seen = await readFile(ledger, "utf8").then((t) => JSON.parse(t) as IngestResult, () => null);
    if (seen) return { ...seen, duplicate: true };

    const now = (deps.now ?? (() => new Date()))();
    const { data, body } = splitFrontmatter(req.content);
    const tags = [...new Set([...frontmatterTags(data), ...req.tags.map((t) => t.trim()).filter(Boolean)])];
    const title = req.title?.trim() || deriveTitle("", data, body) || firstLine(body);
    let { kind, reason } = classify({ tags, frontmatter: data, body });
    if (reason === "default" && deps.refine) {
      const refined = await deps.refine(body, tags).catch((err) => {
        logger.warn(`model classification failed, keeping the rules' answer: ${(err as Error).message}`);
        return undefined;
      });
      if (refined) kind = refined;
    }
    const source = req.source?.trim() || "api";
    const notePath = `ingest/${isoDate(now)}/${slugify(title)}-${id.slice(0, 8)}.md`;
    const { title: _t, tags: _g, ...userData } = data;
    const noteText = withFrontmatter(
      { ...userData, id, title, kind, tags, source, created: now.toISOString(), content_hash: hashContent(req.content.trim()) },
      body,
    );

    // 1. The note file first, then its index row: a crash between them leaves a file the next
    // tick indexes, never a search hit without its file. An index failure (embeddings) takes
    // the file back out, so the vault is left as it was.
    const doc = documentFromFile({ path: notePath, producer: "ingest", content: noteText, mtimeMs: now.getTime() });
    const abs = await safeVaultPath(deps.vault, notePath);
    await mkdir(join(abs, ".."), { recursive: true });
    await writeFileAtomic(abs, noteText);
    try {
      await deps.index.upsert(doc, deps.embed ? { embed: deps.embed } : undefined);
    } catch (err) {
      await unlink(abs).catch(() => {});
      throw err;
    }
    // 2. Then the fan-out files; a write failure takes the note and its row back out.
    const paths = [notePath];
    try {
      const record: RecordInput = { content: body, title, source, ts: now, severity: stringOf(data.severity), scope: stringOf(data.scope), session_id: stringOf(data.session_id) };
      const fanned = await fanOut(deps.vault, kind, record);
      if (fanned) {
        paths.push(fanned.path);
        await deps.written?.(fanned.path);
        if (kind === "signal") {
          if (deps.signalTtlHours !== undefined) {
            await writeSignalsMdNow(deps.vault, deps.signalTtlHours, now);
            await deps.written?.(SIGNALS_FILE);
          }
          publishSignal(deps.signals, id, record, fanned);
        }
      }
    } catch (err) {
      await deps.index.remove(notePath).catch(() => {});
      await unlink(abs).catch(() => {});
      throw err;
    }
    const result: IngestResult = { id, kind, paths, indexed: true, duplicate: false };
    // 3. Last, the ledger: from now on the same content is recognised.
    await writeFileAtomic(ledger, JSON.stringify(result));
    return result;
  });
}

async function fanOut(vault: string, kind: Kind, r: RecordInput): Promise<RecordWrite | undefined> {
  switch (kind) {
    case "lesson":
      return appendLesson(vault, r);
    case "decision":
      return writeDecision(vault, r);
    case "signal":
      return writeSignal(vault, r);
    case "milestone":
      return appendMilestone(vault, r);
    case "note":
      return undefined;
  }
}

/** The same event POST /marker publishes for a signal (see markers/marker.ts). */
function publishSignal(hub: SignalHub | undefined, id: string, r: RecordInput, write: RecordWrite): void {
  hub?.publish("signal", {
    marker_id: `ingest_${id}`,
    path: write.path,
    severity: slugify(r.severity ?? "medium", "medium"),
    source: r.source,
    session_id: r.session_id ?? null,
    title: r.title ?? firstLine(r.content),
    content: r.content,
    ts: r.ts.toISOString(),
    count: write.count ?? 1,
    repeat: !write.written,
  });
}

const stringOf = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim() : undefined);
const firstLine = (s: string) => s.trim().split("\n")[0]?.replace(/^#+\s*/, "").slice(0, 80) || "untitled";
