// Reading one note from the vault, path-safe: no escape (safe-path.ts), no symlink followed
// (the final component is opened with O_NOFOLLOW, the parents resolved inside the vault), and
// only what the index covers — a producer's file (tick/sources.ts), no dot-entry, not larger
// than the index takes. Everything else is refused or not found, never read.
import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { DomainError } from "../../common/domain-error";
import { hashContent } from "../index/document";
import { MAX_INDEXED_FILE_BYTES } from "../index/refresh";
import type { IndexStore, Producer } from "../index/types";
import { producerOf } from "../tick/sources";
import { PathEscapeError, safeVaultPath, vaultRelative } from "../vault/safe-path";

/** Longest vault path (or glob, or path prefix) a notes request may name, in characters. */
export const NOTE_PATH_MAX_CHARS = 1024;

export interface NotesDeps {
  vault: string;
  index: IndexStore;
}

/** A note file as read: its vault path, whole content and content hash (the ETag). */
export interface NoteFile {
  path: string;
  producer: Producer;
  content: string;
  mtimeMs: number;
  /** sha256 (hex) of the content, as the index records it. */
  hash: string;
}

export const noteNotFound = (path: string, why = "no such note") =>
  new DomainError(
    "not_found",
    "note_not_found",
    `${why}: ${JSON.stringify(path)} (notes are the vault files the index covers, e.g. raw/…, ingest/…, left/decisions/…)`,
  );

/** The vault path a request names, normalised (forward slashes, no "./"); throws PathEscapeError. */
export function notePath(path: string): string {
  return vaultRelative(path).replaceAll("\\", "/");
}

export async function readNoteFile(vault: string, path: string): Promise<NoteFile> {
  return withNote(vault, path, async (handle, rel, producer) => {
    const st = await handle.stat();
    if (!st.isFile()) throw noteNotFound(path);
    if (st.size > MAX_INDEXED_FILE_BYTES) throw noteNotFound(path, `larger than ${MAX_INDEXED_FILE_BYTES} bytes, so not indexed`);
    const bytes = await handle.readFile();
    return { path: rel, producer, content: bytes.toString("utf8"), mtimeMs: st.mtimeMs, hash: hashContent(bytes) };
  });
}

/**
 * The first `maxBytes` of a note, read as safely as readNoteFile reads it (no hash, no size
 * check): for the rerank stage, which reads the opening of 40 notes per search.
 */
export async function readNoteOpening(vault: string, path: string, maxBytes: number): Promise<string> {
  return withNote(vault, path, async (handle) => {
    const buf = Buffer.alloc(maxBytes);
    const { bytesRead } = await handle.read(buf, 0, maxBytes, 0);
    // A cut may split a character: drop a trailing replacement character.
    return buf
      .subarray(0, bytesRead)
      .toString("utf8")
      .replace(/\uFFFD$/, "");
  });
}

async function withNote<T>(vault: string, path: string, use: (handle: FileHandle, rel: string, producer: Producer) => Promise<T>): Promise<T> {
  const rel = notePath(path);
  const producer = producerOf(rel);
  if (!producer || rel.split("/").some((part) => part.startsWith("."))) throw noteNotFound(path, "not a note the index covers");
  const abs = await safeVaultPath(vault, rel);
  let handle: FileHandle;
  try {
    handle = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw new PathEscapeError(path, "a symlink (notes are read without following links)");
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") throw noteNotFound(path);
    throw err;
  }
  try {
    return await use(handle, rel, producer);
  } finally {
    await handle.close();
  }
}
