// `bun run bench [name…]`: runs every scripts/bench/*.ts (this file and lib/ aside), or only the
// named ones, each as its own subprocess with its output streamed as it comes. Benches are found
// by listing the directory, so adding a file is all it takes to add one.
import { readdirSync } from "node:fs";
import { basename, join } from "node:path";

const DIR = import.meta.dir;

const available = readdirSync(DIR, { withFileTypes: true })
  .filter((e) => e.isFile() && e.name.endsWith(".ts") && e.name !== "index.ts" && !e.name.endsWith(".test.ts"))
  .map((e) => basename(e.name, ".ts"))
  .sort();

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`usage: bun run bench [name…]   (available: ${available.join(", ") || "none"})`);
  process.exit(0);
}
// Flags (`--large`, …) go to every selected bench: `bun run bench search --large`.
const flags = process.argv.slice(2).filter((a) => a.startsWith("-"));
const requested = process.argv
  .slice(2)
  .filter((a) => !a.startsWith("-"))
  .map((a) => basename(a, ".ts"));
const unknown = requested.filter((r) => !available.includes(r));
if (unknown.length > 0) {
  console.error(`unknown bench: ${unknown.join(", ")}; available: ${available.join(", ") || "(none)"}`);
  process.exit(2);
}
const selected = requested.length > 0 ? requested : available;
if (selected.length === 0) {
  console.error(`no benches in ${DIR}`);
  process.exit(2);
}

// Ctrl-C reaches the children through the terminal's process group; let them clean up and report.
process.on("SIGINT", () => {});

const summary: { name: string; code: number; seconds: number }[] = [];
for (const name of selected) {
  console.log(`\n=== bench: ${name} ===`);
  const t0 = performance.now();
  const proc = Bun.spawn({
    cmd: [process.execPath, join(DIR, `${name}.ts`), ...flags],
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  });
  const code = await proc.exited;
  summary.push({ name, code, seconds: (performance.now() - t0) / 1000 });
}

if (summary.length > 1) {
  console.log("\n=== benches ===");
  for (const s of summary) {
    console.log(`${s.name.padEnd(12)} ${s.code === 0 ? "ran" : `exit ${s.code}`}  ${s.seconds.toFixed(1)} s`);
  }
}
process.exit(summary.some((s) => s.code !== 0) ? 1 : 0);
