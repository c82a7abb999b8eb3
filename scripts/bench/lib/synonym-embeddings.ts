// A synonym-aware embeddings fixture for the relevance benchmark, served over HTTP in the
// OpenAI wire format like test/fixtures/openai-gateway.ts. That fixture's feature-hashed bag
// of words puts texts near each other only when they share words, so it cannot bridge a
// paraphrase; this one first maps every wording in relevance-set.ts's CONCEPTS thesaurus to
// one concept token ("revert to the previous version" and "undo the release" both become
// the token for rollback), drops stop words, strips plural/verb endings, then hashes the
// tokens with sublinear term frequency. It stands in for a semantic model that knows these
// synonyms; since the thesaurus covers every wording the set uses, it is an optimistic one.
import { STOP_WORDS } from "../../../src/router/index/index.ts";
import { CONCEPTS } from "./relevance-set.ts";

/** Longest wordings first, so "memory leak" wins over a shorter overlapping one. */
const PHRASES: { words: string[]; token: string }[] = CONCEPTS.flatMap((c) =>
  c.forms.map((f) => ({ words: f.toLowerCase().match(/[a-z0-9]+/g) ?? [], token: `concept_${c.id.replaceAll("-", "_")}` })),
).sort((a, b) => b.words.length - a.words.length);

function stem(w: string): string {
  if (w.length > 5 && w.endsWith("ing")) return w.slice(0, -3);
  if (w.length > 4 && w.endsWith("ed")) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith("s") && !w.endsWith("ss")) return w.slice(0, -1);
  return w;
}

/** The tokens the fixture embeds: concept tokens for thesaurus wordings, stems for the rest. */
export function canonicalTokens(text: string): string[] {
  const words = text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const out: string[] = [];
  for (let i = 0; i < words.length; ) {
    const hit = PHRASES.find((p) => p.words.length > 0 && p.words.every((w, j) => words[i + j] === w));
    if (hit) {
      out.push(hit.token);
      i += hit.words.length;
      continue;
    }
    const w = words[i++]!;
    if (!STOP_WORDS.has(w)) out.push(stem(w));
  }
  return out;
}

function fnv(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

export function synonymEmbedding(text: string, dim: number): number[] {
  const tf = new Map<string, number>();
  for (const t of canonicalTokens(text)) tf.set(t, (tf.get(t) ?? 0) + 1);
  const v = new Array<number>(dim).fill(0);
  for (const [t, n] of tf) {
    const h = fnv(t);
    // A sign bit halves the damage of hash collisions.
    v[h % dim]! += (h & 0x80000000 ? -1 : 1) * (1 + Math.log(n));
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

export interface EmbeddingsServer {
  url: string;
  requests: number;
  stop(): void;
}

/** POST /v1/embeddings with any embedding function; OpenAI's request and response shapes. */
export function serveEmbeddings(fn: (text: string) => number[]): EmbeddingsServer {
  const state = { requests: 0 };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      if (new URL(req.url).pathname !== "/v1/embeddings" || req.method !== "POST") return new Response("not found", { status: 404 });
      state.requests++;
      const body = (await req.json().catch(() => null)) as { input?: unknown; model?: string } | null;
      const input = Array.isArray(body?.input) ? body.input.map(String) : [String(body?.input ?? "")];
      return Response.json({
        object: "list",
        model: body?.model,
        data: input.map((t, index) => ({ object: "embedding", index, embedding: fn(t) })),
        usage: { prompt_tokens: input.length, total_tokens: input.length },
      });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    get requests() {
      return state.requests;
    },
    stop: () => server.stop(true),
  };
}
