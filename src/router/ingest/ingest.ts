// POST /ingest's domain: classify, fan out into the vault, index at once, and recognise the
// same content a second time. Order matters for "nothing half-written": the document is
// indexed (embeddings included) before any file is written, files are written atomically,
// and the ledger entry that marks the content as ingested comes last.
import { existsSync, mkdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic, writeFileAtomicSync } from "../../common/atomic-write";
import { claimRecord, type HeldRecord, withRecordClaim } from "../../common/claim";
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
import type { IngestRequest } from "./schema";

const logger = log("ingest");

export type { IngestRequest } from "./schema";

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

/**
 * What an ingest writes for one request, worked out before any file is touched: the checks
 * (size, empty), the content's hash and id, and — unless a model may still change the kind —
 * the note's text and index document. ingestBatch describes all its items in one pass before
 * any of them claims its content: back to back the describing code stays hot and costs about
 * half what it does interleaved with the items' file writes and index rows.
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

/** The record a note's kind's own file is written from. */
function recordOf(note: PlannedNote): RecordInput {
  const { body, title, source, now, data } = note;
  return {
    content: body,
    title,
    source,
    ts: now,
    severity: stringOf(data.severity),
    scope: stringOf(data.scope),
    session_id: stringOf(data.session_id),
  };
}

/** What a ledger entry written before answers: the content's first ingest, as a duplicate. */
const seenResult = (text: string): IngestResult => ({ ...(JSON.parse(text) as IngestResult), duplicate: true });

/** The note file's absolute path, its folder made and checked. */
const noteFile = (deps: IngestDeps, note: PlannedNote): string => join(checkedDir(deps.vault, note.noteDir), note.notePath.slice(note.noteDir.length + 1));

const embedding = (deps: IngestDeps) => (deps.embed ? { embed: deps.embed } : undefined);

export async function ingest(deps: IngestDeps, req: IngestRequest): Promise<IngestResult> {
  // The note is described once the content is claimed: a duplicate skips that work.
  const plan = planIngest(deps, req, false);
  const { id } = plan;
  // The ledger entry is its own claim (withRecordClaim): one exclusive create finds content
  // ingested before (its entry answers) or claims it, so the same content at once waits —
  // callers of this process on a queue, other processes (the MCP listener on the same vault)
  // on the file — and a failure removes the claim, leaving the content not ingested.
  return withRecordClaim(ledgerPath(deps.dataDir, id), seenResult, {}, async () => {
    const note = await settleNote(deps, req, plan);
    // 1. The note file first, then its index row: a crash between them leaves a file the next
    // tick indexes, never a search hit without its file. An index failure (embeddings) takes
    // the file back out, so the vault is left as it was.
    const abs = noteFile(deps, note);
    writeNote(abs, note.noteText);
    try {
      await deps.index.upsert(note.doc, embedding(deps));
    } catch (err) {
      removeQuietly(abs);
      throw err;
    }
    // 2. Then the fan-out files; a write failure takes the note and its row back out.
    const paths = [note.notePath];
    try {
      const record = recordOf(note);
      const fanned = await fanOut(deps.vault, note.kind, record);
      if (fanned) {
        paths.push(fanned.path);
        await deps.written?.(fanned.path);
        if (note.kind === "signal") {
          if (deps.signalTtlHours !== undefined) {
            await writeSignalsMdNow(deps.vault, deps.signalTtlHours, note.now);
            await deps.written?.(SIGNALS_FILE);
          }
          publishSignal(deps.signals, id, record, fanned);
        }
      }
    } catch (err) {
      await deps.index.remove(note.notePath).catch(() => {});
      removeQuietly(abs);
      throw err;
    }
    const result: IngestResult = { id, kind: note.kind, paths, indexed: true, duplicate: false };
    // 3. Last, the ledger entry is written over the claim: from now on the content is recognised.
    return { value: result, record: JSON.stringify(result) };
  });
}

/** Items of one batch at a model at once (refinement, embeddings); without one, all of them. */
const BATCH_IN_FLIGHT_WITH_MODEL = 64;

