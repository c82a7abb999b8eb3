// POST /dispatch with include_linked: the notes the bundle's top sources link to and are
// linked from (one hop, GET /notes/{path}/context's walk), so the agent that takes the job
// reads the decision and what it rests on, not only the search hits. Within a budget; sources
// already cited are not repeated.
import { noteContext } from "../notes/context";
import type { NotesDeps } from "../notes/file";

/** Cited sources whose neighbours are gathered, and the characters their bodies may take together. */
const LINKED_SOURCES = 3;
const LINKED_MAX_CHARS = 12_000;

export interface LinkedNote {
  path: string;
  title: string;
  /** The cited source it was reached from, and how. */
  from: string;
  relation: "links_to" | "linked_from";
  body: string;
  truncated: boolean;
}

export async function linkedNotes(deps: NotesDeps, sources: string[], maxChars = LINKED_MAX_CHARS): Promise<LinkedNote[]> {
  const seen = new Set(sources);
  const out: LinkedNote[] = [];
  let budget = maxChars;
  for (const source of sources.slice(0, LINKED_SOURCES)) {
    if (budget < 200) break;
    const ctx = await noteContext(deps, source, { depth: 1, maxChars: budget }).catch(() => undefined); // gone since the search: nothing to add
    for (const n of ctx?.notes ?? []) {
      if (n.distance === 0 || seen.has(n.path) || !n.via || budget <= 0) continue;
      seen.add(n.path);
      const body = n.body.slice(0, budget);
      budget -= body.length;
      out.push({ path: n.path, title: n.title, from: n.via.from, relation: n.via.relation, body, truncated: n.truncated || body.length < n.body.length });
    }
  }
  return out;
}

export function renderLinked(linked: LinkedNote[], cited: Array<{ n: number; path: string }>): string {
  if (linked.length === 0) return "";
  const number = new Map(cited.map((c) => [c.path, c.n]));
  const parts = linked.map((l) => {
    const how = l.relation === "links_to" ? `linked from [${number.get(l.from)}]` : `links to [${number.get(l.from)}]`;
    return `### ${l.title} (${l.path}), ${how}\n\n${l.body.trim()}${l.truncated ? "\n\n…(cut)" : ""}`;
  });
  return ["## Linked notes", "", parts.join("\n\n"), ""].join("\n");
}
