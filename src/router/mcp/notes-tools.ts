// The router's MCP tools for reading notes: get, multi_get, recent, context — the calls and
// limits of GET /notes/{path}, POST /notes/batch, GET /notes and GET /notes/{path}/context.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { RouterDeps } from "../app-types";
import { PRODUCERS } from "../index/types";
import { CONTEXT_CHARS, CONTEXT_DEPTH, noteContext } from "../notes/context";
import { NOTE_PATH_MAX_CHARS } from "../notes/file";
import { BATCH_NOTE_CHARS, BATCH_TOTAL_CHARS, getNote, getNotes, MAX_BATCH_NOTES, MAX_BATCH_PATHS, NOTE_MAX_CHARS } from "../notes/read";
import { CURSOR_MAX_CHARS, RECENT_LIMIT, RECENT_TAG_MAX_CHARS, recentNotes } from "../notes/recent";
import { answer } from "./answer";

export function registerNoteTools(server: McpServer, deps: RouterDeps): void {
  server.registerTool(
    "get",
    {
      description:
        "Read one vault note by path (as search hits name it): frontmatter, title, tags, body, outgoing links and backlinks. " +
        "Optional body line range (from_line/to_line, 1 = first line after the frontmatter) and max_chars; the answer says when it was cut.",
      inputSchema: {
        path: z.string().min(1).max(NOTE_PATH_MAX_CHARS),
        from_line: z.number().int().min(1).optional(),
        to_line: z.number().int().min(1).optional(),
        max_chars: z.number().int().min(1).max(NOTE_MAX_CHARS).optional(),
      },
      annotations: { readOnlyHint: true },
    },
    ({ path, from_line, to_line, max_chars }) =>
      answer(() => getNote(deps.notes, path, { lines: from_line || to_line ? { from: from_line ?? 1, to: to_line } : undefined, maxChars: max_chars })),
  );

  server.registerTool(
    "multi_get",
    {
      description: `Read several notes in one call, by paths (at most ${MAX_BATCH_PATHS}) or a glob over indexed paths (e.g. "left/decisions/*.md"). Returns at most ${MAX_BATCH_NOTES} notes within max_total_chars (default ${BATCH_TOTAL_CHARS.default}); what was left out, and paths not found, are listed.`,
      inputSchema: {
        paths: z.array(z.string().min(1).max(NOTE_PATH_MAX_CHARS)).min(1).max(MAX_BATCH_PATHS).optional(),
        glob: z.string().min(1).max(NOTE_PATH_MAX_CHARS).optional(),
        max_chars: z.number().int().min(1).max(BATCH_NOTE_CHARS.max).optional(),
        max_total_chars: z.number().int().min(1).max(BATCH_TOTAL_CHARS.max).optional(),
      },
      annotations: { readOnlyHint: true },
    },
    (args) => answer(() => getNotes(deps.notes, args)),
  );

  server.registerTool(
    "recent",
    {
      description:
        "Notes changed since a time (ISO 8601), newest first, a page at a time (pass next_cursor back as cursor). Filters: producer, tag, path prefix.",
      inputSchema: {
        since: z.union([z.string().datetime({ offset: true }), z.string().date()]).optional(),
        producer: z.enum(PRODUCERS).optional(),
        tag: z.string().min(1).max(RECENT_TAG_MAX_CHARS).optional(),
        prefix: z.string().min(1).max(NOTE_PATH_MAX_CHARS).optional(),
        limit: z.number().int().min(1).max(RECENT_LIMIT.max).default(RECENT_LIMIT.default),
        cursor: z.string().max(CURSOR_MAX_CHARS).optional(),
      },
      annotations: { readOnlyHint: true },
    },
    ({ since, ...rest }) => answer(() => recentNotes(deps.index, { ...rest, since: since ? new Date(since) : undefined })),
  );

  server.registerTool(
    "context",
    {
      description: `A note with the notes it links to and that link to it, breadth-first to depth hops (1–${CONTEXT_DEPTH.max}), ranked by link distance then recency, bodies within max_chars (default ${CONTEXT_CHARS.default}); the rest listed as left_out.`,
      inputSchema: {
        path: z.string().min(1).max(NOTE_PATH_MAX_CHARS),
        depth: z.number().int().min(1).max(CONTEXT_DEPTH.max).default(CONTEXT_DEPTH.default),
        max_chars: z.number().int().min(CONTEXT_CHARS.min).max(CONTEXT_CHARS.max).default(CONTEXT_CHARS.default),
      },
      annotations: { readOnlyHint: true },
    },
    ({ path, depth, max_chars }) => answer(() => noteContext(deps.notes, path, { depth, maxChars: max_chars })),
  );
}
