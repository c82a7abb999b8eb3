// Reading notes: one by path (GET /notes/{path}, MCP `get`) and several in one call, by paths
// or a glob (POST /notes/batch, MCP `multi_get`), bounded in count and in total size, with
// what was left out said.
import { DomainError } from "../../common/domain-error";
import { type NoteFile, type NotesDeps, notePath, readNoteFile } from "./file";
import { type NoteView, noteViews, type ViewOptions } from "./view";

/** Ceiling of one note's body characters (GET /notes/{path} and the MCP get tool's max_chars). */
export const NOTE_MAX_CHARS = 1_000_000;
/** Notes one batch returns at most; more named (or matched) are listed as left out. */
export const MAX_BATCH_NOTES = 50;
/** Paths one batch may name. */
export const MAX_BATCH_PATHS = 200;
/** Default and ceiling of a batch's total body characters. */
export const BATCH_TOTAL_CHARS = { default: 200_000, max: 1_000_000 } as const;
/** Default and ceiling of one note's body characters in a batch. */
export const BATCH_NOTE_CHARS = { default: 50_000, max: 1_000_000 } as const;
/** Left-out entries listed; the count says how many there were. */
const MAX_LEFT_OUT_LISTED = 100;
/** Paths a glob may match before the batch gives up looking. */
const MAX_GLOB_SCAN = 50_000;

export async function getNote(deps: NotesDeps, path: string, opts: ViewOptions = {}): Promise<NoteView> {
  const file = await readNoteFile(deps.vault, path);
  return (await noteViews(deps, [file], () => opts))[0]!;
}

export interface BatchRequest {
  paths?: string[];
  glob?: string;
  /** Per note. */
  max_chars?: number;
  /** All bodies together. */
  max_total_chars?: number;
}

export interface BatchResult {
  notes: NoteView[];
  /** Named paths that could not be read: not found, or refused. */
  errors: Array<{ path: string; code: string; message: string }>;
  /** Notes not returned to keep within the limits (at most 100 listed; left_out_count says all). */
  left_out: Array<{ path: string; reason: "max_notes" | "max_total_chars" }>;
  left_out_count: number;
  /** For a glob: how many indexed notes it matched. */
  matched?: number;
}

export async function getNotes(deps: NotesDeps, req: BatchRequest): Promise<BatchResult> {
  if ((req.paths === undefined) === (req.glob === undefined)) throw new DomainError("invalid", "invalid_request", "give either paths or glob, not both");
  const perNote = req.max_chars ?? BATCH_NOTE_CHARS.default;
  let budget = req.max_total_chars ?? BATCH_TOTAL_CHARS.default;
  const result: BatchResult = { notes: [], errors: [], left_out: [], left_out_count: 0 };
  const leaveOut = (path: string, reason: BatchResult["left_out"][number]["reason"]) => {
    result.left_out_count++;
    if (result.left_out.length < MAX_LEFT_OUT_LISTED) result.left_out.push({ path, reason });
  };

  let paths: string[];
  if (req.glob !== undefined) {
    paths = await globPaths(deps, req.glob);
    result.matched = paths.length;
  } else {
    if (req.paths!.length > MAX_BATCH_PATHS)
      throw new DomainError("invalid", "too_many_paths", `at most ${MAX_BATCH_PATHS} paths per batch (got ${req.paths!.length})`);
    paths = [...new Set(req.paths)];
  }

  const files: NoteFile[] = [];
  const cuts = new Map<string, number>();
  for (const path of paths) {
    if (files.length >= MAX_BATCH_NOTES) {
      leaveOut(path, "max_notes");
      continue;
    }
    if (budget <= 0) {
      leaveOut(path, "max_total_chars");
      continue;
    }
    try {
      const file = await readNoteFile(deps.vault, path);
      const chars = Math.min(perNote, budget);
      budget -= Math.min(chars, file.content.length);
      cuts.set(file.path, chars);
      files.push(file);
    } catch (err) {
      if (!(err instanceof DomainError) || !err.callersFault) throw err;
      result.errors.push({ path, code: err.code, message: err.message });
    }
  }
  result.notes = await noteViews(deps, files, (f) => ({ maxChars: cuts.get(f.path) }));
  return result;
}

/** Indexed paths matching a glob (Bun.Glob: *, **, ?, [ab], {a,b}), in path order. */
async function globPaths(deps: NotesDeps, glob: string): Promise<string[]> {
  const pattern = glob.replace(/^\.\//, "");
  // The literal part before the first wildcard narrows the index query.
  const literal = pattern.slice(0, pattern.search(/[*?[{\\]|$/));
  const prefix = literal.slice(0, literal.lastIndexOf("/") + 1);
  if (prefix) notePath(prefix); // refuses `../` and absolute globs like any path
  const matcher = new Bun.Glob(pattern);
  return (await deps.index.pathsUnder(prefix, MAX_GLOB_SCAN)).filter((p) => matcher.match(p));
}
