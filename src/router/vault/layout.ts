// The vault's layout (spec: knowledge-router, Vault layout), and the version of the
// .brain-schema file that describes it. Folders this project adds are listed with why.
export const SCHEMA_FILE = ".brain-schema";
const SCHEMA_VERSION = 1;

export const VAULT_FOLDERS: ReadonlyArray<{ path: string; meaning: string }> = [
  { path: "left/reference", meaning: "the only place where lesson logs may sit" },
  { path: "left/decisions", meaning: "decision records (ADR-NNNN-slug.md)" },
  { path: "raw", meaning: "files that the index is built over; refreshed by a tick" },
  { path: "brain-feed", meaning: "feed entry files; each must parse as a feed entry to count" },
  { path: "brain-feed/markers", meaning: "marker journal: one JSON line per accepted marker, one file per day (YYYY-MM-DD.jsonl)" },
  { path: "brain-feed/ticks/requested", meaning: "tick requests waiting for the worker (and the one running)" },
  { path: "brain-feed/ticks/completed", meaning: "ticks that finished" },
  { path: "brain-feed/ticks/failed", meaning: "ticks that failed, with their error_tail" },
  { path: "daily", meaning: "daily notes (milestones with no project)" },
  { path: "amygdala", meaning: "signal files" },
  { path: "arcs", meaning: "arc records written by the tick (arc-<id>.md), listed in hot-arcs.md" },
  { path: "bundles", meaning: "dispatch bundles (POST /dispatch)" },
  { path: "ingest", meaning: "ingested notes (POST /ingest), one folder per day" },
  { path: "projects", meaning: "project folders; a milestone scoped to one lands in its BLOCKS.md" },
];

const VAULT_FILES: ReadonlyArray<{ path: string; meaning: string }> = [
  { path: "hot-arcs.md", meaning: "written by the system when arcs exist" },
  { path: "signals.md", meaning: "written by the system when signal files exist; has a TTL sweep" },
  { path: SCHEMA_FILE, meaning: "layout schema; the scaffold command is its authoritative writer" },
];

export function schemaDocument(): string {
  return `${JSON.stringify({ schema: "brain-vault", version: SCHEMA_VERSION, folders: VAULT_FOLDERS, files: VAULT_FILES }, null, 2)}\n`;
}
