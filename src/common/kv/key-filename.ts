// Key ⇄ file name for the file store. The name alphabet is [a-z0-9_~-]: no "/", no leading ".",
// no NUL, and no upper case (so case-insensitive filesystems cannot merge two keys). Whatever
// the key, its file stays inside the store's directory.
import { createHash } from "node:crypto";

// Filesystems cap a name at 255 bytes; leave room for ".json", ".lock" and temp-file suffixes.
const MAX_ENCODED = 180;
const HASHED_HEAD = 120;
const EMPTY_KEY = "_";

/**
 * Bytes in [a-z0-9-] stay as they are; every other UTF-8 byte becomes `_xx` (lower-case hex).
 * Keys too long for a file name become `<head>~<sha256>`, which only the file's contents can
 * map back (see decodeKeyName).
 */
export function encodeKeyName(key: string): string {
  if (key === "") return EMPTY_KEY;
  let out = "";
  for (const byte of new TextEncoder().encode(key)) {
    const safe = (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39) || byte === 0x2d;
    out += safe ? String.fromCharCode(byte) : `_${byte.toString(16).padStart(2, "0")}`;
  }
  if (out.length <= MAX_ENCODED) return out;
  return `${out.slice(0, HASHED_HEAD)}~${createHash("sha256").update(key).digest("hex").slice(0, 32)}`;
}

/** The key a name encodes; null for hashed names (read the key from the file) and foreign names. */
export function decodeKeyName(name: string): string | null {
  if (name === EMPTY_KEY) return "";
  if (!/^(?:[a-z0-9-]|_[0-9a-f]{2})+$/.test(name)) return null;
  const bytes: number[] = [];
  for (let i = 0; i < name.length; i++) {
    if (name[i] === "_") {
      bytes.push(Number.parseInt(name.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(name.charCodeAt(i));
    }
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array(bytes));
  } catch {
    return null; // not UTF-8, so not a name we wrote
  }
}
