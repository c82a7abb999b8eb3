// One index build in a process of its own, so its time and the RSS it leaves behind are the
// build's alone: `bun build-child.ts brain|floor VAULT OUT` — brain: the project's refreshFolder
// into a SQLite index under the data directory OUT, at its default batch (256, the tick's);
// floor: index-floor.ts into the file OUT. Prints {docs, ms, rssMb} as JSON.

import { refreshFolder } from "../../../src/router/index/refresh.ts";
import { openSqliteIndex } from "../../../src/router/index/sqlite/store.ts";
import { buildFloor } from "./index-floor.ts";

const [kind, vault, out] = process.argv.slice(2) as [string, string, string];
let docs: number;
let ms: number;
if (kind === "floor") {
  ({ docs, ms } = await buildFloor(vault, out));
} else {
  const store = await openSqliteIndex({ dataDir: out });
  const t0 = performance.now();
  const c = await refreshFolder(store, { vault });
  ms = performance.now() - t0;
  docs = c.added + c.updated;
  Bun.gc(true);
  console.log(JSON.stringify({ docs, ms, rssMb: process.memoryUsage().rss / 1048576 }));
  await store.close();
  process.exit(0);
}
Bun.gc(true);
console.log(JSON.stringify({ docs, ms, rssMb: process.memoryUsage().rss / 1048576 }));