/** One item's outcome: what POST /ingest would have answered, or the error it would have thrown. */
export type BatchItemOutcome = { result: IngestResult } | { error: unknown };

/** A batch item that holds its content's claim, and what it has written so far. */
interface Claimed {
  i: number;
  plan: IngestPlan;
  held: HeldRecord;
  note?: PlannedNote;
  abs?: string;
  record?: RecordInput;
  fanned?: RecordWrite;
}

/**
 * Ingests many items, each exactly as POST /ingest would — its own claim, note, index row,
 * fan-out and ledger entry, so an item is whole or absent, never half-written, and a failing
 * item does not stop the others — but stage by stage over the whole batch rather than item by
 * item: every item's note described in one pass (planIngest), the claims made and the notes
 * written on the thread pool, the index rows in item order (one transaction without a model),
 * the fan-out grouped (one rewrite per daily log, one scan of the signal folder), the ledger
 * entries last. Run back to back, each stage's code stays hot, which costs less event-loop CPU
 * a note than the same work interleaved item by item. An item repeating an
 * earlier one's content is answered as its duplicate (or ingested alone if that one failed).
 * Outcomes come back in item order; signals.md is rewritten once, before the answer, when the
 * batch recorded a signal.
 */
export async function ingestBatch(deps: IngestDeps, items: IngestRequest[]): Promise<BatchItemOutcome[]> {
  const outcomes: BatchItemOutcome[] = new Array(items.length);
  const plans = items.map((item, i): IngestPlan | undefined => {
    try {
      return planIngest(deps, item, true);
    } catch (error) {
      outcomes[i] = { error };
      return undefined;
    }
  });
  // 1. The claims: the first item of each content claims it (or finds it ingested before).
  const first = new Map<string, number>();
  const repeats: number[] = [];
  const claimed: Claimed[] = [];
  await Promise.all(
    plans.map(async (plan, i) => {
      if (!plan) return;
      if (first.has(plan.id)) {
        repeats.push(i);
        return;
      }
      first.set(plan.id, i);
      try {
        const got = await claimRecord(ledgerPath(deps.dataDir, plan.id), { offThread: true });
        if ("seen" in got) outcomes[i] = { result: seenResult(got.seen) };
        else claimed.push({ i, plan, held: got });
      } catch (error) {
        outcomes[i] = { error };
      }
    }),
  );
  claimed.sort((a, b) => a.i - b.i);
  /** An item that failed at some stage: its claim goes (the caller took back what it wrote). */
  const fail = (x: Claimed, error: unknown) => {
    x.held.abandon();
    outcomes[x.i] = { error };
  };
  const going = () => claimed.filter((x) => outcomes[x.i] === undefined);
  /** An item whose fan-out went wrong: its row and note go too. */
  const takeBack = async (x: Claimed, error: unknown) => {
    await deps.index.remove(x.note!.notePath).catch(() => {});
    removeQuietly(x.abs!);
    fail(x, error);
  };
  try {
    // 2. The notes: described (a model's refinement now), then written on the thread pool.
    await eachLimited(claimed, deps.refine ? BATCH_IN_FLIGHT_WITH_MODEL : claimed.length, async (x) => {
      try {
        x.note = await settleNote(deps, items[x.i]!, x.plan);
        x.abs = noteFile(deps, x.note);
        await writeFileAtomic(x.abs, x.note.noteText, { mkdir: true });
      } catch (error) {
        fail(x, error);
      }
    });
    // 3. The index rows, in item order. Without a model, the whole batch in one write
    // (upsertMany: one transaction on either store, and on Postgres one statement a table
    // instead of one transaction a note); if that write fails, each item is written alone, so
    // a failing item fails by itself and the others go in. With a model, BATCH_IN_FLIGHT_WITH_MODEL at once.
    const indexOne = async (x: Claimed) => {
      try {
        await deps.index.upsert(x.note!.doc, embedding(deps));
      } catch (error) {
        removeQuietly(x.abs!);
        fail(x, error);
      }
    };
    const rows = going();
    if (deps.embed) await eachLimited(rows, BATCH_IN_FLIGHT_WITH_MODEL, indexOne);
    else if (rows.length > 0) {
      const whole = await deps.index.upsertMany(rows.map((x) => x.note!.doc)).then(
        () => true,
        () => false,
      );
      if (!whole) await eachLimited(rows, rows.length, indexOne);
    }
    // 4. The fan-out; a failed write takes its item's row and note back out.
    for (const [x, error] of await fanOutBatch(deps.vault, going())) {
      await takeBack(x, error);
    }
    // 5. Told, in item order: the background indexer of each file written, live signals of each signal.
    const told = new Set<string>();
    for (const x of going()) {
      if (!x.fanned) continue;
      try {
        if (!told.has(x.fanned.path)) {
          told.add(x.fanned.path);
          await deps.written?.(x.fanned.path);
        }
        if (x.note!.kind === "signal") publishSignal(deps.signals, x.plan.id, x.record!, x.fanned);
      } catch (error) {
        await takeBack(x, error);
      }
    }
    // 6. Last, the ledger entries: from now on the contents are recognised.
    for (const x of going()) {
      const result: IngestResult = {
        id: x.plan.id,
        kind: x.note!.kind,
        paths: x.fanned ? [x.note!.notePath, x.fanned.path] : [x.note!.notePath],
        indexed: true,
        duplicate: false,
      };
      try {
        x.held.finish(JSON.stringify(result));
        outcomes[x.i] = { result };
      } catch (error) {
        outcomes[x.i] = { error };
      }
    }
  } finally {
    // Whatever threw past an item's own handling: no claim stays held (the content stays not ingested).
    for (const x of going()) fail(x, new Error("the batch failed before this item was done"));
  }
  // An item repeating an earlier one's content: its duplicate, as a second request would be answered.
  for (const i of repeats) {
    const earlier = outcomes[first.get(plans[i]!.id)!]!;
    if ("result" in earlier) outcomes[i] = { result: { ...earlier.result, duplicate: true } };
    else
      outcomes[i] = await ingest(deps, items[i]!).then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );
  }
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

