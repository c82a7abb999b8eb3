// File-name slugs: lowercase ASCII letters, digits and hyphens, at most 60 characters.
export function slugify(text: string, fallback = "untitled"): string {
  const slug = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60)
    .replace(/-+$/, "");
  return slug || fallback;
}

/** 2026-11-22 */
export const isoDate = (d: Date) => d.toISOString().slice(0, 10);
/** 20261122T101500Z */
export const compactStamp = (d: Date) =>
  d
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
