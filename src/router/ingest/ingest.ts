// POST /ingest's domain: classify, fan out into the vault, index at once, and recognise the
// same content a second time. Order matters for "nothing half-written": the document is
// indexed (embeddings included) before any file is written, files are written atomically,
// and the ledger entry that marks the content as ingested comes last.
import { existsSync, mkdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic, writeFileAtomicSync } from "../../common/atomic-write";
import { withRecordClaim } from "../../common/claim";
import { DomainError } from "../../common/domain-error";
import { log } from "../../common/logger";
import { deriveTitle, frontmatterTags, hashContent, splitFrontmatter } from "../index/document";
import type { IndexDoc, IndexStore } from "../index/types";
import type { SignalHub } from "../signals/hub";
import { writeSignalsMdNow } from "../signals/signals-md";
import { SIGNALS_FILE } from "../tick/feed-entries";
import { withFrontmatter } from "../vault/frontmatter";
import {
  appendLesson,
  appendMilestone,
  appendMilestones,
  type RecordInput,
  type RecordWrite,
  writeDecision,
  writeSignal,
  writeSignals,
} from "../vault/records";
import { safeVaultPathSync } from "../vault/safe-path";
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

interface IngestOptions {
  /** "caller": the caller rewrites signals.md once for many items (ingestBatch). */
  signalsMd?: "now" | "caller";
  /** Writes the kind's own file; default one record at a time (ingestBatch groups them). */
  fanOut?: (kind: Kind, r: RecordInput) => Promise<RecordWrite | undefined>;
  /**
   * The ledger entry's and the note's file creations on the thread pool (ingestBatch: the
   * batch's items overlap them with each other's work). A lone request keeps them in this
   * thread: for it, the round trips cost more than they save.
   */
  offThread?: boolean;
  /**
   * Awaited once the note is written, before its index row (ingestBatch: its items pass here
   * in item order, so their rows and fan-out go in item order, as one at a time would).
   */
  turn?: () => Promise<void>;
  /** The request's plan, made beforehand (ingestBatch plans all its items in one pass). */
  plan?: IngestPlan;
}

/**
 * What an ingest writes for one request, worked out before any file is touched: the checks
 * (size, empty), the content's hash and id, and — unless a model may still change the kind —
 * the note's text and index document. ingestBatch describes all its items in one pass before
 * any of them claims its content: interleaved with the items' file writes and index rows, this
 * work cost ~29 µs a note on the event loop (in process, 10k notes, 500 a batch); back to back
 * it costs about half, and the batch's event-loop CPU a note fell ~6 % (129 → 121 µs, medians
 * of eight interleaved rounds).
 */
export interface IngestPlan {
  contentHash: string;
  id: string;
  /** Set when the kind is settled (no model refinement pending): the note, ready to write. */
  note?: PlannedNote;
}

interface PlannedNote {
  kind: Kind;
  title: string;
  body: string;
  data: Record<string, unknown>;
  source: string;
  now: Date;
  noteDir: string;
  notePath: string;
  noteText: string;
  doc: IndexDoc;
}

/** The checks and the hash; with `describe`, the note too when no model refinement is pending. Throws the request's DomainError. */
export function planIngest(deps: IngestDeps, req: IngestRequest, describe: boolean): IngestPlan {
  const bytes = Buffer.byteLength(req.content, "utf8");
  if (bytes > deps.maxBytes) {
    throw new DomainError("too_large", "content_too_large", `content is ${bytes} bytes; INGEST_MAX_BYTES is ${deps.maxBytes}`);
  }
  const trimmed = req.content.trim();
  if (trimmed.length === 0) throw new DomainError("invalid", "invalid_request", "content is empty");
  // The id is the first 16 hex of the content's sha256, recorded whole as content_hash.
  const contentHash = hashContent(trimmed);
  const plan: IngestPlan = { contentHash, id: contentHash.slice(0, 16) };
  if (describe) {
    const { data, body } = splitFrontmatter(req.content);
    const tags = noteTags(data, req);
    const { kind, reason } = classify({ tags, frontmatter: data, body });
    if (!(reason === "default" && deps.refine)) plan.note = describeNote(deps, req, plan, data, body, tags, kind);
  }
  return plan;
}

