// Synchronous file lookups that answer null where the file is missing or unreadable, for the
// vault's small reads (a signal file, a log, a folder's entry) that treat "not there" as an
// answer rather than an error.
import { lstatSync, readFileSync, type Stats, statSync } from "node:fs";

export function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

export function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** A file's text, or null when it cannot be read (missing). */
export function readTextOrNull(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}
