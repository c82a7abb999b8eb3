// router-cli search QUERY [-n 10] [--all] [--read N] [--explain] [--no-rerank] [--json]: federated search
// (--all: only notes holding every word);
// --read also reads the top N hits in full, in one batch call; --explain prints each hit's
// BM25, vector, fused and rerank scores and ranks.
import { defineCommand } from "citty";
import { usage } from "../_errors";
import { client, connectionArgs } from "./_context";
import { formatNote } from "./_notes-view";

export default defineCommand({
  meta: { name: "search", description: "Search the vault; --read N also prints the top N notes in full" },
  args: {
    ...connectionArgs,
    query: {
      type: "positional",
      required: true,
      valueHint: "QUERY...",
      description: 'words, "quoted phrases", tag:x, producer:x (several words need no quotes)',
    },
    limit: { type: "string", alias: "n", default: "10", description: "hits (1–100)" },
    read: { type: "string", description: "read the top N hits in full (1–50)" },
    "max-chars": { type: "string", description: "with --read: cut each note's body at this many characters" },
    explain: { type: "boolean", description: "show each hit's BM25, vector, fused and rerank scores and ranks" },
    rerank: { type: "boolean", default: true, description: "--no-rerank skips the configured reranker" },
    all: { type: "boolean", description: "only notes holding every word and phrase (match all); default: every word counts" },
    json: { type: "boolean", description: "print JSON: the search result, with `notes` when --read" },
  },
  async run({ args }) {
    const read = args.read === undefined ? 0 : Number(args.read);
    if (!Number.isInteger(read) || read < 0 || read > 50) usage(`--read ${JSON.stringify(args.read)}: give a whole number from 1 to 50`);
    const maxChars = args["max-chars"] === undefined ? undefined : Number(args["max-chars"]);
    const c = client(args);
    const query = args._.length > 0 ? args._.join(" ") : args.query;
    const result = await c.search({
      query,
      limit: Number(args.limit),
      ...(args.explain ? { explain: true } : {}),
      ...(args.rerank === false ? { rerank: false } : {}),
      ...(args.all ? { match: "all" as const } : {}),
    });
    const top = result.hits.slice(0, read).map((h) => h.path);
    const batch = top.length ? await c.notes({ paths: top, max_chars: maxChars }) : undefined;
    if (args.json) {
      console.log(JSON.stringify(batch ? { ...result, notes: batch.notes, errors: batch.errors } : result));
      return;
    }
    if (result.hits.length === 0) console.log(`no hits for ${JSON.stringify(query)}`);
    for (const [i, h] of result.hits.entries()) {
      console.log(`${String(i + 1).padStart(2)}. ${h.path} — ${h.title}  (${h.producer}, score ${h.score.toFixed(3)}, words ${Math.round(h.coverage * 100)}%)`);
      if (h.snippet) console.log(`    ${h.snippet.replaceAll("<mark>", "").replaceAll("</mark>", "").replace(/\s+/g, " ")}`);
      if (h.explain) console.log(`    ${explainLine(h.explain)}`);
    }
    if (result.rerank && (args.explain || !result.rerank.applied)) console.log(rerankLine(result.rerank));
    for (const note of batch?.notes ?? []) console.log(`\n${formatNote(note)}`);
    for (const e of batch?.errors ?? []) console.error(`${e.path}: ${e.code}: ${e.message}`);
  },
});

type Explain = NonNullable<Awaited<ReturnType<ReturnType<typeof client>["search"]>>["hits"][number]["explain"]>;
type Rerank = NonNullable<Awaited<ReturnType<ReturnType<typeof client>["search"]>>["rerank"]>;

const stage = (name: string, s: { rank: number; score: number } | null) => `${name} ${s ? `#${s.rank} ${s.score}` : "—"}`;

/** One line of a hit's stages: `bm25 #2 7.1 · vector #1 0.83 · fused #1 0.91 · rerank #3 0.42 (raw 1.7) → 0.84`. */
export function explainLine(e: Explain): string {
  const r = e.rerank;
  const rerank = r
    ? `rerank ${r.rank === null ? "—" : `#${r.rank}`} ${r.score}${r.raw_score === null ? "" : ` (raw ${r.raw_score})`}, weight ${r.retrieval_weight} → ${r.blended}`
    : "rerank —";
  return [stage("bm25", e.bm25), stage("vector", e.vector), stage("fused", e.fused), rerank].join(" · ");
}

export function rerankLine(r: Rerank): string {
  const who = [r.kind, r.model].filter(Boolean).join(" ");
  return r.applied ? `reranked ${r.candidates} hits${who ? ` (${who})` : ""} in ${r.took_ms} ms` : `not reranked${who ? ` (${who})` : ""}: ${r.reason}`;
}