const noteTags = (data: Record<string, unknown>, req: IngestRequest) => [
  ...new Set([...frontmatterTags(data), ...req.tags.map((t) => t.trim()).filter(Boolean)]),
];

/** The note's text, path and index document for a settled kind. */
function describeNote(
  deps: IngestDeps,
  req: IngestRequest,
  plan: IngestPlan,
  data: Record<string, unknown>,
  body: string,
  tags: string[],
  kind: Kind,
): PlannedNote {
  const now = (deps.now ?? (() => new Date()))();
  const title = req.title?.trim() || deriveTitle("", data, body) || firstLine(body);
  const source = req.source?.trim() || "api";
  const noteDir = `ingest/${isoDate(now)}`;
  const notePath = `${noteDir}/${slugify(title)}-${plan.id.slice(0, 8)}.md`;
  const { title: _t, tags: _g, ...userData } = data;
  const noteText = withFrontmatter({ ...userData, id: plan.id, title, kind, tags, source, created: now.toISOString(), content_hash: plan.contentHash }, body);
  const doc = noteDocument(notePath, noteText, title, tags, body, now);
  return { kind, title, body, data, source, now, noteDir, notePath, noteText, doc };
}

/** The note once the content is claimed: the planned one, or worked out now (with the model's refinement). */
async function settleNote(deps: IngestDeps, req: IngestRequest, plan: IngestPlan): Promise<PlannedNote> {
  if (plan.note) return plan.note;
  const { data, body } = splitFrontmatter(req.content);
  const tags = noteTags(data, req);
  let { kind, reason } = classify({ tags, frontmatter: data, body });
  if (reason === "default" && deps.refine) {
    const refined = await deps.refine(body, tags).catch((err) => {
      logger.warn(`model classification failed, keeping the rules' answer: ${(err as Error).message}`);
      return undefined;
    });
    if (refined) kind = refined;
  }
  return describeNote(deps, req, plan, data, body, tags, kind);
}

export async function ingest(deps: IngestDeps, req: IngestRequest, opts: IngestOptions = {}): Promise<IngestResult> {
  // A lone request describes its note once it holds the claim: a duplicate skips that work.
  const plan = opts.plan ?? planIngest(deps, req, false);
  const { id } = plan;
  const ledger = ledgerPath(deps.dataDir, id);
  // The ledger entry is its own claim (withRecordClaim): one exclusive create finds content
  // ingested before (its entry answers) or claims it, so the same content at once waits —
  // callers of this process on a queue, other processes (the MCP listener on the same vault)
  // on the file — and a failure removes the claim, leaving the content not ingested.
  const seen = (text: string): IngestResult => ({ ...(JSON.parse(text) as IngestResult), duplicate: true });
  return withRecordClaim(ledger, seen, { offThread: opts.offThread }, async () => {
    const { kind, title, body, data, source, now, noteDir, notePath, noteText, doc } = await settleNote(deps, req, plan);

    // 1. The note file first, then its index row: a crash between them leaves a file the next
    // tick indexes, never a search hit without its file. An index failure (embeddings) takes
    // the file back out, so the vault is left as it was.
    const abs = join(checkedDir(deps.vault, noteDir), notePath.slice(noteDir.length + 1));
    if (opts.offThread) await writeFileAtomic(abs, noteText, { mkdir: true });
    else writeNote(abs, noteText);
    await opts.turn?.();
    try {
      await deps.index.upsert(doc, deps.embed ? { embed: deps.embed } : undefined);
    } catch (err) {
      removeQuietly(abs);
      throw err;
    }
    // 2. Then the fan-out files; a write failure takes the note and its row back out.
    const paths = [notePath];
    try {
      const record: RecordInput = {
        content: body,
        title,
        source,
        ts: now,
        severity: stringOf(data.severity),
        scope: stringOf(data.scope),
        session_id: stringOf(data.session_id),
      };
      const fanned = await (opts.fanOut ?? ((k, r) => fanOut(deps.vault, k, r)))(kind, record);
      if (fanned) {
        paths.push(fanned.path);
        await deps.written?.(fanned.path);
        if (kind === "signal") {
          if (deps.signalTtlHours !== undefined && opts.signalsMd !== "caller") {
            await writeSignalsMdNow(deps.vault, deps.signalTtlHours, now);
            await deps.written?.(SIGNALS_FILE);
          }
          publishSignal(deps.signals, id, record, fanned);
        }
      }
    } catch (err) {
      await deps.index.remove(notePath).catch(() => {});
      removeQuietly(abs);
      throw err;
    }
    const result: IngestResult = { id, kind, paths, indexed: true, duplicate: false };
    // 3. Last, the ledger entry is written over the claim: from now on the content is recognised.
    return { value: result, record: JSON.stringify(result) };
  });
}

