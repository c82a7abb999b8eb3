// The one way a request's path becomes a file path: nothing is read or written outside the
// vault, whatever the path carries (`../`, an absolute path, a NUL, a symlink out of the vault).
import { realpathSync } from "node:fs";
import { isAbsolute, normalize, resolve, sep } from "node:path";
import { DomainError } from "../../common/domain-error";
import { lstatOrNull } from "./quiet-fs";

export class PathEscapeError extends DomainError {
  constructor(path: string, why: string) {
    super("invalid", "invalid_path", `path ${JSON.stringify(path)} is not inside the vault: ${why}`);
  }
}

const inside = (root: string, p: string) => p === root || p.startsWith(root + sep);

/** Lexical check: a vault-relative path with no escape. Returns the normalised relative path. */
export function vaultRelative(path: string): string {
  if (path.length === 0) throw new PathEscapeError(path, "empty path");
  if (path.includes("\0")) throw new PathEscapeError(path, "NUL byte");
  if (isAbsolute(path) || /^[a-zA-Z]:[\\/]/.test(path) || path.startsWith("\\")) throw new PathEscapeError(path, "absolute path");
  const norm = normalize(path.replaceAll("\\", "/"));
  if (norm === ".." || norm.startsWith(`..${sep}`) || norm.startsWith("../")) throw new PathEscapeError(path, "it climbs out with ..");
  return norm;
}

/**
 * Resolves `path` inside `vault` and checks the real location: the deepest existing ancestor
 * (and the file itself, when it exists) must resolve, through symlinks, inside the vault.
 *
 * Its lstat and realpath calls are synchronous: each is a few µs of this thread, while on the
 * thread pool each was a round trip queued behind whatever else the pool had (an import's
 * hundreds of file creations: tens of ms each, three or more in series per path).
 */
export async function safeVaultPath(vault: string, path: string): Promise<string> {
  return safeVaultPathSync(vault, path);
}

/** safeVaultPath, answered in this call. */
export function safeVaultPathSync(vault: string, path: string): string {
  const rel = vaultRelative(path);
  const root = realpathSync(vault);
  const target = resolve(root, rel);
  if (!inside(root, target)) throw new PathEscapeError(path, "it resolves outside");
  // Walk up to the deepest part that exists and see where it really is.
  let probe = target;
  for (let retries = 0; ; ) {
    const st = lstatOrNull(probe);
    if (st) {
      const real = realOf(probe);
      // Renamed away between lstat and realpath (a concurrent atomic write): look again.
      if (real === "gone" && ++retries < 5) continue;
      if (real === "gone") throw new PathEscapeError(path, "it keeps vanishing while being resolved");
      if (real === null || !inside(root, real)) throw new PathEscapeError(path, "a symlink leads out of the vault");
      break;
    }
    const parent = resolve(probe, "..");
    if (parent === probe) break;
    probe = parent;
  }
  return target;
}

/**
 * realpath, telling apart "vanished meanwhile" (another writer renamed a file over this path
 * between our lstat and realpath) from a dangling link: "gone" means look again.
 */
function realOf(p: string): string | null | "gone" {
  try {
    return realpathSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") return null;
    // Still there but unresolvable: a dangling symlink, which we refuse.
    return lstatOrNull(p)?.isSymbolicLink() ? null : "gone";
  }
}
