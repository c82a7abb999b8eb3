// POST /brief's domain: the top hits plus a digest. With a chat model configured the digest
// is written by the model, citing hits as [1], [2] …; without one it is extractive, built
// from the hits themselves, and says so.
import { type SearchHit, SNIPPET_MARK } from "../index/types";
import { type ChatEndpoint, type ChatMessage, chat, chatStream } from "../llm";
import { type SearchDeps, type SearchMode, search } from "../search/search";

const BRIEF_HITS = 8;

export interface Citation {
  n: number;
  path: string;
  title: string;
}

export interface BriefResult {
  query: string;
  synthesis: "model" | "extractive";
  model?: string;
  text: string;
  citations: Citation[];
  hits: SearchHit[];
  mode: SearchMode;
}

export interface BriefDeps extends SearchDeps {
  chat?: ChatEndpoint;
}

const unmark = (s: string) => s.replaceAll(SNIPPET_MARK.open, "").replaceAll(SNIPPET_MARK.close, "");

function citationsOf(hits: SearchHit[]): Citation[] {
  return hits.map((h, i) => ({ n: i + 1, path: h.path, title: h.title }));
}

function extractiveDigest(query: string, hits: SearchHit[]): string {
  if (hits.length === 0) return `Nothing in the vault matches "${query}".`;
  return hits
    .map((h, i) => {
      const passage = unmark(h.snippet).replace(/\s+/g, " ").trim();
      // A one-line note's title is its text: do not say it twice.
      return passage.startsWith(h.title) ? `[${i + 1}] ${passage}` : `[${i + 1}] ${h.title}: ${passage}`;
    })
    .join("\n");
}

function briefMessages(query: string, hits: SearchHit[]): ChatMessage[] {
  const sources = hits.map((h, i) => `[${i + 1}] ${h.title} (${h.path})\n${unmark(h.snippet)}`).join("\n\n");
  return [
    {
      role: "system",
      content:
        "You write a short brief for an engineer from the numbered notes you are given. Use only those notes. " +
        "Cite every claim with the note's number in square brackets, like [1] or [2][3]. If the notes do not answer the question, say so.",
    },
    { role: "user", content: `Question: ${query}\n\nNotes:\n${sources || "(none)"}` },
  ];
}

async function findForBrief(deps: BriefDeps, query: string) {
  return search(deps, query, BRIEF_HITS);
}

export async function brief(deps: BriefDeps, query: string): Promise<BriefResult> {
  const { hits, mode } = await findForBrief(deps, query);
  const citations = citationsOf(hits);
  if (!deps.chat || hits.length === 0) {
    return { query, synthesis: "extractive", text: extractiveDigest(query, hits), citations, hits, mode };
  }
  const answer = await chat(deps.chat, briefMessages(query, hits));
  return { query, synthesis: "model", model: answer.model, text: answer.text, citations, hits, mode };
}

/** The streamed variant: hits first, then the digest delta by delta. */
export async function briefStream(deps: BriefDeps, query: string) {
  const { hits, mode } = await findForBrief(deps, query);
  const citations = citationsOf(hits);
  if (!deps.chat || hits.length === 0) {
    const text = extractiveDigest(query, hits);
    return {
      hits,
      citations,
      mode,
      synthesis: "extractive" as const,
      model: undefined,
      deltas: (async function* () {
        yield text;
      })(),
    };
  }
  const stream = chatStream(deps.chat, briefMessages(query, hits));
  // Pull the first delta now, so a gateway that refuses fails the request (an upstream or
  // timeout error) before any SSE bytes are sent.
  const first = await stream.next();
  const deltas = (async function* () {
    if (!first.done) yield first.value;
    yield* stream;
  })();
  return { hits, citations, mode, synthesis: "model" as const, model: deps.chat.model, deltas };
}
