// Relevance benchmark (issue 3): a labelled set of 120 queries over a generated vault
// (lib/relevance-set.ts: 400 planted notes — targets, follow-ups, distractors — among 3,000
// ordinary ones), printing MRR@10 and recall@10 for BM25 alone and for hybrid search, with
// two fixture embedding servers over real HTTP:
//   hash     test/fixtures/openai-gateway.ts — feature-hashed bag of words (no semantics)
//   synonym  lib/synonym-embeddings.ts — the same hashing after mapping a thesaurus of
//            synonyms to concept tokens (an optimistic stand-in for a semantic model)
// Hybrid is the project's own search(): score-aware fusion (src/router/search/search.ts
// fuseScores: min-max normalised scores, α·BM25 + (1−α)·cosine, α = 0.5 fixed in advance); it
// is compared with reciprocal rank fusion (fuseRrf, k = 60), which search() used before.
// Postgres full text (same queries, its own ranking) is measured too when a server answers.
// Prints only; asserts nothing.
//
//   bun run bench relevance
//   bun scripts/bench/relevance.ts --dump     # print the labelled set as JSON and exit
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import postgres from "postgres";
import { startGateway, type Gateway } from "../../test/fixtures/openai-gateway.ts";
import { openPostgresIndex } from "../../src/router/index/postgres.ts";
import { parseQuery } from "../../src/router/index/query.ts";
import { openSqliteIndex } from "../../src/router/index/sqlite.ts";
import type { IndexStore, SearchHit } from "../../src/router/index/types.ts";
import { embed, type EmbeddingsEndpoint } from "../../src/router/llm.ts";
import { fuseRrf, fuseScores, RRF_K, search } from "../../src/router/search/search.ts";
import { refreshRaw } from "./lib/raw-index.ts";
import { QUERY_KINDS, relevanceSet, type LabelledQuery, type QueryKind } from "./lib/relevance-set.ts";
import { serveEmbeddings, synonymEmbedding, type EmbeddingsServer } from "./lib/synonym-embeddings.ts";
import { num, table } from "./lib/table.ts";
import { writeVault } from "./lib/vault-gen.ts";

const BACKGROUND_NOTES = Number(process.env.BENCH_RELEVANCE_BACKGROUND ?? 3_000);
const DIM = 256;
const DEPTH = 50; // how deep each list is read before fusing (as search.ts does)
const K = 10;
const ALPHA = 0.5;
const PG_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

const set = relevanceSet();
if (process.argv.includes("--dump")) {
  console.log(JSON.stringify(set.queries, null, 2));
  process.exit(0);
}

type Ranking = (q: LabelledQuery) => Promise<string[]>;

interface Scores {
  mrr: number;
  recall: number;
  byKind: Record<QueryKind, { mrr: number; recall: number }>;
}

function evaluate(results: Map<number, string[]>): Scores {
  const per = set.queries.map((q) => {
    const top = (results.get(q.id) ?? []).slice(0, K);
    const first = top.findIndex((p) => q.relevant.includes(p));
    return { kind: q.kind, rr: first === -1 ? 0 : 1 / (first + 1), recall: q.relevant.filter((r) => top.includes(r)).length / q.relevant.length };
  });
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / (xs.length || 1);
  const byKind = Object.fromEntries(
    QUERY_KINDS.map((k) => {
      const xs = per.filter((p) => p.kind === k);
      return [k, { mrr: mean(xs.map((x) => x.rr)), recall: mean(xs.map((x) => x.recall)) }];
    }),
  ) as Scores["byKind"];
  return { mrr: mean(per.map((p) => p.rr)), recall: mean(per.map((p) => p.recall)), byKind };
}

async function run(ranking: Ranking): Promise<Scores> {
  const results = new Map<number, string[]>();
  for (const q of set.queries) results.set(q.id, await ranking(q));
  return evaluate(results);
}

/** Score-aware fusion with BM25 weighted α and the vector list 1 − α (search() uses α = 0.5). */
const fuseAlpha = (bm25: SearchHit[], vector: SearchHit[], limit: number, alpha = ALPHA) => fuseScores([bm25, vector], limit, [alpha, 1 - alpha]);

