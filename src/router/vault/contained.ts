// Symlinks never lead out of the vault: a link found by a walk or named by a read is followed
// only when its real path is a regular file inside the vault's real path. A link to a folder
// is never followed (that is how a walk would loop: raw/loop -> ../raw), nor one that leaves
// the vault or dangles; the walks report what they skipped.
import { type Dirent, readdirSync, realpathSync, statSync } from "node:fs";
import { realpath, stat } from "node:fs/promises";
import { sep } from "node:path";
import { lstatOrNull } from "./quiet-fs";

const roots = new Map<string, string>();

function rootOf(vault: string): string {
  let root = roots.get(vault);
  if (root === undefined) {
    try {
      root = realpathSync(vault);
    } catch {
      root = vault;
    }
    roots.set(vault, root);
  }
  return root;
}

const inside = (root: string, real: string) => real === root || real.startsWith(root.endsWith(sep) ? root : root + sep);

/** True when the symlink at `abs` resolves to a regular file inside the vault. */
export async function linkStaysInVault(vault: string, abs: string): Promise<boolean> {
  try {
    const real = await realpath(abs);
    return inside(rootOf(vault), real) && (await stat(real)).isFile();
  } catch {
    return false; // dangling, a loop (ELOOP), unreadable
  }
}

export function linkStaysInVaultSync(vault: string, abs: string): boolean {
  try {
    const real = realpathSync(abs);
    return inside(rootOf(vault), real) && statSync(real).isFile();
  } catch {
    return false;
  }
}

/**
 * The names in `dir` (absolute) that `wanted` keeps and that are regular files, or links to a
 * regular file inside the vault (the listing's file types spare an lstat a name). A missing
 * folder has none; a folder, a socket or a link to a folder is left out.
 */
export function containedFileNamesSync(vault: string, dir: string, wanted: (name: string) => boolean): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const e of entries) {
    if (!wanted(e.name)) continue;
    const abs = `${dir}${sep}${e.name}`;
    if (e.isSymbolicLink() ? linkStaysInVaultSync(vault, abs) : e.isFile() || (!e.isDirectory() && isFileSync(abs))) out.push(e.name);
  }
  return out;
}

/** A regular file, not through a link (a listing that did not say the entry's type). */
function isFileSync(abs: string): boolean {
  return lstatOrNull(abs)?.isFile() ?? false;
}
