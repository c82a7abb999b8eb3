// Reading what search found: GET /notes/{path} (one note, ETag), POST /notes/batch (several),
// GET /notes (changed since), GET /notes/{path}/context (the note and its linked notes).
// The rules live in ../notes/; these routes map HTTP to those calls.
import { createRoute, z } from "@hono/zod-openapi";
import { errorResponse } from "../../common/errors";
import { etagMatches, etagOf } from "../../common/http/etag";
import type { RouterApp } from "../app-types";
import { PRODUCERS } from "../index/types";
import { CONTEXT_CHARS, CONTEXT_DEPTH, noteContext } from "../notes/context";
import { NOTE_PATH_MAX_CHARS, readNoteFile } from "../notes/file";
import { BATCH_NOTE_CHARS, BATCH_TOTAL_CHARS, getNotes, MAX_BATCH_PATHS, NOTE_MAX_CHARS } from "../notes/read";
import { CURSOR_MAX_CHARS, RECENT_LIMIT, RECENT_TAG_MAX_CHARS, recentNotes } from "../notes/recent";
import { lineRange, noteViews } from "../notes/view";
import { authResponses } from "./schemas";

const NoteRef = z.object({
  path: z.string(),
  title: z.string(),
  producer: z.enum(PRODUCERS),
  updated_at: z.string().openapi({ format: "date-time" }),
});

const NoteLink = z
  .object({
    kind: z.enum(["wiki", "path"]).openapi({ description: "`[[wikilink]]` or relative markdown link" }),
    target: z.string().openapi({ description: "a wikilink's target (lower-cased, no #heading or |alias), a markdown link's vault path" }),
    path: z.string().nullable().openapi({ description: "the note it resolves to; null when it dangles" }),
    title: z.string().nullable(),
  })
  .openapi("NoteLink");

export const Note = z
  .object({
    path: z.string().openapi({ example: "raw/runbooks/deploy.md" }),
    producer: z.enum(PRODUCERS),
    title: z.string(),
    tags: z.array(z.string()),
    frontmatter: z.record(z.string(), z.unknown()).openapi({ description: "the parsed YAML frontmatter ({} when none)" }),
    updated_at: z.string().openapi({ format: "date-time", description: "the file's modification time" }),
    hash: z.string().openapi({ description: "sha256 of the file's content; the ETag" }),
    indexed: z.boolean().openapi({ description: "the index holds the note at this content" }),
    body: z.string().openapi({ description: "the text after the frontmatter: whole, or the lines asked for, cut at max_chars" }),
    from_line: z.number().int().openapi({ description: "first body line returned (1 = the first line after the frontmatter)" }),
    to_line: z.number().int(),
    total_lines: z.number().int(),
    total_chars: z.number().int().openapi({ description: "characters of the whole body" }),
    truncated: z.boolean(),
    truncated_by: z.enum(["lines", "max_chars"]).nullable(),
    links: z.array(NoteLink).openapi({ description: "outgoing links: wikilinks, then markdown links, each in the order written" }),
    backlinks: z.array(NoteRef).openapi({ description: "indexed notes linking here, newest first" }),
  })
  .openapi("Note");
export type Note = z.infer<typeof Note>;

const PathParam = z.object({
  path: z.string().min(1).openapi({ description: "vault-relative path; slashes as they are (raw/a/b.md) or encoded", example: "raw/runbooks/deploy.md" }),
});

const LINES = /^(\d+)(?:-(\d*))?$/;
const GetQuery = z.object({
  lines: z
    .string()
    .regex(LINES, "lines: START-END, START- or START (body lines from 1)")
    .refine((v) => Number(v.split("-")[0]) >= 1, "lines: start at 1")
    .refine((v) => {
      const [from, to] = v.split("-");
      return !to || Number(to) >= Number(from);
    }, "lines: the end comes before the start")
    .optional()
    .openapi({ description: "body lines START-END (inclusive), START- or START; 1 is the first line after the frontmatter", example: "10-40" }),
  max_chars: z.coerce
    .number()
    .int()
    .min(1)
    .max(NOTE_MAX_CHARS)
    .optional()
    .openapi({ description: "cut the body at this many characters (truncated_by says so)" }),
});

