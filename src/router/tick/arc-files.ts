// The arc files a tick writes: one record per hot or warm arc (arcs/arc-<id>.md, markdown with
// frontmatter) and hot-arcs.md, the table sessions read (Arc ID | Heat | Region | Status |
// What it is). Both are parsed back here for the next tick (its hysteresis), GET /feed and
// the pipeline report.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { splitFrontmatter } from "../index/document";
import { withFrontmatter } from "../vault/frontmatter";
import type { Arc, ArcStatus } from "./arcs";

export const ARCS_DIR = "arcs";
export const HOT_ARCS_FILE = "hot-arcs.md";
const ITEMS_LISTED = 20;

export const arcPath = (id: string) => `${ARCS_DIR}/${id}.md`;

const cell = (s: string) => s.replace(/\s+/g, " ").replace(/\|/g, "\\|").trim();
const listed = (a: Arc) => a.status !== "cold";

export function arcRecord(arc: Arc): string {
  const kinds: Record<string, number> = {};
  for (const i of arc.items) kinds[i.kind] = (kinds[i.kind] ?? 0) + 1;
  const fm = {
    id: arc.id,
    title: arc.title,
    type: "arc",
    heat: arc.heat,
    status: arc.status,
    region: arc.region,
    key: arc.key ?? undefined,
    first_seen: arc.start.toISOString(),
    last_activity: arc.end.toISOString(),
    items: arc.items.length,
    kinds,
    terms: arc.terms,
    tags: arc.tags.length ? arc.tags : undefined,
    generator: arc.generator,
  };
  const lines = arc.items
    .slice(-ITEMS_LISTED)
    .reverse()
    .map(
      (i) =>
        `- ${i.ts.toISOString()} @${i.kind}${i.severity && i.kind === "signal" ? `[${i.severity}]` : ""} (${i.source}) ${i.text.replace(/\s+/g, " ").trim().slice(0, 160)}`,
    );
  const more = arc.items.length > ITEMS_LISTED ? `\n\n…and ${arc.items.length - ITEMS_LISTED} earlier items.` : "";
  return withFrontmatter(fm, `# ${arc.title}\n\n${arc.summary}\n\n## Items (newest first)\n\n${lines.join("\n")}${more}`);
}

/** Hot and warm arcs, hottest first (then by id). */
export function listedArcs(arcs: Arc[]): Arc[] {
  return arcs.filter(listed).sort((a, b) => b.heat - a.heat || (a.id < b.id ? -1 : 1));
}

export function hotArcsMarkdown(arcs: Arc[], asOf: Date): string {
  const rows = listedArcs(arcs).map((a) => `| ${a.id} | ${a.heat.toFixed(1)} | ${cell(a.region)} | ${a.status} | **${cell(a.title)}** — ${cell(a.summary)} |`);
  const fm = { id: "hot-arcs", title: "Hot arcs", type: "hot-arcs", generated: asOf.toISOString(), arcs: arcs.length, listed: rows.length };
  const table = ["| Arc ID | Heat | Region | Status | What it is |", "|---|---|---|---|---|", ...rows].join("\n");
  const note = rows.length === 0 ? "\n\nNo arc is warm right now." : "";
  return withFrontmatter(fm, `# Hot arcs\n\n${table}${note}`);
}

export interface HotArcRow {
  id: string;
  heat: number;
  region: string;
  status: string;
  title: string;
  summary: string;
}

/** The rows of hot-arcs.md's table (any markdown table with those five columns). */
export function parseHotArcs(text: string): HotArcRow[] {
  const rows: HotArcRow[] = [];
  for (const line of splitFrontmatter(text).body.split("\n")) {
    if (!line.startsWith("|") || /^\|\s*(Arc ID|-)/.test(line)) continue;
    const cells = line
      .slice(1, line.trimEnd().endsWith("|") ? line.trimEnd().length - 1 : undefined)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim().replace(/\\\|/g, "|"));
    if (cells.length < 5) continue;
    const [id, heat, region, status, what] = cells as [string, string, string, string, string];
    const m = /^\*\*(.*?)\*\*\s*(?:—\s*(.*))?$/.exec(what);
    rows.push({ id, heat: Number(heat) || 0, region, status, title: m?.[1] ?? what, summary: m?.[2] ?? "" });
  }
  return rows;
}

/** Last tick's status of each arc record (for hysteresis), and the record paths present. */
export async function readArcStatuses(vault: string): Promise<{ statuses: Map<string, ArcStatus>; paths: string[] }> {
  const names = (await readdir(join(vault, ARCS_DIR)).catch(() => [] as string[])).filter((n) => /^arc-[0-9a-f]+\.md$/.test(n)).sort();
  const statuses = new Map<string, ArcStatus>();
  for (const name of names) {
    const { data } = splitFrontmatter(await readFile(join(vault, ARCS_DIR, name), "utf8").catch(() => ""));
    if (typeof data.id === "string" && (data.status === "hot" || data.status === "warm" || data.status === "cold")) statuses.set(data.id, data.status);
  }
  return { statuses, paths: names.map((n) => `${ARCS_DIR}/${n}`) };
}
