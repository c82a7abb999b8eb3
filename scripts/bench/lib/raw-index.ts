// An IndexStore brought in step with a vault's raw/ for the benchmarks, through the index's own
// incremental refresh (refreshFolder, the tick's), timed.
import { existsSync, readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { type IndexStore, refreshFolder } from "../../../src/router/index/index.ts";

export interface RefreshResult {
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

/** refreshFolder over raw/, timed; `concurrency` files a batch (refreshFolder's own default, the tick's, unless given). */
export async function refreshRaw(store: IndexStore, vault: string, concurrency?: number): Promise<RefreshResult> {
  const t0 = performance.now();
  const c = await refreshFolder(store, { vault, concurrency });
  const ms = performance.now() - t0;
  return { source: "refreshFolder", files: c.added + c.updated + c.unchanged, changed: c.added + c.updated, removed: c.removed, ms };
}