const getRoute = createRoute({
  method: "get",
  path: "/notes/{path}",
  operationId: "getNote",
  tags: ["notes"],
  summary: "Read one note",
  description: "One vault note the index covers: frontmatter, title, tags, body, links and backlinks. `If-None-Match` with its ETag answers 304.",
  security: [{ bearer: [] }],
  request: { params: PathParam, query: GetQuery, headers: z.object({ "if-none-match": z.string().optional() }) },
  responses: {
    200: {
      description: "The note",
      headers: { ETag: { schema: { type: "string" }, description: '"<hash>"' } },
      content: { "application/json": { schema: Note } },
    },
    304: { description: "Unchanged since the If-None-Match ETag" },
    400: errorResponse("A path outside the vault, through a symlink, or bad lines / max_chars"),
    404: errorResponse("No such note, or not a file the index covers"),
    ...authResponses,
  },
});

const ContextNote = NoteRef.extend({
  tags: z.array(z.string()),
  distance: z.number().int().openapi({ description: "link hops from the asked note (0 = the note itself)" }),
  via: z.object({ from: z.string(), relation: z.enum(["links_to", "linked_from"]) }).nullable(),
  body: z.string(),
  truncated: z.boolean(),
}).openapi("ContextNote");

export const NoteContext = z
  .object({
    path: z.string(),
    depth: z.number().int(),
    max_chars: z.number().int(),
    total_chars: z.number().int(),
    notes: z.array(ContextNote).openapi({ description: "the note first, then by link distance, then newest first" }),
    left_out: z.array(NoteRef.extend({ distance: z.number().int(), reason: z.enum(["max_chars", "unreadable"]) })),
    capped: z.boolean().openapi({ description: "the walk reached its note limit (200) and stopped widening" }),
  })
  .openapi("NoteContext");
export type NoteContext = z.infer<typeof NoteContext>;

const contextRoute = createRoute({
  method: "get",
  path: "/notes/{path}/context",
  operationId: "getNoteContext",
  tags: ["notes"],
  summary: "A note with the notes it links to and that link to it",
  security: [{ bearer: [] }],
  request: {
    params: PathParam,
    query: z.object({
      depth: z.coerce.number().int().min(1).max(CONTEXT_DEPTH.max).default(CONTEXT_DEPTH.default).openapi({ description: "link hops to follow, 1–3" }),
      max_chars: z.coerce
        .number()
        .int()
        .min(CONTEXT_CHARS.min)
        .max(CONTEXT_CHARS.max)
        .default(CONTEXT_CHARS.default)
        .openapi({ description: "budget for all bodies together" }),
    }),
  },
  responses: {
    200: { description: "The note and its neighbourhood", content: { "application/json": { schema: NoteContext } } },
    400: errorResponse("Bad path, depth or max_chars"),
    404: errorResponse("No such note"),
    ...authResponses,
  },
});

export const NotesBatchRequest = z
  .object({
    paths: z
      .array(z.string().min(1).max(NOTE_PATH_MAX_CHARS))
      .min(1)
      .max(MAX_BATCH_PATHS)
      .optional()
      .openapi({ description: `vault paths, at most ${MAX_BATCH_PATHS}` }),
    glob: z
      .string()
      .min(1)
      .max(NOTE_PATH_MAX_CHARS)
      .optional()
      .openapi({ description: "a glob over indexed paths (*, **, ?, [ab], {a,b})", example: "left/decisions/*.md" }),
    max_chars: z
      .number()
      .int()
      .min(1)
      .max(BATCH_NOTE_CHARS.max)
      .optional()
      .openapi({ description: `per note (default ${BATCH_NOTE_CHARS.default})` }),
    max_total_chars: z
      .number()
      .int()
      .min(1)
      .max(BATCH_TOTAL_CHARS.max)
      .optional()
      .openapi({ description: `all bodies together (default ${BATCH_TOTAL_CHARS.default})` }),
  })
  .refine((b) => (b.paths === undefined) !== (b.glob === undefined), { message: "give either paths or glob, not both" })
  .openapi("NotesBatchRequest");

export const NotesBatchResponse = z
  .object({
    notes: z.array(Note),
    errors: z
      .array(z.object({ path: z.string(), code: z.string(), message: z.string() }))
      .openapi({ description: "named paths not read (not found, refused)" }),
    left_out: z
      .array(z.object({ path: z.string(), reason: z.enum(["max_notes", "max_total_chars"]) }))
      .openapi({ description: "not returned to stay within the limits (first 100)" }),
    left_out_count: z.number().int(),
    matched: z.number().int().optional().openapi({ description: "for a glob: indexed notes it matched" }),
  })
  .openapi("NotesBatchResponse");

