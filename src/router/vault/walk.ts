// Directory walks over the vault for the tick and the pipeline report. Skips dot-entries (the
// data directory, temp files, lock directories) and symlinks that lead out of the vault, to a
// folder (loops) or nowhere (vault/contained.ts), and says which; an optional limit on entries
// read keeps a report fast however large the vault grows.
import { readdir, stat } from "node:fs/promises";
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
