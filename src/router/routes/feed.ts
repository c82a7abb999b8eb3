// GET /feed: the session-start injection payload.
import { createRoute, z } from "@hono/zod-openapi";
import { errorResponse } from "../../common/errors";
import { etagMatches, etagOf } from "../../common/http/etag";
import type { RouterApp } from "../app-types";
import { buildFeed } from "../feed/feed";
import { FeedRequest } from "../feed/schema";
import { authResponses } from "./schemas";

const HotArc = z.object({ id: z.string(), heat: z.number(), region: z.string(), status: z.string(), title: z.string(), summary: z.string() }).openapi("HotArc");

const FeedEntry = z
  .object({
    id: z.string(),
    title: z.string(),
    priority: z.number().openapi({ description: "1 comes first" }),
    ttl: z.number().openapi({ description: "seconds from created; 0 never expires" }),
    severity: z.string(),
    created: z.string().openapi({ format: "date-time" }),
    expires_at: z.string().nullable(),
    path: z.string(),
    body: z.string(),
    kind: z.string().optional().openapi({ description: "tick-written entries: signals, arcs, lessons, decisions" }),
  })
  .openapi("FeedEntry");

const Lesson = z.object({ ts: z.string(), source: z.string(), session_id: z.string().nullable(), text: z.string(), path: z.string() }).openapi("FeedLesson");

const Signal = z
  .object({ path: z.string(), severity: z.string(), source: z.string(), title: z.string(), created: z.string(), last_seen: z.string(), count: z.number() })
  .openapi("FeedSignal");

export const Feed = z
  .object({
    hot_arcs: z.array(HotArc).openapi({ description: "rows of hot-arcs.md (hot and warm arcs, hottest first)" }),
    inject_blocks: z
      .array(z.string())
      .openapi({ description: "`## title\\n\\nbody` per live entry by priority, within max_chars (the last may be cut, ending in …)" }),
    entries: z.array(FeedEntry).openapi({ description: "live (unexpired) feed entries from brain-feed/, by priority" }),
    lessons: z.array(Lesson).openapi({ description: "the 10 newest lessons from the lesson logs" }),
    signals: z.array(Signal).openapi({ description: "live signals now (open; within SIGNAL_TTL_HOURS unless critical), most urgent first, at most 20" }),
    generated_at: z.string().openapi({ format: "date-time" }),
    hash: z.string().openapi({ description: "changes when anything but generated_at changes; also the ETag" }),
    entry_count: z.number().int(),
    invalid: z.array(z.object({ path: z.string(), why: z.string() })).openapi({ description: "files in brain-feed/ that do not parse as entries" }),
    max_chars: z.number().int(),
    truncated: z.boolean().openapi({ description: "true when entries did not all fit in max_chars" }),
  })
  .openapi("Feed");
export type Feed = z.infer<typeof Feed>;

const route = createRoute({
  method: "get",
  path: "/feed",
  operationId: "getFeed",
  tags: ["feed"],
  summary: "Session-start injection payload",
  security: [{ bearer: [] }],
  request: {
    query: FeedRequest,
    headers: z.object({ "if-none-match": z.string().optional().openapi({ description: "a previous hash (ETag): 304 when unchanged" }) }),
  },
  responses: {
    200: {
      description: "The feed",
      headers: { ETag: { schema: { type: "string" }, description: '"<hash>"' } },
      content: { "application/json": { schema: Feed } },
    },
    304: { description: "Unchanged since the If-None-Match hash" },
    400: errorResponse("Bad max_chars"),
    ...authResponses,
  },
});

export const registerFeed = (app: RouterApp) =>
  app.openapi(route, async (c) => {
    const feed = await buildFeed(c.env.deps.feed, c.req.valid("query"));
    c.header("ETag", etagOf(feed.hash));
    if (etagMatches(c.req.valid("header")["if-none-match"], feed.hash)) return c.body(null, 304);
    return c.json(feed, 200);
  });
