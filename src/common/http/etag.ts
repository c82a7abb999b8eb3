// Conditional GETs (GET /feed, GET /notes/{path}): a content hash as the ETag, and the one
// If-None-Match rule both routes answer 304 by.

/** The ETag of content with this hash: the hash, quoted. */
export const etagOf = (hash: string) => `"${hash}"`;

/**
 * True when an If-None-Match header names this hash (or is `*`): weak tags compare equal, and a
 * bare hash (a client that forgot the quotes) counts too.
 */
export function etagMatches(header: string | undefined, hash: string): boolean {
  if (!header) return false;
  return header.split(",").some((t) => {
    const tag = t.trim().replace(/^W\//, "");
    return tag === "*" || tag === etagOf(hash) || tag === hash;
  });
}
