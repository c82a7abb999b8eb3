// Directory walks over the vault for the tick and the pipeline report. Skips dot-entries (the
// data directory, temp files, lock directories) and symlinks that lead out of the vault, to a
// folder (loops) or nowhere (vault/contained.ts), and says which; an optional limit on entries
// read keeps a report fast however large the vault grows.
import { lstat, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { linkStaysInVault } from "./contained";

export interface WalkedFile {
  /** Vault-relative, forward slashes. */
  path: string;
  mtimeMs: number;
  size: number;
}

export interface WalkOptions {
  /** Keep files whose vault-relative path passes. */
  filter?: (path: string) => boolean;
  /** Descend into sub-folders (default true). */
  recursive?: boolean;
  /** Stop after reading this many directory entries; the result says it was truncated. */
  limit?: number;
  /** Stop as soon as this many files were kept (existence checks pass 1). */
  maxFiles?: number;
  /** Skip these vault-relative folders entirely. */
  skip?: ReadonlySet<string>;
  /** Also stat each kept file (mtime, size); default true. */
  stat?: boolean;
}

export interface WalkResult {
  files: WalkedFile[];
  /** True when `limit` or `maxFiles` cut the walk short. */
  truncated: boolean;
  /** Directory entries read. */
  entries: number;
  /** Vault-relative symlinks not followed: they leave the vault, point at a folder, dangle or loop. */
  skippedLinks: string[];
}

/** Walks `rel` (a vault-relative folder; "" is the vault itself). A missing folder is empty. */
export async function walk(vault: string, rel: string, opts: WalkOptions = {}): Promise<WalkResult> {
  const out: WalkResult = { files: [], truncated: false, entries: 0, skippedLinks: [] };
  const limit = opts.limit ?? Number.POSITIVE_INFINITY;
  const maxFiles = opts.maxFiles ?? Number.POSITIVE_INFINITY;
  const wantStat = opts.stat ?? true;
  const stack = [rel.replace(/\/+$/, "")];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    const entries = await readdir(join(vault, dir), { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    const kept: string[] = [];
    let cut = false;
    for (const e of entries) {
      if (out.entries >= limit || out.files.length + kept.length >= maxFiles) {
        cut = true;
        break;
      }
      out.entries++;
      if (e.name.startsWith(".")) continue;
      const path = dir ? `${dir}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if ((opts.recursive ?? true) && !opts.skip?.has(path)) subdirs.push(path);
        continue;
      }
      if (e.isSymbolicLink()) {
        if (await linkStaysInVault(vault, join(vault, path))) {
          if (!opts.filter || opts.filter(path)) kept.push(path);
        } else out.skippedLinks.push(path);
        continue;
      }
      if (e.isFile() && (!opts.filter || opts.filter(path))) kept.push(path);
    }
    // One folder's stats at once: a walk of 10k notes is bound by these calls.
    const stats = wantStat ? await Promise.all(kept.map((p) => stat(join(vault, p)).catch(() => null))) : [];
    kept.forEach((path, i) => {
      if (!wantStat) out.files.push({ path, mtimeMs: 0, size: 0 });
      else if (stats[i]) out.files.push({ path, mtimeMs: stats[i]!.mtimeMs, size: stats[i]!.size });
    });
    if (cut) {
      out.truncated = true;
      return out;
    }
    stack.push(...subdirs.reverse()); // popped in name order
  }
  return out;
}

export const isMarkdown = (path: string) => /\.(md|markdown)$/i.test(path);

/**
 * Orders vault paths as the index does (SQLite's BINARY, Postgres's COLLATE "C": UTF-8 bytes,
 * that is code points). JS's `<` compares UTF-16 code units, which differs only where a
 * surrogate pair meets a character from U+E000 up: those units are shifted into code point order.
 */
export function comparePaths(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

/**
 * A folder's entries without dot-entries, in comparePaths order of the paths under them: a
 * sub-folder sits where "name/" sorts among its siblings, as the index lists its documents.
 */
export function inPathOrder<E extends { name: string; isDirectory(): boolean }>(entries: E[]): E[] {
  const keyed = entries.filter((e) => !e.name.startsWith(".")).map((e) => ({ e, key: e.isDirectory() ? `${e.name}/` : e.name }));
  keyed.sort((a, b) => comparePaths(a.key, b.key));
  return keyed.map((k) => k.e);
}

/** Files stat'ed at once by walkSorted: a folder of many thousand notes is taken a slice at a time. */
const STAT_SLICE = 128;

/**
 * The files under `rel` (a vault-relative folder, or a single file), streamed in comparePaths
 * order of their paths, as the index lists its documents: a folder's subtree sits where
 * "name/" sorts among its siblings. Memory follows the folders open on the way down, never
 * the number of files. Same skips as walk(); `onSkippedLink` hears each link not followed.
 */
export async function* walkSorted(
  vault: string,
  rel: string,
  opts: { filter?: (path: string) => boolean; onSkippedLink?: (path: string) => void } = {},
): AsyncGenerator<WalkedFile> {
  const top = rel.replace(/\/+$/, "");
  if (top) {
    const st = await lstat(join(vault, top)).catch(() => null);
    if (!st) return;
    if (!st.isDirectory()) {
      if (top.split("/").some((part) => part.startsWith("."))) return;
      yield* statSlice(
        vault,
        [await keptFile(vault, top, st.isSymbolicLink(), st.isFile(), opts)].filter((p): p is string => p !== null),
      );
      return;
    }
  }
  yield* walkFolder(vault, top, opts);
}

async function* walkFolder(
  vault: string,
  dir: string,
  opts: { filter?: (path: string) => boolean; onSkippedLink?: (path: string) => void },
): AsyncGenerator<WalkedFile> {
  const entries = await readdir(join(vault, dir), { withFileTypes: true }).catch(() => []);
  let files: string[] = [];
  for (const e of inPathOrder(entries)) {
    const path = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) {
      yield* statSlice(vault, files);
      files = [];
      yield* walkFolder(vault, path, opts);
      continue;
    }
    const kept = await keptFile(vault, path, e.isSymbolicLink(), e.isFile(), opts);
    if (kept === null) continue;
    files.push(kept);
    if (files.length >= STAT_SLICE) {
      yield* statSlice(vault, files);
      files = [];
    }
  }
  yield* statSlice(vault, files);
}

async function keptFile(
  vault: string,
  path: string,
  isLink: boolean,
  isFile: boolean,
  opts: { filter?: (path: string) => boolean; onSkippedLink?: (path: string) => void },
): Promise<string | null> {
  if (isLink) {
    if (!(await linkStaysInVault(vault, join(vault, path)))) {
      opts.onSkippedLink?.(path);
      return null;
    }
  } else if (!isFile) return null;
  return !opts.filter || opts.filter(path) ? path : null;
}

async function* statSlice(vault: string, paths: string[]): AsyncGenerator<WalkedFile> {
  if (paths.length === 0) return;
  const stats = await Promise.all(paths.map((p) => stat(join(vault, p)).catch(() => null)));
  for (const [i, path] of paths.entries()) {
    const st = stats[i];
    if (st) yield { path, mtimeMs: st.mtimeMs, size: st.size };
  }
}