/** Builds an SQLite index over the vault with vectors from `ep`. */
async function buildWithVectors(vault: string, dataDir: string, ep: EmbeddingsEndpoint): Promise<{ store: IndexStore; ms: number }> {
  const store = await openSqliteIndex({ dataDir, embeddingDim: DIM });
  const { ms } = await refreshRaw(store, vault, 8, (texts) => embed(ep, texts));
  return { store, ms };
}

interface Row {
  label: string;
  scores: Scores;
}

async function evaluateEmbedder(name: string, vault: string, dataDir: string, url: string, rows: Row[], notes: string[]): Promise<void> {
  const ep: EmbeddingsEndpoint = { url, model: `fixture-${name}`, dim: DIM, timeoutMs: 10_000 };
  const { store, ms } = await buildWithVectors(vault, dataDir, ep);
  console.log(`  ${name}: indexed with ${DIM}-dim vectors in ${num(ms / 1000, 1)} s`);
  try {
    const embedFn = (texts: string[]) => embed(ep, texts);
    const lists = new Map<number, { bm25: SearchHit[]; vector: SearchHit[] }>();
    for (const q of set.queries) {
      const parsed = parseQuery(q.query);
      const text = [...parsed.terms, ...parsed.phrases.map((p) => p.join(" "))].join(" ");
      const [vec] = await embedFn([text]);
      lists.set(q.id, {
        bm25: await store.search(parsed, DEPTH),
        vector: await store.vectorSearch(vec!, DEPTH, { tags: parsed.tags, producers: parsed.producers }),
      });
    }
    const paths = (hits: SearchHit[]) => hits.map((h) => h.path);
    let differs = 0;
    const hybrid = await run(async (q) => {
      const result = await search({ index: store, embed: embedFn }, q.query, K);
      const { bm25, vector } = lists.get(q.id)!;
      if (result.mode !== "hybrid" || paths(result.hits).join() !== paths(fuseAlpha(bm25, vector, K)).join()) differs++;
      return paths(result.hits);
    });
    rows.push({ label: `vector only (${name})`, scores: await run(async (q) => paths(lists.get(q.id)!.vector.slice(0, K))) });
    rows.push({ label: `hybrid RRF k=${RRF_K} (${name})`, scores: await run(async (q) => { const l = lists.get(q.id)!; return paths(fuseRrf([l.bm25, l.vector], K)); }) });
    rows.push({ label: `hybrid score-aware α=${ALPHA} (${name}) — search()`, scores: hybrid });
    if (differs) notes.push(`${name}: search()'s hybrid ranking differed from fuseScores(α=${ALPHA}) on the same lists for ${differs} queries`);
    const sweep = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8].map(async (alpha) => {
      const s = await run(async (q) => { const l = lists.get(q.id)!; return paths(fuseAlpha(l.bm25, l.vector, K, alpha)); });
      return `α=${alpha}: ${num(s.mrr, 3)}`;
    });
    notes.push(`${name}: score-aware MRR@10 by α (informative only — choosing α on this set would overfit it): ${(await Promise.all(sweep)).join(", ")}`);
  } finally {
    await store.close();
  }
}

