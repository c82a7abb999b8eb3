// The one declaration of brief's input: POST /brief's body, the MCP tool's arguments and the
// client's input.
import { z } from "@hono/zod-openapi";
import { QUERY_MAX_CHARS } from "../search/limits";

export const BriefRequest = z
  .object({
    query: z.string().min(1).max(QUERY_MAX_CHARS),
    stream: z.boolean().default(false).openapi({ description: "answer as text/event-stream: hits, delta…, done" }),
  })
  .openapi("BriefRequest");
export type BriefRequest = z.infer<typeof BriefRequest>;
