// POST /brief: top hits plus a cited digest (model-written, or extractive without a model);
// `stream: true` answers with server-sent events instead.
import { createRoute, z } from "@hono/zod-openapi";
import { errorBody, errorResponse, HttpError } from "../../common/errors";
import { keepOpen } from "../../common/http/edge";
import { sseResponse, sseStream } from "../../common/http/sse";
import { httpErrorOf } from "../../common/http-error";
import type { RouterApp } from "../app-types";
import { brief, briefStream } from "../brief/brief";
import { BriefRequest } from "../brief/schema";
import { authResponses, SearchHit, SearchMode } from "./schemas";

const Citation = z.object({ n: z.number().int(), path: z.string(), title: z.string() }).openapi("Citation");

export const BriefResponse = z
  .object({
    query: z.string(),
    synthesis: z.enum(["model", "extractive"]),
    model: z.string().optional(),
    text: z.string().openapi({ description: "the digest; [n] cites citations[n-1]" }),
    citations: z.array(Citation),
    hits: z.array(SearchHit),
    mode: SearchMode,
  })
  .openapi("BriefResponse");

const route = createRoute({
  method: "post",
  path: "/brief",
  operationId: "createBrief",
  tags: ["brief"],
  summary: "Search plus a cited synthesis",
  security: [{ bearer: [] }],
  request: { body: { required: true, content: { "application/json": { schema: BriefRequest } } } },
  responses: {
    200: {
      description:
        "The brief. With stream=true: SSE events `hits` {hits, citations, mode}, `delta` {text} (repeated), then `done` {synthesis, model}; a failure mid-stream is an `error` event with the error body.",
      content: { "application/json": { schema: BriefResponse }, "text/event-stream": { schema: z.string() } },
    },
    400: errorResponse("Bad request"),
    502: errorResponse("The language model gateway failed (its status is in the message)"),
    504: errorResponse("The language model gateway timed out"),
    ...authResponses,
  },
});

export const registerBrief = (app: RouterApp) =>
  app.openapi(route, async (c) => {
    const { query, stream } = c.req.valid("json");
    if (!stream) return c.json(await brief(c.env.deps.search, query), 200);
    const started = await briefStream(c.env.deps.search, query);
    keepOpen(c);
    const body = sseStream({
      run: async (sse) => {
        sse.event({ event: "hits", data: { hits: started.hits, citations: started.citations, mode: started.mode } });
        try {
          for await (const text of started.deltas) {
            if (sse.closed) break;
            sse.event({ event: "delta", data: { text } });
          }
          sse.event({ event: "done", data: { synthesis: started.synthesis, model: started.model } });
        } catch (err) {
          const e = httpErrorOf(err) ?? new HttpError(502, "gateway_error", (err as Error).message);
          sse.event({ event: "error", data: errorBody(e.code, e.message) });
        }
      },
    });
    return sseResponse(body) as never;
  });