/**
 * Items of one batch in flight at once when each may call a model (refine, embeddings); without
 * one, every item of the batch is: their index rows then share one transaction and their
 * fan-out one grouped write (BatchFanOut).
 */
const BATCH_IN_FLIGHT_WITH_MODEL = 64;

/** One item's outcome: what POST /ingest would have answered, or the error it would have thrown. */
export type BatchItemOutcome = { result: IngestResult } | { error: unknown };

/**
 * Ingests many items, each exactly as POST /ingest would (its own claim, note, index row,
 * fan-out and ledger entry: an item is whole or absent, never half-written), many at a time so
 * their index rows share transactions and their fan-out is grouped (BatchFanOut). A failing
 * item does not stop the others; outcomes come back in item order. signals.md is rewritten
 * once, before the answer, when the batch recorded a signal.
 */
export async function ingestBatch(deps: IngestDeps, items: IngestRequest[]): Promise<BatchItemOutcome[]> {
  const outcomes: BatchItemOutcome[] = new Array(items.length);
  const grouped = new BatchFanOut(deps.vault);
  const fanOut = grouped.add.bind(grouped);
  let next = 0;
  const turns = new ItemTurns(items.length);
  // Every item's checks, hash and note first, in one pass (see IngestPlan).
  const plans = items.map((item): IngestPlan | { error: unknown } => {
    try {
      return planIngest(deps, item, true);
    } catch (error) {
      return { error };
    }
  });
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) {
      try {
        const plan = plans[i]!;
        if ("error" in plan) throw plan.error;
        outcomes[i] = { result: await ingest(deps, items[i]!, { signalsMd: "caller", fanOut, offThread: true, turn: () => turns.take(i), plan }) };
      } catch (error) {
        outcomes[i] = { error };
      } finally {
        turns.skip(i); // a duplicate or a failure before its turn
      }
    }
  };
  const inFlight = deps.refine || deps.embed ? BATCH_IN_FLIGHT_WITH_MODEL : items.length;
  await Promise.all(Array.from({ length: Math.min(inFlight, items.length) }, worker));
  // signals.md once for the batch (it lists every live signal; per signal it was a rewrite each).
  if (deps.signalTtlHours !== undefined && outcomes.some((o) => "result" in o && o.result.kind === "signal" && !o.result.duplicate)) {
    try {
      await writeSignalsMdNow(deps.vault, deps.signalTtlHours, (deps.now ?? (() => new Date()))());
      await deps.written?.(SIGNALS_FILE);
    } catch (err) {
      // The items are in; the next tick's sweep rewrites signals.md.
      logger.error(`signals.md could not be rewritten after a batch: ${(err as Error).message}`);
    }
  }
  return outcomes;
}

/**
 * Turns in item order: item i's take() waits for every earlier item's turn to have been taken
 * or skipped. A batch's file creations run on the thread pool and finish in any order; from
 * its turn on, an item goes in order again.
 */
class ItemTurns {
  private readonly passed: Array<PromiseWithResolvers<void>>;

  constructor(count: number) {
    this.passed = Array.from({ length: count }, () => Promise.withResolvers<void>());
  }

  async take(i: number): Promise<void> {
    if (i > 0) await this.passed[i - 1]!.promise;
    this.passed[i]!.resolve();
  }

  /** Item i will not take its turn: it passes once the item before it has. */
  skip(i: number): void {
    if (i === 0) this.passed[0]!.resolve();
    else void this.passed[i - 1]!.promise.then(() => this.passed[i]!.resolve());
  }
}

/**
 * The note's index document: what documentFromFile makes of the note file, built from what
 * the file was written from instead of parsing its frontmatter back (~40 µs a request). The
 * note's frontmatter holds `title` and `tags` as given here and its body follows the blank
 * line withFrontmatter writes; a test holds the two equal over awkward titles and tags.
 */