async function postgresBm25(vault: string, rows: Row[], notes: string[]): Promise<void> {
  const admin = postgres(PG_URL, { max: 1, connect_timeout: 5, onnotice: () => {} });
  const db = `brain_relevance_${process.pid}`;
  try {
    await admin.unsafe(`CREATE DATABASE "${db}"`);
  } catch (err) {
    notes.push(`postgres: not measured (${(err as Error).message})`);
    await admin.end({ timeout: 5 }).catch(() => {});
    return;
  }
  try {
    const url = new URL(PG_URL);
    url.pathname = `/${db}`;
    const store = await openPostgresIndex({ url: url.toString(), max: 10 });
    try {
      await refreshRaw(store, vault);
      rows.push({ label: "BM25 alone (Postgres full text)", scores: await run(async (q) => (await store.search(parseQuery(q.query), K)).map((h) => h.path)) });
    } finally {
      await store.close();
    }
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`).catch(() => {});
    await admin.end({ timeout: 5 }).catch(() => {});
  }
}

function report(rows: Row[], notes: string[]): void {
  const f = (x: number) => num(x, 3);
  console.log();
  console.log(`relevance — ${set.queries.length} labelled queries (${QUERY_KINDS.map((k) => `${set.queries.filter((q) => q.kind === k).length} ${k}`).join(", ")}),`);
  console.log(`${set.notes.length} planted notes among ${BACKGROUND_NOTES} generated ones; ${set.queries.reduce((s, q) => s + q.relevant.length, 0)} relevant (query, note) pairs\n`);
  console.log(table([
    ["ranking", "MRR@10", "recall@10", ...QUERY_KINDS.map((k) => `${k} MRR / R@10`)],
    ...rows.map((r) => [r.label, f(r.scores.mrr), f(r.scores.recall), ...QUERY_KINDS.map((k) => `${f(r.scores.byKind[k].mrr)} / ${f(r.scores.byKind[k].recall)}`)]),
  ]));
  console.log();
  const get = (label: string) => rows.find((r) => r.label.startsWith(label))?.scores;
  const bm25 = get("BM25 alone (SQLite");
  for (const name of ["hash", "synonym"]) {
    const rrf = get(`hybrid RRF k=${RRF_K} (${name})`);
    const sa = get(`hybrid score-aware α=${ALPHA} (${name})`);
    if (!bm25 || !rrf || !sa) continue;
    const d = (a: number, b: number) => `${a - b >= 0 ? "+" : ""}${num(a - b, 3)}`;
    console.log(`${name}: hybrid (search(), score-aware) vs BM25: MRR@10 ${d(sa.mrr, bm25.mrr)}, recall@10 ${d(sa.recall, bm25.recall)}; ` +
      `paraphrase-bare MRR ${d(sa.byKind["paraphrase-bare"].mrr, bm25.byKind["paraphrase-bare"].mrr)}`);
    const better = sa.mrr > rrf.mrr + 0.005 ? "score-aware" : rrf.mrr > sa.mrr + 0.005 ? `RRF k=${RRF_K}` : "neither (within 0.005)";
    console.log(`${name}: RRF k=${RRF_K} MRR@10 ${f(rrf.mrr)} R@10 ${f(rrf.recall)} vs score-aware MRR@10 ${f(sa.mrr)} R@10 ${f(sa.recall)} → ranks better: ${better}`);
  }
  const hashHybrid = get(`hybrid score-aware α=${ALPHA} (hash)`);
  const hashGain = bm25 && hashHybrid ? hashHybrid.mrr - bm25.mrr : Number.NaN;
  console.log();
  console.log(
    Number.isFinite(hashGain) && hashGain < 0.02
      ? "honest note: the hash fixture (test/fixtures/openai-gateway.ts) is a bag of words — texts are near only when they share words — so it gives no semantic help on paraphrases; any change it makes is re-weighting of the same words."
      : "note: the hash fixture is a bag of words; where it helps it does so by re-weighting shared words, not by meaning.",
  );
  console.log("note: the synonym fixture knows every wording the set uses (its thesaurus is the generator's), so its gain is an upper bound for what a semantic model could add here, not a forecast for a real one.");
  for (const n of notes) console.log(n);
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(join(tmpdir(), "brain-bench-relevance-"));
  const servers: Array<Gateway | EmbeddingsServer> = [];
  try {
    const vault = join(tmp, "vault");
    writeVault(vault, BACKGROUND_NOTES, 1);
    for (const n of set.notes) {
      mkdirSync(dirname(join(vault, n.path)), { recursive: true });
      writeFileSync(join(vault, n.path), n.content);
    }
    console.log(`relevance bench: vault of ${BACKGROUND_NOTES} + ${set.notes.length} notes, ${set.queries.length} queries`);
    const rows: Row[] = [];
    const notes: string[] = [];

    const plain = await openSqliteIndex({ dataDir: join(tmp, "bm25") });
    await refreshRaw(plain, vault);
    rows.push({
      label: "BM25 alone (SQLite FTS5) — search()",
      scores: await run(async (q) => {
        const r = await search({ index: plain }, q.query, K);
        return r.hits.map((h) => h.path);
      }),
    });
    await plain.close();

    await postgresBm25(vault, rows, notes);

    const hash = startGateway({ dim: DIM });
    servers.push(hash);
    await evaluateEmbedder("hash", vault, join(tmp, "hash"), hash.url, rows, notes);
    const synonym = serveEmbeddings((t) => synonymEmbedding(t, DIM));
    servers.push(synonym);
    await evaluateEmbedder("synonym", vault, join(tmp, "synonym"), synonym.url, rows, notes);

    report(rows, notes);
  } finally {
    for (const s of servers) s.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (err) {
  console.error(`relevance bench could not run: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
}
process.exit(0);
