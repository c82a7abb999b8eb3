// GET /notes/{path}/context (MCP `context`): a note and the notes around it — those it links
// to and those linking to it, breadth-first to `depth` hops — ranked by link distance, then
// recency, and returned whole or cut until a character budget is spent; the rest is listed.
// basic-memory's build_context, over the index's links.
import { splitFrontmatter } from "../index/document";
import type { NoteMeta } from "../index/types";
import { type NotesDeps, readNoteFile } from "./file";
import { backlinksOf, outgoingOf, outgoingOfText } from "./graph";
import { cutBody, type NoteRef, noteRef } from "./view";

export const CONTEXT_DEPTH = { default: 1, max: 3 } as const;
export const CONTEXT_CHARS = { default: 20_000, min: 200, max: 200_000 } as const;
/** Notes a walk visits at most, however linked the vault: the walk stops widening there. */
const MAX_CONTEXT_NOTES = 200;
/** A note is cut rather than left out while at least this much budget remains. */
const MIN_USEFUL_CHARS = 200;

export interface ContextNote extends NoteRef {
  tags: string[];
  /** Hops from the asked note (0 = the note itself). */
  distance: number;
  /** How the walk reached it: from which note, by which direction of link; null for the note itself. */
  via: { from: string; relation: "links_to" | "linked_from" } | null;
  body: string;
  truncated: boolean;
}

export interface ContextResult {
  path: string;
  depth: number;
  max_chars: number;
  total_chars: number;
  notes: ContextNote[];
  /** Reached but not returned: over the budget, or unreadable now; closest first. */
  left_out: Array<NoteRef & { distance: number; reason: "max_chars" | "unreadable" }>;
  /** True when the walk met MAX_CONTEXT_NOTES and stopped widening. */
  capped: boolean;
}

interface Reached {
  distance: number;
  via: ContextNote["via"];
}

export async function noteContext(deps: NotesDeps, path: string, opts: { depth?: number; maxChars?: number } = {}): Promise<ContextResult> {
  const depth = opts.depth ?? CONTEXT_DEPTH.default;
  const maxChars = opts.maxChars ?? CONTEXT_CHARS.default;
  const root = await readNoteFile(deps.vault, path);
  const rootBody = splitFrontmatter(root.content).body;
  const reached = new Map<string, Reached>([[root.path, { distance: 0, via: null }]]);
  let frontier = [root.path];
  let capped = false;
  for (let d = 1; d <= depth && frontier.length > 0 && !capped; d++) {
    const [outgoing, backlinks] = await Promise.all([
      d === 1 ? new Map([[root.path, await outgoingOfText(deps.index, root.path, rootBody)]]) : outgoingOf(deps.index, frontier),
      backlinksOf(deps.index, frontier),
    ]);
    const next: string[] = [];
    const reach = (to: string, from: string, relation: "links_to" | "linked_from") => {
      if (reached.has(to)) return;
      if (reached.size >= MAX_CONTEXT_NOTES) {
        capped = true;
        return;
      }
      reached.set(to, { distance: d, via: { from, relation } });
      next.push(to);
    };
    for (const from of frontier) {
      for (const l of outgoing.get(from) ?? []) if (l.note) reach(l.note.path, from, "links_to");
      for (const source of backlinks.get(from) ?? []) reach(source, from, "linked_from");
    }
    frontier = next;
  }

  const meta = new Map((await deps.index.notes([...reached.keys()])).map((n) => [n.path, n]));
  const rootMeta: NoteMeta = meta.get(root.path) ?? {
    path: root.path,
    producer: root.producer,
    title: root.path,
    tags: [],
    updatedAt: new Date(root.mtimeMs),
    hash: root.hash,
  };
  const ranked = [...reached]
    .filter(([p]) => p === root.path || meta.has(p))
    .map(([p, r]) => ({ meta: p === root.path ? rootMeta : meta.get(p)!, ...r }))
    .sort((a, b) => a.distance - b.distance || b.meta.updatedAt.getTime() - a.meta.updatedAt.getTime() || (a.meta.path < b.meta.path ? -1 : 1));

  const result: ContextResult = { path: root.path, depth, max_chars: maxChars, total_chars: 0, notes: [], left_out: [], capped };
  let budget = maxChars;
  for (const r of ranked) {
    const ref = { ...noteRef(r.meta), distance: r.distance };
    // The asked note always comes back (cut to the budget if need be); the others while it lasts.
    if (r.distance > 0 && budget < MIN_USEFUL_CHARS) {
      result.left_out.push({ ...ref, reason: "max_chars" });
      continue;
    }
    const body =
      r.distance === 0
        ? rootBody
        : await readNoteFile(deps.vault, r.meta.path).then(
            (f) => splitFrontmatter(f.content).body,
            () => null,
          );
    if (body === null) {
      result.left_out.push({ ...ref, reason: "unreadable" });
      continue;
    }
    const cut = cutBody(body, { maxChars: Math.max(0, budget) });
    budget -= cut.body.length;
    result.total_chars += cut.body.length;
    result.notes.push({ ...ref, tags: r.meta.tags, via: r.via, body: cut.body, truncated: cut.truncated });
  }
  return result;
}
