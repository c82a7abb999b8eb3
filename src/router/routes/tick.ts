// POST /tick (enqueue a tick) and GET /tick/{id} (its record).
import { createRoute, z } from "@hono/zod-openapi";
import { errorResponse, HttpError } from "../../common/errors";
import type { RouterApp } from "../app-types";
import { tickFinished } from "../tick/queue";
import { TickRequest } from "../tick/schema";
import { authResponses, storageFullResponses } from "./schemas";

const flag = z.string().optional().openapi({ description: "true when present empty or as 1/true/yes; 0/false/no is false" });

const Counts = z.record(z.string(), z.number()).openapi("TickCounts", {
  description:
    "notes_scanned, notes_read, markers_harvested, markers_already_harvested, markers_refused, arc_items, arcs, arcs_hot, arcs_warm, lessons_in_feed, " +
    "signals_live, signals_swept, feed_entries, files_written, files_deleted, index_upserted, index_removed, index_unchanged",
});

export const TickRecord = z
  .object({
    tick_id: z.string().openapi({ example: "9f1c2a7e4b3d" }),
    status: z.enum(["queued", "running", "succeeded", "failed"]),
    trigger: z.enum(["api", "scheduler", "mcp"]),
    dry_run: z.boolean(),
    no_ai: z.boolean(),
    as_of: z.string().openapi({ format: "date-time" }),
    requested_at: z.string().openapi({ format: "date-time" }),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    duration_ms: z.number().nullable(),
    counts: Counts.nullable(),
    phases_ms: z.record(z.string(), z.number()).nullable().openapi({
      description:
        "milliseconds per step: index_raw (the vault walked once, each changed note read once for the harvest and raw/'s index; harvest in a dry run), arcs, signals, feed, apply, index",
    }),
    warnings: z.array(z.string()),
    plan: z
      .object({ writes: z.array(z.string()), deletes: z.array(z.string()) })
      .nullable()
      .openapi({ description: "vault paths written and deleted (a dry run: what it would write)" }),
    error_tail: z.string().nullable().openapi({ description: "the failing error's last lines" }),
  })
  .openapi("TickRecord");
export type TickRecord = z.infer<typeof TickRecord>;

const enqueueRoute = createRoute({
  method: "post",
  path: "/tick",
  operationId: "createTick",
  tags: ["ticks"],
  summary: "Enqueue a tick",
  description:
    "Writes brain-feed/ticks/requested/<YYYYMMDDTHHMMSSZ>-<id>.json (not for a dry run); the worker runs one tick at a time and moves the file to completed/ or failed/. " +
    "Flags come in the body or as query flags (?dry_run&no_ai&wait); the body wins.",
  security: [{ bearer: [] }],
  request: {
    query: z.object({ dry_run: flag, no_ai: flag, wait: flag }),
    body: { required: false, content: { "application/json": { schema: TickRequest } } },
  },
  responses: {
    202: {
      description: "Enqueued (with wait: not finished within the wait)",
      headers: { Location: { schema: { type: "string" }, description: "/tick/{id}" } },
      content: { "application/json": { schema: TickRecord } },
    },
    200: { description: "With wait: the finished tick (succeeded or failed)", content: { "application/json": { schema: TickRecord } } },
    400: errorResponse("Bad flag or as_of"),
    ...authResponses,
    ...storageFullResponses,
  },
});

const getRoute = createRoute({
  method: "get",
  path: "/tick/{id}",
  operationId: "getTick",
  tags: ["ticks"],
  summary: "A tick's record",
  security: [{ bearer: [] }],
  request: { params: z.object({ id: z.string().openapi({ example: "9f1c2a7e4b3d" }) }) },
  responses: {
    200: { description: "The tick record", content: { "application/json": { schema: TickRecord } } },
    404: errorResponse("No such tick"),
    ...authResponses,
  },
});

function parseFlag(name: string, v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  const s = v.trim().toLowerCase();
  if (s === "" || s === "1" || s === "true" || s === "yes") return true;
  if (s === "0" || s === "false" || s === "no") return false;
  throw new HttpError(400, "invalid_request", `${name}: expected a flag (1/true/yes or 0/false/no), got ${JSON.stringify(v)}`, [
    { path: name, message: "not a flag" },
  ]);
}

export function registerTick(app: RouterApp): void {
  app.openapi(enqueueRoute, async (c) => {
    const q = c.req.valid("query");
    const body = ((c.req.header("content-type") ?? "").includes("json") ? c.req.valid("json") : undefined) ?? {};
    const dry_run = body.dry_run ?? parseFlag("dry_run", q.dry_run);
    const no_ai = body.no_ai ?? parseFlag("no_ai", q.no_ai);
    const wait = body.wait ?? parseFlag("wait", q.wait) ?? false;
    let record = await c.env.deps.ticks.enqueue({ dry_run, no_ai, as_of: body.as_of ? new Date(body.as_of) : undefined, trigger: "api" });
    if (wait) record = (await c.env.deps.ticks.wait(record.tick_id)) ?? record;
    c.header("Location", `/tick/${record.tick_id}`);
    return wait && tickFinished(record) ? c.json(record, 200) : c.json(record, 202);
  });
  app.openapi(getRoute, async (c) => {
    const { id } = c.req.valid("param");
    const record = await c.env.deps.ticks.get(id);
    if (!record) throw new HttpError(404, "tick_not_found", `no tick ${id}`);
    return c.json(record, 200);
  });
}
