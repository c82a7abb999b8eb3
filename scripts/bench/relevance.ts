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
// Hybrid + rerank is search() with the rerank stage on, against the fixture reranker
// (test/fixtures/reranker.ts, word overlap over real HTTP): a fixture, so it measures the
// plumbing and the blend, not what a trained cross-encoder would do.
//
// A second, independent set (issue 21 part 5): known-item and question-style queries over the
// markdown docs inside node_modules (lib/npm-docs-set.ts: the procedure; the queries are
// committed in data/npm-docs-queries.json), for BM25, hybrid (hash fixture) and hybrid + rerank.
// Every row prints MRR@10, nDCG@10 and recall@10. Prints only; asserts nothing.
//
//   bun run bench relevance
//   bun scripts/bench/relevance.ts --npm-only # the npm-docs set alone
//   bun scripts/bench/relevance.ts --dump     # print the labelled set as JSON and exit

import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import postgres from "postgres";
import { openPostgresIndex } from "../../src/router/index/postgres.ts";
import { parseQuery } from "../../src/router/index/query.ts";
import { openSqliteIndex } from "../../src/router/index/sqlite.ts";
import type { IndexStore, SearchHit } from "../../src/router/index/types.ts";
import { type EmbeddingsEndpoint, embed } from "../../src/router/llm.ts";
import { httpReranker, type Reranker } from "../../src/router/search/rerank.ts";
import { fuseRrf, fuseScores, RRF_K, search } from "../../src/router/search/search.ts";
import { type Gateway, startGateway } from "../../test/fixtures/openai-gateway.ts";
import { type RerankerFixture, startRerankerFixture } from "../../test/fixtures/reranker.ts";
import { indexedCopy, loadSet, NODE_MODULES, NPM_KINDS, type NpmQueryKind, vaultPathOf } from "./lib/npm-docs-set.ts";
import { refreshRaw } from "./lib/raw-index.ts";
import { QUERY_KINDS, relevanceSet } from "./lib/relevance-set.ts";
import { percentile } from "./lib/stats.ts";
import { type EmbeddingsServer, serveEmbeddings, synonymEmbedding } from "./lib/synonym-embeddings.ts";
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

/** A query of either set: its id, kind and relevant vault paths. */
interface JudgedQuery {
  id: number;
  kind: string;
  query: string;
  relevant: string[];
}

type Ranking = (q: JudgedQuery) => Promise<string[]>;

interface Metrics {
  mrr: number;
  ndcg: number;
  recall: number;
}