/** Runs `fn` over `xs` in order, at most `limit` at once. */
async function eachLimited<T>(xs: T[], limit: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < xs.length; i = next++) await fn(xs[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(limit, 1), xs.length) }, worker));
}

/**
 * A batch's fan-out, in item order within each file: its milestones in one rewrite per daily
 * log or BLOCKS.md, its signals under one hold of the signal folder's lock with one scan of it
 * (a duplicate later in the batch is absorbed as if written one at a time), its lessons and
 * decisions one by one. Each record still has its own outcome: sets each item's `record` and
 * `fanned`, and returns the items whose write failed.
 */
async function fanOutBatch(vault: string, xs: Claimed[]): Promise<Array<[Claimed, unknown]>> {
  const failed: Array<[Claimed, unknown]> = [];
  for (const x of xs) x.record = recordOf(x.note!);
  const grouped = async (kind: "milestone" | "signal", write: (vault: string, rs: RecordInput[]) => Promise<Array<RecordWrite | Error>>) => {
    const mine = xs.filter((x) => x.note!.kind === kind);
    if (mine.length === 0) return;
    const written = await write(
      vault,
      mine.map((x) => x.record!),
    ).catch((err: Error) => mine.map(() => err));
    mine.forEach((x, k) => {
      const w = written[k]!;
      if (w instanceof Error) failed.push([x, w]);
      else x.fanned = w;
    });
  };
  const oneByOne = async () => {
    for (const x of xs) {
      if (x.note!.kind !== "lesson" && x.note!.kind !== "decision") continue;
      try {
        x.fanned = await fanOut(vault, x.note!.kind, x.record!);
      } catch (err) {
        failed.push([x, err]);
      }
    }
  };
  await Promise.all([grouped("milestone", appendMilestones), grouped("signal", writeSignals), oneByOne()]);
  return failed;
}

/**
 * The note's index document: what documentFromFile makes of the note file, built from what
 * the file was written from instead of parsing its frontmatter back on every request. The
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