function noteDocument(path: string, noteText: string, title: string, tags: string[], body: string, now: Date): IndexDoc {
  return {
    path,
    producer: "ingest",
    title: title.trim() || deriveTitle(path, {}, body),
    body: `\n${body.trimEnd()}\n`,
    tags: frontmatterTags({ tags }),
    updatedAt: now,
    hash: hashContent(noteText),
    mtimeMs: now.getTime(),
  };
}

/** `<DATA_DIR>/ingested/<id>.json`, its folder created once per process (and again if removed). */
function ledgerPath(dataDir: string, id: string): string {
  const dir = join(dataDir, "ingested");
  if (!madeDirs.has(dir)) {
    mkdirSync(dir, { recursive: true });
    madeDirs.add(dir);
  }
  return join(dir, `${id}.json`);
}
const madeDirs = new Set<string>();

/**
 * The absolute path of a vault folder ingest writes into, created and checked (safeVaultPath:
 * no symlink out of the vault) the first time this process writes there. The file names in it
 * are ingest's own (slug and id), and a rename replaces a symlink rather than writing through it.
 */
function checkedDir(vault: string, dir: string): string {
  const key = `${vault}\0${dir}`;
  const known = checkedDirs.get(key);
  if (known) return known;
  // Checked before the folder is made too (once the vault exists): a linked ingest/ leading out
  // of the vault is refused before anything is created through it.
  if (existsSync(vault)) safeVaultPathSync(vault, dir);
  mkdirSync(join(vault, dir), { recursive: true });
  const abs = safeVaultPathSync(vault, dir);
  checkedDirs.set(key, abs);
  return abs;
}
const checkedDirs = new Map<string, string>();

/** The note, atomically; a folder removed meanwhile (the date folder of a pruned day) is made again. */
function writeNote(abs: string, text: string): void {
  writeFileAtomicSync(abs, text, { mkdir: true });
}

function removeQuietly(abs: string): void {
  try {
    unlinkSync(abs);
  } catch {}
}

/**
 * A batch's fan-out, grouped: the records that reach fan-out in one turn of the event loop (the
 * items whose index rows one transaction committed), or while the write before runs, are
 * written together — one rewrite per daily log or BLOCKS.md, one hold of the signal folder's
 * lock and one scan of it for all the signals — instead of a locked read-modify-write and a
 * folder scan each. The writes go one after another, so records reach their files in the
 * order they came. Each record still gets its own outcome (a failing write fails only the
 * items it would have written), so each item is still whole or absent.
 */
class BatchFanOut {
  private queue: Array<{ kind: "milestone" | "signal"; r: RecordInput; resolve: (w: RecordWrite) => void; reject: (e: unknown) => void }> = [];
  /** A write of the queue is scheduled (it runs after the one before it). */
  private scheduled = false;
  /** The last write: each waits for the one before, so records go into their files in the order they came. */
  private last: Promise<void> = Promise.resolve();

  constructor(private readonly vault: string) {}

  add(kind: Kind, r: RecordInput): Promise<RecordWrite | undefined> {
    if (kind !== "milestone" && kind !== "signal") return fanOut(this.vault, kind, r);
    return new Promise((resolve, reject) => {
      this.queue.push({ kind, r, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.last = this.last.then(() => this.flush());
      });
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const queued = this.queue.splice(0);
    const run = async (kind: "milestone" | "signal", write: (vault: string, rs: RecordInput[]) => Promise<Array<RecordWrite | Error>>) => {
      const mine = queued.filter((q) => q.kind === kind);
      if (mine.length === 0) return;
      const written = await write(
        this.vault,
        mine.map((q) => q.r),
      ).catch((err: Error) => mine.map(() => err));
      mine.forEach((q, i) => {
        const w = written[i]!;
        if (w instanceof Error) q.reject(w);
        else q.resolve(w);
      });
    };
    await Promise.all([run("milestone", appendMilestones), run("signal", writeSignals)]);
  }
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
const firstLine = (s: string) =>
  s
    .trim()
    .split("\n")[0]
    ?.replace(/^#+\s*/, "")
    .slice(0, 80) || "untitled";
