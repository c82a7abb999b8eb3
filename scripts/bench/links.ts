// Link extraction's cost (issue 20): it runs on every indexed document, so it must stay small
// beside what indexing a document already costs. Over generated notes with BENCH_LINKS links
// each (5 by default) and over the same notes without links, per note: extractLinks() beside
// documentFromFile() + chunkDocument() (the parsing and chunking every upsert does anyway), all
// in this process on the same texts, the best of 15 passes each. Then a full SQLite build of both vaults (refreshFolder),
// whose difference is the cost of storing the links.
//
//   bun run bench links            # 10k notes (BENCH_NOTES)
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { chunkDocument } from "../../src/router/index/chunk.ts";
import { documentFromFile, splitFrontmatter } from "../../src/router/index/document.ts";
import { extractLinks } from "../../src/router/index/links.ts";
import { refreshFolder } from "../../src/router/index/refresh.ts";
import { openSqliteIndex } from "../../src/router/index/sqlite/store.ts";
import { num, table } from "./lib/table.ts";
import { generateNote, writeVault } from "./lib/vault-gen.ts";

const notes = Number(process.env.BENCH_NOTES) > 0 ? Number(process.env.BENCH_NOTES) : 10_000;
const links = process.env.BENCH_LINKS === undefined ? 5 : Number(process.env.BENCH_LINKS);
const tmp = mkdtempSync(join(tmpdir(), "brain-bench-links-"));

function timePerNote(texts: Array<{ path: string; content: string }>, fn: (t: { path: string; content: string }) => unknown): number {
  // The best of 15 passes: on a shared machine the slower ones measure the neighbours.
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < 15; r++) {
    const t0 = performance.now();
    for (const t of texts) fn(t);
    best = Math.min(best, ((performance.now() - t0) * 1000) / texts.length);
  }
  return best;
}

async function build(vault: string): Promise<{ ms: number; docsPerS: number }> {
  const dataDir = join(tmp, `data-${Math.random().toString(36).slice(2)}`);
  const store = await openSqliteIndex({ dataDir });
  try {
    const t0 = performance.now();
    const counts = await refreshFolder(store, { vault, concurrency: 256 });
    const ms = performance.now() - t0;
    return { ms, docsPerS: (counts.added / ms) * 1000 };
  } finally {
    await store.close();
  }
}

try {
  const linked = join(tmp, "linked");
  const plain = join(tmp, "plain");
  mkdirSync(linked);
  mkdirSync(plain);
  writeVault(linked, notes, 1, { linksPerNote: links });
  writeVault(plain, notes, 1);
  const read = (vault: string) =>
    Array.from({ length: Math.min(notes, 5_000) }, (_, i) => {
      const path = generateNote(1, i).path;
      return { path, content: readFileSync(join(vault, path), "utf8") };
    });
  const rows: string[][] = [["per note (µs)", `${links} links`, "no links"]];
  const texts = { linked: read(linked), plain: read(plain) };
  const parse = (t: { path: string; content: string }) => chunkDocument(documentFromFile({ path: t.path, producer: "raw", content: t.content, mtimeMs: 0 }));
  const bodies = (list: typeof texts.linked) => list.map((t) => ({ path: t.path, content: splitFrontmatter(t.content).body }));
  const extract = (t: { path: string; content: string }) => extractLinks(t.path, t.content); // content: the body, as upsert has it
  const split = { linked: bodies(texts.linked), plain: bodies(texts.plain) };
  // Warm the JIT on both functions first, then take each figure once.
  timePerNote(texts.linked, parse);
  timePerNote(split.linked, extract);
  const peer = { linked: timePerNote(texts.linked, parse), plain: timePerNote(texts.plain, parse) };
  const cost = { linked: timePerNote(split.linked, extract), plain: timePerNote(split.plain, extract) };
  rows.push(["documentFromFile + chunkDocument (peer)", num(peer.linked, 1), num(peer.plain, 1)]);
  rows.push(["extractLinks", num(cost.linked, 1), num(cost.plain, 1)]);
  // Builds alternate (plain, linked, plain, linked) and the faster of each pair counts: the
  // machine's other work moves a single build by tens of percent.
  const builds = { linked: [] as number[], plain: [] as number[] };
  for (let r = 0; r < 2; r++) {
    builds.plain.push((await build(plain)).docsPerS);
    builds.linked.push((await build(linked)).docsPerS);
  }
  rows.push(["full SQLite build, best of 2 (docs/s)", num(Math.max(...builds.linked), 0), num(Math.max(...builds.plain), 0)]);
  console.log(
    `links bench — ${notes} generated notes; load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")} (other work skews every figure)\n`,
  );
  console.log(table(rows));
  console.log(
    `\nextractLinks beside the per-note parse+chunk work: ${num((100 * cost.linked) / peer.linked, 1)}% with links, ${num((100 * cost.plain) / peer.plain, 1)}% without`,
  );
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
