// The link graph over the index's stored links (index/links.ts): each note's outgoing links
// resolved to notes (or dangling), and the notes linking to a set of notes. Resolution runs
// here, once, for both index stores; a few batched index queries per call, whatever the count.
import { type DocLink, extractLinks, noteName, resolveLink } from "../index/links";
import type { IndexStore, NoteMeta, StoredLink } from "../index/types";

export interface ResolvedLink {
  kind: DocLink["kind"];
  /** As stored: a wikilink's target lower-cased, a markdown link's vault path. */
  target: string;
  /** The note it resolves to, or undefined: the link dangles. */
  note?: NoteMeta;
}

/** Resolves links (of any sources) against the index's notes. */
export async function resolveLinks<T extends Pick<DocLink, "kind" | "target" | "name">>(
  index: IndexStore,
  links: T[],
): Promise<Array<T & { note?: NoteMeta }>> {
  const byName = groupByName(await index.notesNamed([...new Set(links.map((l) => l.name))]));
  return links.map((l) => ({ ...l, note: resolveLink(l, byName.get(l.name) ?? []) }));
}

/** Outgoing links of a note's text (the file as read now, so a just-edited note is current). */
export async function outgoingOfText(index: IndexStore, path: string, body: string): Promise<ResolvedLink[]> {
  return (await resolveLinks(index, extractLinks(path, body))).map(({ kind, target, note }) => ({ kind, target, note }));
}

/** Outgoing links of indexed notes, by source path. */
export async function outgoingOf(index: IndexStore, paths: string[]): Promise<Map<string, ResolvedLink[]>> {
  const out = new Map<string, ResolvedLink[]>(paths.map((p) => [p, []]));
  for (const l of await resolveLinks(index, await index.linksFrom(paths))) out.get(l.source)?.push({ kind: l.kind, target: l.target, note: l.note });
  return out;
}

/** For each of `paths`, the paths of the notes linking to it (a note's links to itself left out). */
export async function backlinksOf(index: IndexStore, paths: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, Set<string>>(paths.map((p) => [p, new Set()]));
  const names = [...new Set(paths.map(noteName))];
  const [links, candidates] = await Promise.all([index.linksNamed(names), index.notesNamed(names)]);
  const byName = groupByName(candidates);
  for (const l of links as StoredLink[]) {
    const target = resolveLink(l, byName.get(l.name) ?? []);
    if (target && target.path !== l.source) out.get(target.path)?.add(l.source);
  }
  return new Map([...out].map(([p, s]) => [p, [...s]]));
}

function groupByName(notes: NoteMeta[]): Map<string, NoteMeta[]> {
  const byName = new Map<string, NoteMeta[]>();
  for (const n of notes) {
    const name = noteName(n.path);
    const list = byName.get(name);
    if (list) list.push(n);
    else byName.set(name, [n]);
  }
  return byName;
}