interface Scores extends Metrics {
  byKind: Record<string, Metrics>;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / (xs.length || 1);

/** MRR@10, nDCG@10 (binary gains, ideal = every relevant document on top) and recall@10. */
function evaluate(queries: JudgedQuery[], kinds: readonly string[], results: Map<number, string[]>): Scores {
  const per = queries.map((q) => {
    const top = (results.get(q.id) ?? []).slice(0, K);
    const first = top.findIndex((p) => q.relevant.includes(p));
    const dcg = top.reduce((sum, p, i) => sum + (q.relevant.includes(p) ? 1 / Math.log2(i + 2) : 0), 0);
    let ideal = 0;
    for (let i = 0; i < Math.min(K, q.relevant.length); i++) ideal += 1 / Math.log2(i + 2);
    return {
      kind: q.kind,
      rr: first === -1 ? 0 : 1 / (first + 1),
      ndcg: ideal ? dcg / ideal : 0,
      recall: q.relevant.filter((r) => top.includes(r)).length / q.relevant.length,
    };
  });
  const metrics = (xs: typeof per): Metrics => ({ mrr: mean(xs.map((x) => x.rr)), ndcg: mean(xs.map((x) => x.ndcg)), recall: mean(xs.map((x) => x.recall)) });
  const byKind = Object.fromEntries(kinds.map((k) => [k, metrics(per.filter((p) => p.kind === k))]));
  return { ...metrics(per), byKind };
}

const labelled: JudgedQuery[] = set.queries;

async function runOn(queries: JudgedQuery[], kinds: readonly string[], ranking: Ranking): Promise<Scores> {
  const results = new Map<number, string[]>();
  for (const q of queries) results.set(q.id, await ranking(q));
  return evaluate(queries, kinds, results);
}

const run = (ranking: Ranking) => runOn(labelled, QUERY_KINDS, ranking);

/** search() with the rerank stage on; counts the queries whose rerank fell back. */
function reranked(
  deps: { index: IndexStore; embed?: (texts: string[]) => Promise<number[][]> },
  reranker: Reranker,
  vault: string,
  fallbacks: string[],
): Ranking {
  return async (q) => {
    const r = await search({ ...deps, rerank: reranker, vault }, q.query, K);
    if (r.rerank && !r.rerank.applied && !/no words|no hits/.test(r.rerank.reason ?? "")) fallbacks.push(`${q.id}: ${r.rerank.reason}`);
    return r.hits.map((h) => h.path);
  };
}

/** The fixture reranker at the default depth, with a bound wide enough that load cannot trip it. */
const fixtureReranker = (f: RerankerFixture): Reranker => httpReranker({ url: f.url, format: "texts", depth: 40, timeoutMs: 30_000 });

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

async function evaluateEmbedder(name: string, vault: string, dataDir: string, url: string, rows: Row[], notes: string[], reranker: Reranker): Promise<void> {
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
    rows.push({
      label: `hybrid RRF k=${RRF_K} (${name})`,
      scores: await run(async (q) => {
        const l = lists.get(q.id)!;
        return paths(fuseRrf([l.bm25, l.vector], K));
      }),
    });
    rows.push({ label: `hybrid score-aware α=${ALPHA} (${name}) — search()`, scores: hybrid });
    const fallbacks: string[] = [];
    rows.push({
      label: `hybrid + rerank (${name}, fixture reranker) — search()`,
      scores: await run(reranked({ index: store, embed: embedFn }, reranker, vault, fallbacks)),
    });
    if (fallbacks.length) notes.push(`${name} + rerank: the rerank stage fell back on ${fallbacks.length} queries (${fallbacks[0]})`);
    if (differs) notes.push(`${name}: search()'s hybrid ranking differed from fuseScores(α=${ALPHA}) on the same lists for ${differs} queries`);
    const sweep = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8].map(async (alpha) => {
      const s = await run(async (q) => {
        const l = lists.get(q.id)!;
        return paths(fuseAlpha(l.bm25, l.vector, K, alpha));
      });
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
  console.log(
    `relevance — ${set.queries.length} labelled queries (${QUERY_KINDS.map((k) => `${set.queries.filter((q) => q.kind === k).length} ${k}`).join(", ")}),`,
  );
  console.log(
    `${set.notes.length} planted notes among ${BACKGROUND_NOTES} generated ones; ${set.queries.reduce((s, q) => s + q.relevant.length, 0)} relevant (query, note) pairs\n`,
  );
  console.log(
    table([
      ["ranking", "MRR@10", "nDCG@10", "recall@10", ...QUERY_KINDS.map((k) => `${k} MRR / R@10`)],
      ...rows.map((r) => [
        r.label,
        f(r.scores.mrr),
        f(r.scores.ndcg),
        f(r.scores.recall),
        ...QUERY_KINDS.map((k) => `${f(r.scores.byKind[k]!.mrr)} / ${f(r.scores.byKind[k]!.recall)}`),
      ]),
    ]),
  );
  console.log();
  const get = (label: string) => rows.find((r) => r.label.startsWith(label))?.scores;
  const bm25 = get("BM25 alone (SQLite");
  for (const name of ["hash", "synonym"]) {
    const rrf = get(`hybrid RRF k=${RRF_K} (${name})`);
    const sa = get(`hybrid score-aware α=${ALPHA} (${name})`);
    if (!bm25 || !rrf || !sa) continue;
    const d = (a: number, b: number) => `${a - b >= 0 ? "+" : ""}${num(a - b, 3)}`;
    console.log(
      `${name}: hybrid (search(), score-aware) vs BM25: MRR@10 ${d(sa.mrr, bm25.mrr)}, recall@10 ${d(sa.recall, bm25.recall)}; ` +
        `paraphrase-bare MRR ${d(sa.byKind["paraphrase-bare"]!.mrr, bm25.byKind["paraphrase-bare"]!.mrr)}`,
    );
    const rr = get(`hybrid + rerank (${name}`);
    if (rr)
      console.log(
        `${name}: hybrid + rerank (fixture) vs hybrid: MRR@10 ${d(rr.mrr, sa.mrr)}, nDCG@10 ${d(rr.ndcg, sa.ndcg)}, recall@10 ${d(rr.recall, sa.recall)}`,
      );
    const better = sa.mrr > rrf.mrr + 0.005 ? "score-aware" : rrf.mrr > sa.mrr + 0.005 ? `RRF k=${RRF_K}` : "neither (within 0.005)";
    console.log(
      `${name}: RRF k=${RRF_K} MRR@10 ${f(rrf.mrr)} R@10 ${f(rrf.recall)} vs score-aware MRR@10 ${f(sa.mrr)} R@10 ${f(sa.recall)} → ranks better: ${better}`,
    );
  }
  const hashHybrid = get(`hybrid score-aware α=${ALPHA} (hash)`);
  const hashGain = bm25 && hashHybrid ? hashHybrid.mrr - bm25.mrr : Number.NaN;
  console.log();
  console.log(
    Number.isFinite(hashGain) && hashGain < 0.02
      ? "honest note: the hash fixture (test/fixtures/openai-gateway.ts) is a bag of words — texts are near only when they share words — so it gives no semantic help on paraphrases; any change it makes is re-weighting of the same words."
      : "note: the hash fixture is a bag of words; where it helps it does so by re-weighting shared words, not by meaning.",
  );
  console.log(
    "note: the synonym fixture knows every wording the set uses (its thesaurus is the generator's), so its gain is an upper bound for what a semantic model could add here, not a forecast for a real one.",
  );
  console.log(FIXTURE_RERANKER_NOTE);
  for (const n of notes) console.log(n);
}

const FIXTURE_RERANKER_NOTE =
  "note: the reranker here is a FIXTURE (test/fixtures/reranker.ts: the share of the query's words a hit holds). Its rows measure the plumbing — the stage, the wire format, the position blend — not the quality of any rerank model; a real cross-encoder behind RERANK_URL must be measured on its own.";

/**
 * The npm-docs set: a vault of the corpus files as node_modules holds them (less the headings
 * question queries hide), BM25, hybrid with the hash fixture, and hybrid + fixture rerank.
 */
async function npmDocs(tmp: string, hashUrl: string, reranker: Reranker): Promise<void> {
  const npm = loadSet();
  const vault = join(tmp, "npm-vault");
  const hidden = new Map<string, string[]>();
  for (const q of npm.queries) if (q.hide) hidden.set(q.relevant, [...(hidden.get(q.relevant) ?? []), q.hide]);
  const changed: string[] = [];
  for (const doc of npm.corpus) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(NODE_MODULES, doc.file));
    } catch {
      changed.push(`${doc.file} (missing)`);
      continue;
    }
    if (createHash("sha256").update(bytes).digest("hex") !== doc.sha256) changed.push(doc.file);
    const abs = join(vault, vaultPathOf(doc.file));
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, indexedCopy(bytes.toString("utf8"), hidden.get(doc.file) ?? []));
  }
  const queries: JudgedQuery[] = npm.queries.map((q) => ({ id: q.id, kind: q.kind, query: q.query, relevant: [vaultPathOf(q.relevant)] }));
  const on = (ranking: Ranking) => runOn(queries, NPM_KINDS, ranking);
  const rows: Row[] = [];
  const fallbacks: string[] = [];
  /** Times each query's search() call into `into` (ms). */
  const timed =
    (ranking: Ranking, into: number[]): Ranking =>
    async (q) => {
      const t0 = performance.now();
      const out = await ranking(q);
      into.push(performance.now() - t0);
      return out;
    };
  const ms = { hybrid: [] as number[], reranked: [] as number[] };

  const plain = await openSqliteIndex({ dataDir: join(tmp, "npm-bm25") });
  await refreshRaw(plain, vault);
  rows.push({
    label: "BM25 alone (SQLite FTS5) — search()",
    scores: await on(async (q) => (await search({ index: plain }, q.query, K)).hits.map((h) => h.path)),
  });
  rows.push({ label: "BM25 + rerank (fixture reranker) — search()", scores: await on(reranked({ index: plain }, reranker, vault, fallbacks)) });
  await plain.close();

  const ep: EmbeddingsEndpoint = { url: hashUrl, model: "fixture-hash", dim: DIM, timeoutMs: 10_000 };
  const { store } = await buildWithVectors(vault, join(tmp, "npm-hash"), ep);
  const embedFn = (texts: string[]) => embed(ep, texts);
  rows.push({
    label: "hybrid score-aware (hash) — search()",
    scores: await on(timed(async (q) => (await search({ index: store, embed: embedFn }, q.query, K)).hits.map((h) => h.path), ms.hybrid)),
  });
  rows.push({
    label: "hybrid + rerank (hash, fixture reranker) — search()",
    scores: await on(timed(reranked({ index: store, embed: embedFn }, reranker, vault, fallbacks), ms.reranked)),
  });
  await store.close();

  const f = (x: number) => num(x, 3);
  console.log();
  console.log(
    `npm-docs set — ${queries.length} queries (${NPM_KINDS.map((k) => `${queries.filter((q) => q.kind === k).length} ${k}`).join(", ")}) over ${npm.corpus.length} markdown documents`,
  );
  console.log(
    `from ${new Set(npm.corpus.map((d) => d.package)).size} packages in node_modules (scripts/bench/lib/npm-docs-set.ts; seed ${npm.seed}); one relevant document per query\n`,
  );
  console.log(
    table([
      ["ranking", "MRR@10", "nDCG@10", "recall@10", ...NPM_KINDS.map((k) => `${k} MRR / R@10`)],
      ...rows.map((r) => [
        r.label,
        f(r.scores.mrr),
        f(r.scores.ndcg),
        f(r.scores.recall),
        ...NPM_KINDS.map((k: NpmQueryKind) => `${f(r.scores.byKind[k]!.mrr)} / ${f(r.scores.byKind[k]!.recall)}`),
      ]),
    ]),
  );
  console.log();
  if (changed.length) {
    console.log(
      `WARNING: ${changed.length} corpus files differ from the committed set's hashes (another install than bun.lock's?), e.g. ${changed.slice(0, 3).join(", ")}: these figures are not comparable with the README's.`,
    );
  } else console.log(`corpus: all ${npm.corpus.length} files match the committed sha256s (the packages bun.lock pins).`);
  if (fallbacks.length) console.log(`the rerank stage fell back on ${fallbacks.length} queries (${fallbacks[0]})`);
  const p = (xs: number[], q: number) => num(percentile(xs, q), 2);
  console.log(
    `latency, in process, same run: hybrid search() p50 ${p(ms.hybrid, 50)} ms / p95 ${p(ms.hybrid, 95)} ms; ` +
      `with the rerank stage p50 ${p(ms.reranked, 50)} ms / p95 ${p(ms.reranked, 95)} ms — ` +
      `${num(percentile(ms.reranked, 50) / percentile(ms.hybrid, 50), 2)}× (snippets for 40 hits instead of 10, 40 note openings read, one HTTP call, ` +
      `and the fixture's own scoring, which runs in this process; a real model adds its inference time)`,
  );
  console.log("note: the hash embedding fixture is a bag of words, not a semantic model.");
  console.log(FIXTURE_RERANKER_NOTE);
}

