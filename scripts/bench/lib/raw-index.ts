// Builds and refreshes an IndexStore over a vault's raw/ for the benchmarks, through the
// project's own incremental refresh (src/router/index/refresh.ts: refreshFolder). A stand-in
// walker (walkRefresh: the same mtime → hash → upsert logic, written here before refresh.ts
// landed) stays available with BENCH_REFRESH=walker, to compare the two.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { documentFromFile } from "../../../src/router/index/document.ts";
import { refreshFolder } from "../../../src/router/index/refresh.ts";
import type { IndexStore } from "../../../src/router/index/types.ts";

export interface RefreshResult {
  /** "refreshFolder" (the project's module) or "bench walker" (this file's stand-in). */
  source: string;
  files: number;
  changed: number;
  removed: number;
  ms: number;
}

/** Vault-relative paths (forward slashes) of every .md file under raw/, sorted. */
export function rawFiles(vault: string): string[] {
  const root = join(vault, "raw");
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".md"))
    .map((e) => relative(vault, join(e.parentPath, e.name)).split(sep).join("/"))
    .sort();
}

/**
 * Walk raw/ and bring the index in step with it. `concurrency` > 1 overlaps upserts (useful
 * for Postgres, whose upserts are network round trips; SQLite's are synchronous anyway).
 */
export async function walkRefresh(store: IndexStore, vault: string, concurrency = 1): Promise<RefreshResult> {
  const t0 = performance.now();
  const known = await store.fingerprints("raw");
  const files = rawFiles(vault);
  let changed = 0;
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const path = files[next++]!;
      const abs = join(vault, path);
      const mtimeMs = statSync(abs).mtimeMs;
      const fp = known.get(path);
      known.delete(path);
      if (fp && fp.mtimeMs === mtimeMs) continue;
      const content = readFileSync(abs, "utf8");
      if (await store.upsert(documentFromFile({ path, producer: "raw", content, mtimeMs }))) changed++;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  let removed = 0;
  for (const gone of known.keys()) if (await store.remove(gone)) removed++;
  return { source: "bench walker", files: files.length, changed, removed, ms: performance.now() - t0 };
}

/** The project's refreshFolder over raw/ (or walkRefresh with BENCH_REFRESH=walker). */
export async function refreshRaw(store: IndexStore, vault: string, concurrency = 8, embed?: (texts: string[]) => Promise<number[][]>): Promise<RefreshResult> {
  if (process.env.BENCH_REFRESH === "walker" && !embed) return walkRefresh(store, vault, concurrency);
  const t0 = performance.now();
  const c = await refreshFolder(store, { vault, concurrency, embed });
  const ms = performance.now() - t0;
  return { source: "refreshFolder", files: c.added + c.updated + c.unchanged, changed: c.added + c.updated, removed: c.removed, ms };
}