const batchRoute = createRoute({
  method: "post",
  path: "/notes/batch",
  operationId: "getNotesBatch",
  tags: ["notes"],
  summary: "Read several notes in one call",
  description: "At most 50 notes and max_total_chars of bodies; what was left out is listed.",
  security: [{ bearer: [] }],
  request: { body: { required: true, content: { "application/json": { schema: NotesBatchRequest } } } },
  responses: {
    200: { description: "The notes read, errors per path, and what was left out", content: { "application/json": { schema: NotesBatchResponse } } },
    400: errorResponse("Neither or both of paths and glob, too many paths, or a glob outside the vault"),
    ...authResponses,
  },
});

/** An ISO 8601 time (with an offset or Z) or a date; nothing looser (no "yesterday"). */
const Since = z.union([z.string().datetime({ offset: true }), z.string().date()]);

export const RecentNotes = z
  .object({
    notes: z.array(NoteRef.extend({ tags: z.array(z.string()), hash: z.string() })),
    next_cursor: z.string().nullable().openapi({ description: "pass as cursor for the next page; null on the last" }),
  })
  .openapi("RecentNotes");
export type RecentNotes = z.infer<typeof RecentNotes>;

const recentRoute = createRoute({
  method: "get",
  path: "/notes",
  operationId: "listNotes",
  tags: ["notes"],
  summary: "Notes changed since a time, newest first",
  security: [{ bearer: [] }],
  request: {
    query: z.object({
      since: Since.optional().openapi({ description: "ISO 8601 time or date (UTC midnight); notes updated at or after it", example: "2026-03-01T09:00:00Z" }),
      producer: z.enum(PRODUCERS).optional(),
      tag: z.string().min(1).max(RECENT_TAG_MAX_CHARS).optional(),
      prefix: z.string().min(1).max(NOTE_PATH_MAX_CHARS).optional().openapi({ description: "path prefix, e.g. raw/runbooks/" }),
      limit: z.coerce.number().int().min(1).max(RECENT_LIMIT.max).default(RECENT_LIMIT.default),
      cursor: z.string().max(CURSOR_MAX_CHARS).optional(),
    }),
  },
  responses: {
    200: { description: "A page of notes", content: { "application/json": { schema: RecentNotes } } },
    400: errorResponse("Bad since, producer, limit or cursor"),
    ...authResponses,
  },
});

/**
 * The Hono path for a documented one: {path} may hold slashes; a note's own route never takes
 * one ending in "/context" (a note's path ends in its extension), which is the context route's.
 */
const wide = <R extends { path: string }>(route: R): R => ({
  ...route,
  path: route.path.endsWith("/context") ? route.path.replace("{path}", "{path{.+}}") : route.path.replace("{path}", "{path{.+(?<!/context)}}"),
  hide: true,
});

export function registerNotes(app: RouterApp): void {
  app.openapi(recentRoute, async (c) => {
    const q = c.req.valid("query");
    return c.json(await recentNotes(c.env.deps.index, { ...q, since: q.since ? new Date(q.since) : undefined }), 200);
  });
  app.openapi(batchRoute, async (c) => c.json(await getNotes(c.env.deps.notes, c.req.valid("json")), 200));
  // The documents name {path}; the handlers match paths holding slashes.
  app.openAPIRegistry.registerPath(contextRoute);
  app.openAPIRegistry.registerPath(getRoute);
  app.openapi(wide(contextRoute), async (c) => {
    const { depth, max_chars } = c.req.valid("query");
    return c.json(await noteContext(c.env.deps.notes, c.req.valid("param").path, { depth, maxChars: max_chars }), 200);
  });
  app.openapi(wide(getRoute), async (c) => {
    const { lines, max_chars } = c.req.valid("query");
    const file = await readNoteFile(c.env.deps.notes.vault, c.req.valid("param").path);
    c.header("ETag", etagOf(file.hash));
    if (etagMatches(c.req.valid("header")["if-none-match"], file.hash)) return c.body(null, 304);
    const [note] = await noteViews(c.env.deps.notes, [file], () => ({ lines: lineRange(lines), maxChars: max_chars }));
    return c.json(note!, 200);
  });
}
