// router-cli import DIR [--tag T]... [--source S] [--batch N] [--json]: imports a folder of
// markdown notes into the vault through POST /ingest/batch — each note ingested as POST /ingest
// would (classified, written atomically, indexed at once, skipped when imported before), so an
// interrupted import is run again. A progress bar on a terminal (stderr), plain lines when piped.
// Exit 0 when every note is in, 2 when some were refused (listed), 1 on a hard failure.
import { stat } from "node:fs/promises";
import { relative } from "node:path";
import { defineCommand } from "citty";
import { consola } from "consola";
import { type ImportCounts, importFolder } from "../../src/router/ingest/import";
import { usage } from "../_errors";
import { client, connectionArgs } from "./_context";

export default defineCommand({
  meta: { name: "import", description: "Import a folder of markdown notes (bulk ingest; notes imported before are skipped)" },
  args: {
    ...connectionArgs,
    dir: { type: "positional", required: true, valueHint: "DIR", description: "folder whose *.md / *.markdown files are imported (recursively)" },
    tag: { type: "string", alias: "t", description: "a tag for every note (repeat for several)" },
    source: { type: "string", default: "import", description: "the source recorded in each note" },
    batch: { type: "string", default: "500", description: "notes per request (1–1000)" },
    json: { type: "boolean", description: "print the report as JSON" },
  },
  async run({ args }) {
    const batchSize = Number(args.batch);
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 1000) usage(`--batch ${JSON.stringify(args.batch)}: give a whole number from 1 to 1000`);
    const st = await stat(args.dir).catch(() => null);
    if (!st?.isDirectory()) usage(`${args.dir} is not a folder`);
    const tags = ([] as string[]).concat((args.tag as string | string[] | undefined) ?? []).filter(Boolean);
    const progress = progressReporter(process.stderr);
    let report;
    try {
      report = await importFolder(client(args, 120_000), args.dir, { tags, source: args.source, batchSize, onProgress: progress.update });
    } finally {
      progress.end();
    }
    if (args.json) {
      console.log(JSON.stringify(report));
    } else {
      const rate = report.seconds > 0 ? Math.round(report.total / report.seconds) : report.total;
      const line = `imported ${n(report.total)} note(s) from ${relative(process.cwd(), args.dir) || "."}: ${n(report.created)} new, ${n(report.duplicates)} already there, ${n(report.failed)} refused (${report.seconds.toFixed(1)} s, ${n(rate)} notes/s)`;
      (report.failed > 0 ? consola.warn : consola.success)(line);
      for (const f of report.failures.slice(0, 50)) console.error(`${f.file}: ${f.status || "-"} ${f.code}: ${f.message}`);
      if (report.failures.length > 50) console.error(`… and ${report.failures.length - 50} more (--json lists them all)`);
    }
    // spec: exit 2 degraded (some note refused).
    return report.failed > 0 ? 2 : 0;
  },
});

const n = (x: number) => x.toLocaleString("en-US");

/**
 * A bar redrawn in place on a terminal; when piped, a plain line at every tenth of the way
 * (and at most every 2 s otherwise), so logs stay short.
 */
function progressReporter(out: NodeJS.WriteStream): { update: (c: ImportCounts) => void; end: () => void } {
  const t0 = performance.now();
  let drawn = false;
  let lastTenth = 0;
  let lastLine = 0;
  const text = (c: ImportCounts) => {
    const s = (performance.now() - t0) / 1000;
    const rate = s > 0 ? Math.round(c.done / s) : 0;
    return `${n(c.done)}/${n(c.total)} notes, ${n(c.created)} new, ${n(c.duplicates)} already there, ${n(c.failed)} refused, ${n(rate)}/s`;
  };
  return {
    update(c) {
      const share = c.total > 0 ? c.done / c.total : 1;
      if (out.isTTY) {
        const width = 30;
        const full = Math.round(share * width);
        out.write(`\r[${"#".repeat(full)}${"-".repeat(width - full)}] ${String(Math.floor(share * 100)).padStart(3)}% ${text(c)}\x1b[K`);
        drawn = true;
        return;
      }
      const tenth = Math.floor(share * 10);
      const now = performance.now();
      if (tenth > lastTenth || now - lastLine > 2000 || c.done === c.total) {
        lastTenth = tenth;
        lastLine = now;
        out.write(`import: ${text(c)}\n`);
      }
    },
    end() {
      if (drawn) out.write("\n");
      drawn = false;
    },
  };
}