/** The labelled set's vault, and BM25 over it on SQLite (search()) and Postgres. */
async function labelledBm25(vault: string, rows: Row[], notes: string[]): Promise<void> {
  const tmp = dirname(vault);
  writeVault(vault, BACKGROUND_NOTES, 1);
  for (const n of set.notes) {
    mkdirSync(dirname(join(vault, n.path)), { recursive: true });
    writeFileSync(join(vault, n.path), n.content);
  }
  console.log(`relevance bench: vault of ${BACKGROUND_NOTES} + ${set.notes.length} notes, ${set.queries.length} queries`);
  const plain = await openSqliteIndex({ dataDir: join(tmp, "bm25") });
  await refreshRaw(plain, vault);
  rows.push({
    label: "BM25 alone (SQLite FTS5) — search()",
    scores: await run(async (q) => (await search({ index: plain }, q.query, K)).hits.map((h) => h.path)),
  });
  await plain.close();
  await postgresBm25(vault, rows, notes);
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(join(tmpdir(), "brain-bench-relevance-"));
  const servers: Array<Gateway | EmbeddingsServer | RerankerFixture> = [];
  try {
    const npmOnly = process.argv.includes("--npm-only");
    const vault = join(tmp, "vault");
    const rows: Row[] = [];
    const notes: string[] = [];
    if (!npmOnly) await labelledBm25(vault, rows, notes);
    const hash = startGateway({ dim: DIM });
    servers.push(hash);
    const rerankFixture = startRerankerFixture();
    servers.push(rerankFixture);
    const reranker = fixtureReranker(rerankFixture);
    if (!npmOnly) {
      await evaluateEmbedder("hash", vault, join(tmp, "hash"), hash.url, rows, notes, reranker);
      const synonym = serveEmbeddings((t) => synonymEmbedding(t, DIM));
      servers.push(synonym);
      await evaluateEmbedder("synonym", vault, join(tmp, "synonym"), synonym.url, rows, notes, reranker);
      report(rows, notes);
    }
    await npmDocs(tmp, hash.url, reranker);
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
