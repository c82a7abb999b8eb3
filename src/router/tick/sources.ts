// Which vault files belong to which index producer (spec: pipeline "index" stage), and which
// notes a tick reads for inline markers. One table, used by the tick's index refresh, the
// background indexer and the pipeline report alike.
import type { Producer } from "../index/types";
import { isMarkdown } from "../vault/walk";

/** Folders a producer's files live in (for capped existence checks), and its test on a path. */
export interface ProducerSources {
  producer: Producer;
  roots: string[];
  matches: (path: string) => boolean;
}

const under = (dir: string) => (p: string) => p.startsWith(`${dir}/`);
const topLevel = (dir: string) => (p: string) => under(dir)(p) && !p.slice(dir.length + 1).includes("/");

export const PRODUCER_SOURCES: readonly ProducerSources[] = [
  { producer: "raw", roots: ["raw"], matches: (p) => under("raw")(p) && /\.(md|markdown|txt)$/i.test(p) },
  { producer: "ingest", roots: ["ingest"], matches: (p) => under("ingest")(p) && isMarkdown(p) },
  { producer: "lessons", roots: ["left/reference"], matches: (p) => /^left\/reference\/lessons-[^/]*\.md$/.test(p) },
  { producer: "arcs", roots: ["arcs", "hot-arcs.md"], matches: (p) => p === "hot-arcs.md" || (topLevel("arcs")(p) && isMarkdown(p)) },
  { producer: "signals", roots: ["amygdala", "signals.md"], matches: (p) => p === "signals.md" || (topLevel("amygdala")(p) && isMarkdown(p)) },
  { producer: "feed", roots: ["brain-feed"], matches: (p) => topLevel("brain-feed")(p) && isMarkdown(p) },
  {
    producer: "markers",
    roots: ["left/decisions", "daily", "projects"],
    matches: (p) => (topLevel("left/decisions")(p) && isMarkdown(p)) || (under("daily")(p) && isMarkdown(p)) || /^projects\/[^/]+\/BLOCKS\.md$/.test(p),
  },
];

export function producerOf(path: string): Producer | undefined {
  return PRODUCER_SOURCES.find((s) => s.matches(path))?.producer;
}

/** Areas the system writes (or ingest routed already): no inline markers are harvested there. */
const NOT_HARVESTED = /^(ingest|brain-feed|amygdala|arcs|bundles|left\/decisions)\/|^(hot-arcs|signals)\.md$|^left\/reference\/lessons-[^/]*\.md$/;

export const isHarvestable = (path: string) => isMarkdown(path) && !NOT_HARVESTED.test(path);
